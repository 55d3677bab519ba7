"""The archived timeline's completed instants with their metadata, whichever the table's layout: the
`HoodieArchivedMetaEntry` records of layout 1's archive files, or the rows of layout 2's LSM history
(table versions 8 and 9), whose `metadata` column holds the completed state file's bytes
(LSMTimelineWriter, apache/hudi @07ba0d62): commit metadata as the layout's serde reads it, Avro
clean and rollback metadata. What orphan repair's ownership rule and `timeline --file` read.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

from hudi_assets.avro import deserialize_metadata
from hudi_assets.timeline.archived import ArchivedTimeline
from hudi_assets.timeline.history import LSMHistory
from hudi_assets.timeline.instant import CLEAN, ROLLBACK, Instant, State
from hudi_assets.timeline.timeline import COMMIT_ACTIONS

if TYPE_CHECKING:
    from hudi_assets.table import HoodieTable
    from hudi_assets.timeline.layout import TimelineLayout

_COMPLETED_SCHEMA = {CLEAN: "HoodieCleanMetadata", ROLLBACK: "HoodieRollbackMetadata"}


def archived_completed(table: HoodieTable, decode: Collection[str]
                       ) -> Iterator[tuple[Instant, dict[str, Any] | None]]:
    """Each archived completed instant with its metadata as a record when its action is in `decode`
    (commit metadata in Avro's field names: `partitionToWriteStats`, ...; None for other actions and
    when none was archived). Raises `CorruptFileError` for an unreadable archive file or history
    row."""
    layout = table.timeline_layout
    if layout.version == 1:
        for entry in ArchivedTimeline.load(table).entries():
            if entry.instant.is_completed:
                yield entry.instant, entry.payload if entry.instant.action in decode else None
        return
    history = LSMHistory(table.storage, layout.paths.history_path(table.config))
    rows = history.read(columns=["instantTime", "action", "metadata"])
    where = table.storage.uri(history.folder)
    for t, action, data in zip(*(rows.column(c).to_pylist() for c in rows.column_names), strict=True):
        instant = Instant(t, action, State.COMPLETED)
        yield instant, _decode(layout, instant, data, f"{where} ({t}.{action})") if action in decode else None


def _decode(layout: TimelineLayout, instant: Instant, data: bytes | None, where: str
            ) -> dict[str, Any] | None:
    if not data:
        return None
    if instant.action in COMMIT_ACTIONS:
        return layout.active_timeline.commit_metadata_serde.deserialize(data, where).to_object()
    schema = _COMPLETED_SCHEMA.get(instant.action)
    return deserialize_metadata(data, schema, where) if schema else None
