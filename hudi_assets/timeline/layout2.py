"""Timeline layout 2 (table versions 8 and 9, Hudi 1.x), read-only: `.hoodie/timeline/`.

Pending states keep layout 1's names (`T.action.requested`, `T.action.inflight`, a commit's bare
`T.inflight`); a completed instant is `<requested>_<completed>.<action>`, so the completion time is
in the name. A pending clustering is `T.clustering.*` and completes as a replacecommit (read as a
replacecommit throughout, so a name generated back from it says `replacecommit`). Commit metadata is
Avro (JSON only for instants written before an upgrade). The active timeline is read; writing it
and reading the LSM-tree history (`hoodie.timeline.history.path`) are not implemented yet.
Hudi: InstantFileNameGeneratorV2, InstantGeneratorV2, CommitMetadataSerDeV2, TimelinePathProviderV2
(1.0.x).
"""

from __future__ import annotations

import re
from typing import ClassVar

from hudi_assets.exceptions import CorruptFileError, UnsupportedTableError
from hudi_assets.storage import FileStatus, Storage
from hudi_assets.table_config import METAFOLDER, TableConfig
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.instant import ACTIONS, COMMIT, REPLACE_COMMIT, Instant, State
from hudi_assets.timeline.timeline import ActiveTimeline, Timeline

CLUSTERING = "clustering"

_NAME = re.compile(r"^([0-9]+)(?:_([0-9]+))?\.([A-Za-z]+)(?:\.(requested|inflight))?$")


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


class InstantFileNameParserV2:
    def parse(self, name: str) -> tuple[Instant, str | None] | None:
        return parse_layout2_name(name)


class InstantFileNameGeneratorV2:
    """Pending states as in layout 1; a completed instant carries its completion time."""

    def file_name(self, instant: Instant, completion_time: str | None = None) -> str:
        if not instant.is_completed:
            return instant.file_name
        if completion_time is None:
            raise ValueError(f"{instant}: a completed layout-2 instant is named by its completion time")
        return f"{instant.timestamp}_{completion_time}.{instant.with_state(State.COMPLETED).action}"


class CommitMetadataSerDeV2:
    """Avro HoodieCommitMetadata / HoodieReplaceCommitMetadata (JSON for pre-upgrade instants)."""

    def deserialize(self, data: bytes, path: str) -> CommitMetadata:
        return CommitMetadata.from_bytes(data, path)

    def serialize(self, metadata: CommitMetadata) -> bytes:
        raise UnsupportedTableError("commit metadata of timeline layout 2 (Hudi 1.x) is not written yet")


class TimelinePathProviderV2:
    """`.hoodie/<hoodie.timeline.path>` and its `<hoodie.timeline.history.path>` below it."""

    def timeline_path(self, config: TableConfig) -> str:
        return f"{METAFOLDER}/{config.get('hoodie.timeline.path') or 'timeline'}"

    def history_path(self, config: TableConfig) -> str:
        return f"{self.timeline_path(config)}/{config.get('hoodie.timeline.history.path') or 'history'}"


class ArchivedTimelineLoaderV2:
    """The LSM-tree history; refused until it is read (a silently empty history would mislead)."""

    def load_instants(self, storage: Storage, folder: str) -> Timeline:
        raise UnsupportedTableError(
            f"{storage.uri(folder)}: the archived (LSM) timeline of Hudi 1.x tables is not read yet")


class LayoutTwoTimeline(ActiveTimeline):
    """The active timeline of a layout-2 table; `completion_times` maps requested to completion time."""

    commit_metadata_serde: ClassVar[CommitMetadataSerDeV2] = CommitMetadataSerDeV2()

    def __init__(self, storage: Storage, state_files: dict[Instant, FileStatus], folder: str,
                 completion_times: dict[str, str]):
        super().__init__(storage, state_files, folder)
        self.completion_times = completion_times

    @classmethod
    def load(cls, storage: Storage, folder: str) -> LayoutTwoTimeline:
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
        return cls(storage, state_files, folder, completion_times)

    def state_file_path(self, instant: Instant) -> str:
        status = self.state_files.get(instant)
        if status is None:
            raise FileNotFoundError(f"{self.storage.uri(self.folder)}: no state file of {instant}")
        return status.path
