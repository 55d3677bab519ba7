"""Which metadata-table log blocks count: `HoodieTableMetadataUtil.getValidInstantTimestamps` (0.15).

The metadata table is written before the data table commits, so a block counts only when its
instant completed on the data table, or is one of the metadata table's own operations (its
initialization, async indexing, compaction, clean, rollback, restore), or was rolled back by a
completed data-table rollback/restore (those blocks are undone by the rollback's own blocks).
"""

from __future__ import annotations

from hudi_assets.timeline.instant import DELTA_COMMIT, RESTORE, ROLLBACK, Instant
from hudi_assets.timeline.metadata import completed_metadata, requested_plan
from hudi_assets.timeline.timeline import ActiveTimeline, Timeline

SOLO_COMMIT_TIMESTAMP = "00000000000000"
MILLIS_INSTANT_ID_LENGTH = 17
# HoodieTableMetadataUtil.OperationSuffix: compaction, clean, restore, indexer, log compaction, rollback.
_OPERATION_SUFFIXES = frozenset({"001", "002", "003", "004", "005", "006"})
_PARTITION_INITIALIZATION_TIME_SUFFIX = "010"


def is_valid_metadata_instant(timestamp: str, action: str) -> bool:
    """`isValidInstant`: a metadata deltacommit whose time is a data instant plus an operation suffix
    or a partition-initialization suffix (010 and up)."""
    if action != DELTA_COMMIT or len(timestamp) != MILLIS_INSTANT_ID_LENGTH + 3:
        return False
    suffix = timestamp[-3:]
    return suffix in _OPERATION_SUFFIXES or suffix >= _PARTITION_INITIALIZATION_TIME_SUFFIX


def valid_instant_timestamps(data: ActiveTimeline, metadata: Timeline) -> frozenset[str]:
    """Instant times whose metadata-table log blocks are read (both timelines read once by the caller)."""
    valid = {i.timestamp for i in data.filter_completed()}
    completed_mdt = metadata.filter_completed()
    valid.update(i.timestamp for i in completed_mdt if is_valid_metadata_instant(i.timestamp, i.action))
    earliest = min(valid, default=SOLO_COMMIT_TIMESTAMP)
    for instant in data.filter_actions({ROLLBACK, RESTORE}).filter_completed():
        if instant.timestamp > earliest:
            valid.update(_rolled_back_commits(data, instant))
    valid.update(i.timestamp for i in completed_mdt.filter_actions({ROLLBACK, RESTORE}))
    valid.update(i.timestamp for i in completed_mdt.filter_actions({DELTA_COMMIT})
                 if i.timestamp.startswith(SOLO_COMMIT_TIMESTAMP))
    return frozenset(valid)


def _rolled_back_commits(timeline: ActiveTimeline, instant: Instant) -> list[str]:
    """The commits a completed rollback or restore undid (a rollback with an empty completed file
    names its one target in its plan, as Hudi falls back to)."""
    details = completed_metadata(timeline, instant)
    if instant.action == ROLLBACK:
        if details is not None:
            return list(details.get("commitsRollback") or [])
        plan = requested_plan(timeline, instant) or {}
        target = plan.get("instantToRollback") or {}
        return [target["commitTime"]] if target.get("commitTime") else []
    return [commit for rollbacks in ((details or {}).get("hoodieRestoreMetadata") or {}).values()
            for rollback in rollbacks or [] if rollback for commit in rollback.get("commitsRollback") or []]
