"""The table-version seam of the timeline: `TimelineLayout` and the factory that picks one per table.

What changes between Hudi 0.x (timeline layout 1, table versions 5/6) and 1.x (layout 2, versions
8/9) sits behind these small interfaces, as in Hudi 1.x's `TimelineLayout`: where the active and
archived timelines live, which `ActiveTimeline` class reads the folder (it names and parses the
layout's instant files and holds its commit-metadata serde) and how the archived timeline is
loaded. Code above asks the table's layout (resolved once, when the table is opened) and never the
version itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from hudi_assets.exceptions import UnsupportedTableError
from hudi_assets.storage import Storage
from hudi_assets.table_config import TableConfig
from hudi_assets.timeline import layout1, layout2
from hudi_assets.timeline.archived import ArchivedTimelineLoaderV1
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.timeline import ActiveTimeline, Timeline


class CommitMetadataSerDe(Protocol):
    def deserialize(self, data: bytes, path: str) -> CommitMetadata: ...

    def serialize(self, metadata: CommitMetadata) -> bytes: ...


class TimelinePathProvider(Protocol):
    def timeline_path(self, config: TableConfig) -> str:
        """The active timeline's folder, relative to the base path."""
        ...

    def history_path(self, config: TableConfig) -> str:
        """The archived timeline's folder, relative to the base path."""
        ...


class ArchivedTimelineLoader(Protocol):
    def load_instants(self, storage: Storage, folder: str) -> Timeline:
        """Archived instants, each in its highest archived state, in Hudi's order."""
        ...

    def count_instants(self, storage: Storage, folder: str) -> int:
        """How many instants `load_instants` gives, as cheaply as the layout allows."""
        ...


@dataclass(frozen=True)
class TimelineLayout:
    """One timeline layout version's implementations of the interfaces above."""

    version: int
    paths: TimelinePathProvider
    active_timeline: type[ActiveTimeline]
    archived_timeline: ArchivedTimelineLoader

    def load_active_timeline(self, storage: Storage, config: TableConfig) -> ActiveTimeline:
        return self.active_timeline.load(storage, self.paths.timeline_path(config), config)

    def load_archived_instants(self, storage: Storage, config: TableConfig) -> Timeline:
        return self.archived_timeline.load_instants(storage, self.paths.history_path(config))

    def count_archived_instants(self, storage: Storage, config: TableConfig) -> int:
        return self.archived_timeline.count_instants(storage, self.paths.history_path(config))


LAYOUT_1 = TimelineLayout(1, layout1.TimelinePathProviderV1(), ActiveTimeline, ArchivedTimelineLoaderV1())
LAYOUT_2 = TimelineLayout(2, layout2.TimelinePathProviderV2(), layout2.LayoutTwoTimeline,
                          layout2.ArchivedTimelineLoaderV2())
# Layout 0 (before Hudi 0.5.1) renamed state files in place; what is left of it reads as layout 1.
_LAYOUTS = {0: LAYOUT_1, 1: LAYOUT_1, 2: LAYOUT_2}


def timeline_layout(config: TableConfig) -> TimelineLayout:
    """The table's layout (`TableConfig.timeline_layout_version`)."""
    version = config.timeline_layout_version
    layout = _LAYOUTS.get(version)
    if layout is None:
        raise UnsupportedTableError(f"timeline layout version {version} is not supported")
    return layout


def load_active_timeline(storage: Storage, config: TableConfig) -> ActiveTimeline:
    """The active timeline of the table `storage` holds, in the layout its config names."""
    return timeline_layout(config).load_active_timeline(storage, config)
