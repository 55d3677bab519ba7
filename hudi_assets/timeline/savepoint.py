"""`Savepoint`: what a completed `.savepoint` file holds (HoodieSavepointMetadata), read and written;
the one reader of savepoints for the file-system view, the clean planner and the savepoint service."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hudi_assets.avro import serialize_metadata
from hudi_assets.java_collections import java_hashmap_order
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import SAVEPOINT, Instant
from hudi_assets.timeline.timeline import ActiveTimeline

SCHEMA = "HoodieSavepointMetadata"


@dataclass(frozen=True)
class Savepoint:
    """One savepoint: its instant (the savepointed commit's time), who made it, when (epoch
    milliseconds, as Hudi's `System.currentTimeMillis()`), why, and per partition the data files it
    keeps (base and log files of the latest file slices as of the instant)."""

    instant: str
    savepointed_by: str
    savepointed_at: int
    comments: str
    files: Mapping[str, tuple[str, ...]]

    @property
    def file_count(self) -> int:
        return sum(len(names) for names in self.files.values())

    def serialize(self) -> bytes:
        """The Avro container Hudi writes to the completed savepoint file (version 1; partitions in
        the order of the HashMap convertSavepointMetadata builds). Hudi 1.x writes the same record
        with the same schema text."""
        return serialize_metadata(SCHEMA, {
            "savepointedBy": self.savepointed_by,
            "savepointedAt": self.savepointed_at,
            "comments": self.comments,
            "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": list(self.files[p])}
                                  for p in java_hashmap_order(self.files)},
            "version": 1,
        })

    @classmethod
    def read(cls, timeline: ActiveTimeline, instant: Instant) -> Savepoint:
        """The completed savepoint `instant` (an empty file: a savepoint listing nothing)."""
        record = metadata.completed_metadata(timeline, instant) or {}
        files = {(meta.get("partitionPath") or key): tuple(meta.get("savepointDataFile") or ())
                 for key, meta in (record.get("partitionMetadata") or {}).items()}
        return cls(instant.timestamp, record.get("savepointedBy") or "", record.get("savepointedAt") or 0,
                   record.get("comments") or "", dict(sorted(files.items())))


def completed_savepoints(timeline: ActiveTimeline) -> list[Savepoint]:
    return [Savepoint.read(timeline, instant) for instant in timeline.savepoint_timeline()
            if instant.action == SAVEPOINT]
