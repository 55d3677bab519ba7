"""Timeline layout 2 (table versions 8 and 9, Hudi 1.x), read-only: `.hoodie/timeline/`.

Pending states keep layout 1's names (`T.action.requested`, `T.action.inflight`, a commit's bare
`T.inflight`); a completed instant
is `<requested>_<completed>.<action>`, so the completion time is in the name. A pending clustering is
`T.clustering.*` and completes as a replacecommit. Only the active timeline is read; Hudi 1.x's
LSM-tree archived timeline (`hoodie.timeline.history.path`) is not.
"""

from __future__ import annotations

import re

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.storage import FileStatus, Storage
from hudi_assets.table_config import TableConfig
from hudi_assets.timeline.instant import ACTIONS, COMMIT, REPLACE_COMMIT, Instant, State
from hudi_assets.timeline.timeline import METAFOLDER, ActiveTimeline

TIMELINE_LAYOUT_2 = 2
CLUSTERING = "clustering"

_NAME = re.compile(r"^([0-9]+)(?:_([0-9]+))?\.([A-Za-z]+)(?:\.(requested|inflight))?$")


def timeline_folder(config: TableConfig) -> str:
    """Where a table's active timeline lives: `.hoodie` (layout 0/1) or `.hoodie/<timeline path>`."""
    if config.timeline_layout_version < TIMELINE_LAYOUT_2:
        return METAFOLDER
    return f"{METAFOLDER}/{config.get('hoodie.timeline.path') or 'timeline'}"


def parse_layout2_name(name: str) -> tuple[Instant, str | None] | None:
    """(instant, completion time) of a layout-2 state file name; None when it is not one."""
    match = _NAME.match(name)
    if match is None:
        return None
    requested, completed, action, suffix = match.groups()
    if action == "inflight" and suffix is None and completed is None:
        return Instant(requested, COMMIT, State.INFLIGHT), None  # a commit's inflight, as in layout 1
    if action == CLUSTERING and suffix is not None:
        action = REPLACE_COMMIT
    if action not in ACTIONS:
        raise CorruptFileError(name, f"unknown instant action {action!r}")
    if suffix is None:
        if completed is None:
            raise CorruptFileError(name, "a completed instant's name lacks its completion time")
        return Instant(requested, action, State.COMPLETED), completed
    if completed is not None:
        raise CorruptFileError(name, f"a {suffix} instant's name carries a completion time")
    return Instant(requested, action, State.INFLIGHT if suffix == "inflight" else State.REQUESTED), None


class LayoutTwoTimeline(ActiveTimeline):
    """The active timeline of a layout-2 table; `completion_times` maps requested to completion time."""

    def __init__(self, storage: Storage, folder: str, state_files: dict[Instant, FileStatus],
                 completion_times: dict[str, str]):
        super().__init__(storage, state_files)
        self.folder = folder
        self.completion_times = completion_times

    @classmethod
    def load_folder(cls, storage: Storage, folder: str) -> LayoutTwoTimeline:
        state_files: dict[Instant, FileStatus] = {}
        completion_times: dict[str, str] = {}
        for status in storage.list(folder):
            if status.is_dir:
                continue
            parsed = parse_layout2_name(status.name)
            if parsed is None:
                continue
            instant, completed = parsed
            state_files[instant] = status
            if completed is not None:
                completion_times[instant.timestamp] = completed
        return cls(storage, folder, state_files, completion_times)

    def state_file_path(self, instant: Instant) -> str:
        status = self.state_files.get(instant)
        if status is None:
            raise FileNotFoundError(f"{self.storage.uri(self.folder)}: no state file of {instant}")
        return status.path


def load_active_timeline(storage: Storage, config: TableConfig) -> ActiveTimeline:
    """The active timeline in the table's layout: `ActiveTimeline` (0/1) or `LayoutTwoTimeline`."""
    folder = timeline_folder(config)
    if folder == METAFOLDER:
        return ActiveTimeline.load(storage)
    return LayoutTwoTimeline.load_folder(storage, folder)
