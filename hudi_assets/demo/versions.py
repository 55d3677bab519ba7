"""What a demo table's writer does differently per table version: Hudi 0.14/0.15 (version 6, timeline
layout 1) or Hudi 1.1 (version 9, timeline layout 2).

Version 9, as the Java-written v9 tables of ../shared show it: state files under `.hoodie/timeline/`,
a completed one named `<requested>_<completion>.<action>`; commit metadata (inflight and completed)
and plans in Avro with 1.x's schemas; every deltacommit writes a new log file named by its own
instant (version 1) with a CREATE marker; `hoodie.properties` with the 1.x keys (ordering fields,
merge mode, key generator type, timeline paths). The generator asks its `TableFormat` and never the
version itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hudi_assets.avro import serialize_metadata
from hudi_assets.avro.container import serialize_1x
from hudi_assets.exceptions import HudiInputError
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.instant import Instant
from hudi_assets.timeline.layout2 import CommitMetadataSerDeV2, layout2_file_name

_SERDE_V2 = CommitMetadataSerDeV2()
# Hudi 1.x's keys that replace or join 0.x's (EightToNineUpgradeHandler; the v9 tables of ../shared).
_V9_PROPERTIES = {
    "hoodie.timeline.layout.version": "2",
    "hoodie.timeline.path": "timeline",
    "hoodie.timeline.history.path": "history",
    "hoodie.table.format": "native",
    "hoodie.table.initial.version": "9",
    "hoodie.table.keygenerator.type": "SIMPLE",
    "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
    "hoodie.table.version": "9",
}


@dataclass(frozen=True)
class TableFormat:
    version: int
    timeline_folder: str
    log_file_per_commit: bool  # 1.x: a new log file per deltacommit, named by it; 0.x appends to the slice

    @property
    def layout2(self) -> bool:
        return self.version >= 8

    def state_file(self, instant: Instant, completion_time: str) -> str:
        """Where a state file of `instant` goes (`completion_time`: of a completed layout-2 instant)."""
        if self.layout2 and instant.is_completed:
            return f"{self.timeline_folder}/{layout2_file_name(instant, completion_time)}"
        return f"{self.timeline_folder}/{instant.file_name}"

    def commit_metadata(self, metadata: CommitMetadata) -> bytes:
        return _SERDE_V2.serialize(metadata) if self.layout2 else metadata.to_json()

    def plan(self, schema_name: str, record: dict[str, Any]) -> bytes:
        return serialize_1x(schema_name, record) if self.layout2 else serialize_metadata(schema_name, record)

    def properties(self, props: Mapping[str, str]) -> dict[str, str]:
        """The table's `hoodie.properties` from version 6's keys."""
        if not self.layout2:
            return dict(props)
        ordering = props["hoodie.table.precombine.field"]
        kept = {k: v for k, v in props.items() if k not in ("hoodie.table.precombine.field",
                                                             "hoodie.table.keygenerator.class",
                                                             "hoodie.compaction.payload.class",
                                                             "hoodie.compaction.record.merger.strategy")}
        return {**kept, **_V9_PROPERTIES, "hoodie.table.ordering.fields": ordering}


FORMATS = {6: TableFormat(6, ".hoodie", False), 9: TableFormat(9, ".hoodie/timeline", True)}


def table_format(version: int) -> TableFormat:
    found = FORMATS.get(version)
    if found is None:
        raise HudiInputError(f"demo tables are written at table version 6 or 9, not {version}")
    return found
