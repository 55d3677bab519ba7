"""Reading an instant's metadata: commits as the timeline's layout encodes them, Avro container files
for everything else.

Which file holds what follows Hudi's TimelineMetadataUtils: a clean's plan lives in its requested
(and inflight) file and its result in the completed file; compaction and clustering plans live in
the requested file. Empty files are "no metadata" rather than an error, as in Hudi.
"""

from __future__ import annotations

from typing import Any

from hudi_assets.avro import deserialize_metadata
from hudi_assets.avro.container import MAGIC as AVRO_MAGIC
from hudi_assets.timeline.commit_metadata import CommitMetadata, json_written_paths
from hudi_assets.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
)
from hudi_assets.timeline.timeline import ActiveTimeline

_COMPLETED_SCHEMA = {
    CLEAN: "HoodieCleanMetadata",
    ROLLBACK: "HoodieRollbackMetadata",
    SAVEPOINT: "HoodieSavepointMetadata",
    RESTORE: "HoodieRestoreMetadata",
}
_REQUESTED_SCHEMA = {
    CLEAN: "HoodieCleanerPlan",
    ROLLBACK: "HoodieRollbackPlan",
    RESTORE: "HoodieRestorePlan",
    COMPACTION: "HoodieCompactionPlan",
    LOG_COMPACTION: "HoodieCompactionPlan",
    REPLACE_COMMIT: "HoodieRequestedReplaceMetadata",
    CLUSTERING: "HoodieRequestedReplaceMetadata",
}


def _path(timeline: ActiveTimeline, instant: Instant) -> str:
    return timeline.storage.uri(timeline.state_file_path(instant))


def _schema(schemas: dict[str, str], instant: Instant, what: str) -> str:
    """The schema of an action's state file; asking for one an action does not have is a bug of ours."""
    if instant.action not in schemas:
        raise ValueError(f"{instant.file_name}: a {instant.action} instant has no {what}")
    return schemas[instant.action]


def _commit_details(timeline: ActiveTimeline, instant: Instant) -> tuple[bytes, str]:
    if instant.action not in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING):
        raise ValueError(f"{instant.file_name}: a {instant.action} instant has no commit metadata")
    return timeline.read_details(instant), _path(timeline, instant)


def commit_metadata(timeline: ActiveTimeline, instant: Instant) -> CommitMetadata:
    """Commit metadata of a commit/deltacommit/replacecommit state file (empty file: empty metadata)."""
    data, path = _commit_details(timeline, instant)
    return timeline.commit_metadata_serde.deserialize(data, path)


def written_paths(timeline: ActiveTimeline, instant: Instant) -> list[str]:
    """`commit_metadata(timeline, instant).written_paths`, without a `WriteStat` per file when the
    file is JSON: copying every stat was a third of reading commits that list a million files."""
    data, path = _commit_details(timeline, instant)
    if data.startswith(AVRO_MAGIC):
        return timeline.commit_metadata_serde.deserialize(data, path).written_paths
    return json_written_paths(data, path)


def avro_metadata(timeline: ActiveTimeline, instant: Instant, schema_name: str,
                  allow_empty: bool = True) -> dict[str, Any] | None:
    """Decode an Avro state file with our schema; None for an empty file, or with `allow_empty`
    False a `CorruptFileError`, where Hudi decodes the bytes without that check."""
    data = timeline.read_details(instant)
    if not data and allow_empty:
        return None
    return deserialize_metadata(data, schema_name, _path(timeline, instant))


def completed_metadata(timeline: ActiveTimeline, instant: Instant) -> dict[str, Any] | None:
    """Avro metadata of a completed clean, rollback, savepoint or restore."""
    schema = _schema(_COMPLETED_SCHEMA, instant, "completed Avro metadata")
    return avro_metadata(timeline, instant.with_state(State.COMPLETED), schema)


def requested_plan(timeline: ActiveTimeline, instant: Instant,
                   allow_empty: bool = True) -> dict[str, Any] | None:
    """The plan in an instant's requested file (clean, rollback, restore, compaction, replace);
    `allow_empty` as in `avro_metadata`."""
    requested = Instant(instant.timestamp, instant.action, State.REQUESTED)
    return avro_metadata(timeline, requested, _schema(_REQUESTED_SCHEMA, instant, "requested plan"),
                         allow_empty)
