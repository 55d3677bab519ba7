"""State file -> `HoodieArchivedMetaEntry` (Hudi 0.14/0.15 MetadataConversionUtils.createMetaWrapper).

Commit JSON is converted as Jackson's `convertValue` into the Avro classes does it: only the fields of
the Avro records survive, numeric write-stat fields that are Java primitives become 0 when absent,
`operationType` is copied (forced `COMPACT` for a compaction commit), `extraMetadata["ROLLING_STAT"]`
is set to "". A file that cannot be decoded but is empty gives an entry without payload, as in Hudi.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hudi_assets.avro import deserialize_metadata
from hudi_assets.clean.plan import CleanerPlan
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
)
from hudi_assets.timeline.timeline import ActiveTimeline

ROLLING_STAT = "ROLLING_STAT"
_ARCHIVABLE = (CLEAN, COMMIT, DELTA_COMMIT, REPLACE_COMMIT, ROLLBACK, SAVEPOINT, COMPACTION, LOG_COMPACTION)
# Avro HoodieWriteStat fields, and those that are primitive `long`s in Java's HoodieWriteStat
# (absent in the JSON -> 0 after Jackson's round trip; `totalLogFiles` has no Java field -> null).


class ArchiveConversionError(CorruptFileError):
    """A state file of an instant to archive cannot be converted."""


def state_transition_time(mtime_ms: int) -> str:
    """The state file's modification time as `yyyyMMddHHmmssSSS` in the local zone (HoodieInstant)."""
    moment = datetime.fromtimestamp(mtime_ms / 1000)
    return moment.strftime("%Y%m%d%H%M%S") + f"{mtime_ms % 1000:03d}"


def _write_stat(stat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("fileId", "path", "prevCommit"):
        out[key] = _str(stat.get(key))
    for key in ("numWrites", "numDeletes", "numUpdateWrites", "totalWriteBytes", "totalWriteErrors"):
        out[key] = _long(stat.get(key))
    out["partitionPath"] = _str(stat.get("partitionPath"))
    out["totalLogRecords"] = _long(stat.get("totalLogRecords"))
    out["totalLogFiles"] = None
    for key in ("totalUpdatedRecordsCompacted", "numInserts", "totalLogBlocks", "totalCorruptLogBlock",
                "totalRollbackBlocks", "fileSizeInBytes"):
        out[key] = _long(stat.get(key))
    return out


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _long(value: Any) -> int:
    return 0 if value is None else int(value)


def convert_commit_metadata(obj: dict[str, Any], replace: bool = False) -> dict[str, Any]:
    """Commit JSON object -> Avro HoodieCommitMetadata (or HoodieReplaceCommitMetadata) record."""
    stats = obj.get("partitionToWriteStats") or {}
    extra = {str(k): (None if v is None else str(v)) for k, v in (obj.get("extraMetadata") or {}).items()}
    extra[ROLLING_STAT] = ""
    operation = obj.get("operationType", "UNKNOWN")
    if not replace and obj.get("compacted"):
        operation = "COMPACT"
    record: dict[str, Any] = {
        "partitionToWriteStats": {p: [_write_stat(s) for s in (items or [])] for p, items in stats.items()},
        "extraMetadata": extra,
        "version": None,
        "operationType": operation,
    }
    if replace:
        replaced = obj.get("partitionToReplaceFileIds") or {}
        record["partitionToReplaceFileIds"] = {p: list(ids or []) for p, ids in replaced.items()}
    return record


def _commit_object(data: bytes, path: str) -> dict[str, Any] | None:
    """The JSON object of a commit file; None where Hudi finds no metadata (empty, operation UNKNOWN)."""
    if not data.strip():
        return None
    parsed = CommitMetadata.from_json(data, path)  # validates and raises CorruptFileError
    return None if parsed.operation_type == "UNKNOWN" else parsed.to_object()


def to_archived_entry(timeline: ActiveTimeline, instant: Instant) -> dict[str, Any]:
    """The HoodieArchivedMetaEntry record of one state file of the active timeline."""
    status = timeline.state_files[instant]
    path = timeline.storage.uri(timeline.state_file_path(instant))
    if instant.action not in _ARCHIVABLE:
        raise ArchiveConversionError(path, f"{instant.action} instants are not archivable")
    action = COMMIT if instant.action == COMPACTION and instant.is_completed else instant.action
    record: dict[str, Any] = {
        "commitTime": instant.timestamp, "actionType": action, "actionState": instant.state.name,
        "version": None, "stateTransitionTime": state_transition_time(status.mtime_ms),
    }
    data = timeline.read_details(instant)
    try:
        record.update(_payload(timeline, instant, data, path))
    except CorruptFileError as exc:
        if data:
            raise ArchiveConversionError(path, exc.problem) from exc
        # An empty state file (a crash between create and write): an entry without payload.
    return record


def _payload(timeline: ActiveTimeline, instant: Instant, data: bytes, path: str) -> dict[str, Any]:
    action, state = instant.action, instant.state
    if action == CLEAN:
        if state is State.COMPLETED:
            return {"hoodieCleanMetadata": deserialize_metadata(data, "HoodieCleanMetadata", path)}
        # Hudi archives the plan upgraded to version 2 (CleanerUtils.getCleanerPlan).
        plan = CleanerPlan.deserialize(data, path, timeline.storage.base_uri)
        return {"hoodieCleanerPlan": plan.to_record()}
    if action in (COMMIT, DELTA_COMMIT):
        obj = _commit_object(data, path)
        return {} if obj is None else {"hoodieCommitMetadata": convert_commit_metadata(obj)}
    if action == REPLACE_COMMIT:
        if state is State.COMPLETED:
            obj = _commit_object(data, path)
            return {} if obj is None else {"hoodieReplaceCommitMetadata": convert_commit_metadata(obj, True)}
        if state is State.INFLIGHT:
            if not data:
                return {}
            obj = CommitMetadata.from_json(data, path).to_object()
            return {"HoodieInflightReplaceMetadata": convert_commit_metadata(obj)}
        if not data:
            return {}
        return {"hoodieRequestedReplaceMetadata":
                deserialize_metadata(data, "HoodieRequestedReplaceMetadata", path)}
    if action == ROLLBACK:
        if state is State.COMPLETED:
            return {"hoodieRollbackMetadata": deserialize_metadata(data, "HoodieRollbackMetadata", path)}
        return {}
    if action == SAVEPOINT:
        return {"hoodieSavePointMetadata": deserialize_metadata(data, "HoodieSavepointMetadata", path)}
    # compaction / logcompaction: the plan of the requested file, read by instant time.
    requested = Instant(instant.timestamp, action, State.REQUESTED)
    plan_data = (data if state is State.REQUESTED
                 else timeline.storage.read(timeline.state_file_path(requested)))
    return {"hoodieCompactionPlan": deserialize_metadata(plan_data, "HoodieCompactionPlan", path)}
