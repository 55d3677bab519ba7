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
from hudi_assets.table_config import TableConfig
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.instant import Instant
from hudi_assets.timeline.layout import TimelineLayout, timeline_layout

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
    """A table version's writer: the timeline layout its config picks, and what else 1.x changes."""

    config: TableConfig  # the version's own keys: its timeline layout follows from them

    @property
    def hudi_1x(self) -> bool:
        return self.config.is_hudi_1x

    @property
    def layout(self) -> TimelineLayout:
        return timeline_layout(self.config)

    @property
    def timeline_folder(self) -> str:
        return self.layout.paths.timeline_path(self.config)

    @property
    def log_file_per_commit(self) -> bool:
        """1.x: a new log file per deltacommit, named by it; 0.x appends to the slice's log."""
        return self.hudi_1x

    def state_file(self, instant: Instant, completion_time: str) -> str:
        """Where a state file of `instant` goes (`completion_time`: when a completed one completed)."""
        name = self.layout.active_timeline.state_file_name(instant, completion_time)
        return f"{self.timeline_folder}/{name}"

    def commit_metadata(self, metadata: CommitMetadata) -> bytes:
        return self.layout.active_timeline.commit_metadata_serde.serialize(metadata)

    def plan(self, schema_name: str, record: dict[str, Any]) -> bytes:
        return serialize_1x(schema_name, record) if self.hudi_1x else serialize_metadata(schema_name, record)

    def properties(self, props: Mapping[str, str]) -> dict[str, str]:
        """The table's `hoodie.properties` from version 6's keys."""
        if not self.hudi_1x:
            return dict(props)
        ordering = props["hoodie.table.precombine.field"]
        kept = {k: v for k, v in props.items() if k not in ("hoodie.table.precombine.field",
                                                             "hoodie.table.keygenerator.class",
                                                             "hoodie.compaction.payload.class",
                                                             "hoodie.compaction.record.merger.strategy")}
        return {**kept, **self.config.props, "hoodie.table.ordering.fields": ordering}


FORMATS = {6: TableFormat(TableConfig({"hoodie.table.version": "6"})),
           9: TableFormat(TableConfig(_V9_PROPERTIES))}


def table_format(version: int) -> TableFormat:
    found = FORMATS.get(version)
    if found is None:
        raise HudiInputError(f"demo tables are written at table version 6 or 9, not {version}")
    return found
