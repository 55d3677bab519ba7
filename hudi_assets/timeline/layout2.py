"""Timeline layout 2 (table versions 8 and 9, Hudi 1.x): `.hoodie/timeline/`.

Pending states keep layout 1's names (`T.action.requested`, `T.action.inflight`, a commit's bare
`T.inflight`); a pending clustering is `T.clustering.*`. A completed instant is
`<requested>_<completed>.<action>` (a clustering completes as a replacecommit, a compaction as a
commit), so the completion time is in the name; a completed file without one is a "legacy" instant
left by an upgrade, whose completion time is its modification time. State files are immutable: each
transition writes a new file. Commit metadata is Avro (JSON only for legacy instants). The archived
timeline is the LSM-tree history (`history.py`). Hudi 1.x: InstantFileNameGeneratorV2
(`layout2_file_name`), InstantFileNameParserV2 (`parse_layout2_name`), InstantGeneratorV2
(apache/hudi @65562af4), ActiveTimelineV2 (@01af83ca), CommitMetadataSerDeV2,
TimelinePathProviderV2, SkewAdjustingTimeGenerator.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import ClassVar

from hudi_assets.avro.container import serialize_1x
from hudi_assets.exceptions import CorruptFileError, UnsupportedTableError
from hudi_assets.storage import FileStatus, Storage
from hudi_assets.table_config import METAFOLDER, TableConfig
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.history import LSMHistory
from hudi_assets.timeline.instant import ACTIONS, CLUSTERING, COMMIT, Instant, State
from hudi_assets.timeline.instant_time import new_instant_time, now_in_zone
from hudi_assets.timeline.timeline import ActiveTimeline, Timeline, first_per_requested_time

_NAME = re.compile(r"^([0-9]+)(?:_([0-9]+))?\.([A-Za-z]+)(?:\.(requested|inflight))?$")
LAYOUT_2_ACTIONS = frozenset(ACTIONS) | {CLUSTERING}


def parse_layout2_name(name: str) -> tuple[Instant, str | None] | None:
    """(instant, completion time) of a layout-2 state file name; a legacy completed name has no
    completion time (None); None when the name is not a state file's."""
    match = _NAME.match(name)
    if match is None:
        return None
    requested, completed, action, suffix = match.groups()
    if action == "inflight" and suffix is None and completed is None:
        return Instant(requested, COMMIT, State.INFLIGHT), None  # a commit's inflight, as in layout 1
    if action not in LAYOUT_2_ACTIONS:
        raise CorruptFileError(name, f"unknown instant action {action!r}")
    if suffix is None:
        if action == CLUSTERING or action in ("compaction", "logcompaction"):
            raise CorruptFileError(name, f"a {action} completes under another action's name")
        return Instant(requested, action, State.COMPLETED), completed
    if completed is not None:
        raise CorruptFileError(name, f"a {suffix} instant's name carries a completion time")
    return Instant(requested, action, State.INFLIGHT if suffix == "inflight" else State.REQUESTED), None


def layout2_file_name(instant: Instant, completion_time: str | None = None) -> str:
    """A pending state's name as in layout 1; a completed instant's carries its completion time (a
    legacy instant's bare name is only ever read, never written)."""
    if not instant.is_completed:
        return instant.file_name
    if completion_time is None:
        raise ValueError(f"{instant}: a completed layout-2 instant is named by its completion time")
    return f"{instant.timestamp}_{completion_time}.{instant.with_state(State.COMPLETED).action}"


class CommitMetadataSerDeV2:
    """Avro HoodieCommitMetadata / HoodieReplaceCommitMetadata (JSON for legacy instants)."""

    def deserialize(self, data: bytes, path: str) -> CommitMetadata:
        return CommitMetadata.from_bytes(data, path)

    def serialize(self, metadata: CommitMetadata) -> bytes:
        """Avro, with Hudi 1.x's schema text; a replace commit's record when it names replaced file
        groups."""
        name = "HoodieCommitMetadata" if metadata.partition_to_replace_file_ids is None else \
            "HoodieReplaceCommitMetadata"
        return serialize_1x(name, metadata.to_object())


class TimelinePathProviderV2:
    """`.hoodie/<hoodie.timeline.path>` and its `<hoodie.timeline.history.path>` below it."""

    def timeline_path(self, config: TableConfig) -> str:
        return f"{METAFOLDER}/{config.get('hoodie.timeline.path') or 'timeline'}"

    def history_path(self, config: TableConfig) -> str:
        return f"{self.timeline_path(config)}/{config.get('hoodie.timeline.history.path') or 'history'}"


class ArchivedTimelineLoaderV2:
    """The latest snapshot of the LSM-tree history, each instant with its completion time."""

    def load_instants(self, storage: Storage, folder: str) -> Timeline:
        return LSMHistory(storage, folder).timeline()

    def count_instants(self, storage: Storage, folder: str) -> int:
        return LSMHistory(storage, folder).instant_count()


def format_epoch_ms(epoch_ms: int, timezone: str) -> str:
    """Hudi's HoodieInstantTimeGenerator.formatDate of an epoch time: 17 digits in the table's zone."""
    moment = now_in_zone(timezone, datetime.fromtimestamp(epoch_ms / 1000, UTC))
    return f"{moment:%Y%m%d%H%M%S}{moment.microsecond // 1000:03d}"


def generate_completion_time(after: list[str], timezone: str, skew_ms: int,
                             clock: Callable[[], float] = time.time,
                             sleep: Callable[[float], None] = time.sleep) -> str:
    """A completion time as Hudi 1.x's SkewAdjustingTimeGenerator hands one out (the caller holds the
    table lock): the clock read, then a wait of the maximum expected clock skew, so that every other
    writer's clock has passed it; strictly after every time in `after` (monotonic) up to the same
    allowance ahead of the clock (`new_instant_time`)."""
    now = clock()
    sleep(skew_ms / 1000)
    return new_instant_time(after, timezone, datetime.fromtimestamp(now, UTC), skew_ms)


def _layout_1_leftovers(storage: Storage) -> list[str]:
    """Instant-shaped files directly in `.hoodie/`, which a layout-2 table must not have: a 0.x
    writer's, or an upgrade to table version 8 that stopped half way."""
    found = []
    for status in storage.list(METAFOLDER):
        if status.is_dir:
            continue
        try:
            if Instant.parse_file_name(status.name) is not None:
                found.append(status.name)
        except CorruptFileError:
            found.append(status.name)
    return found


class LayoutTwoTimeline(ActiveTimeline):
    """The active timeline of a layout-2 table. `finished` holds each completed instant's own
    completion time (a legacy instant's: its file's modification time), `completion_times` the one a
    requested time answers with, `legacy` the legacy instants' requested times."""

    commit_metadata_serde: ClassVar[CommitMetadataSerDeV2] = CommitMetadataSerDeV2()
    clean_inflight_holds_plan: ClassVar[bool] = False

    def __init__(self, storage: Storage, state_files: dict[Instant, FileStatus], folder: str,
                 finished: dict[Instant, str], *, legacy: frozenset[str] = frozenset(),
                 timezone: str = "LOCAL"):
        super().__init__(storage, state_files, folder)
        self.finished = finished
        # A savepoint, named by the time of the commit it keeps and completed later, never moves
        # that commit's completion time, whatever the listing's order.
        self.completion_times = first_per_requested_time((i.timestamp, finished[i]) for i in sorted(finished))
        self.legacy = legacy
        self.timezone = timezone

    @classmethod
    def load(cls, storage: Storage, folder: str, config: TableConfig | None = None) -> LayoutTwoTimeline:
        """Refuses a table whose `.hoodie/` still holds layout-1 instant files beside this folder."""
        timezone = config.timeline_timezone if config is not None else "LOCAL"
        if folder != METAFOLDER and (leftovers := _layout_1_leftovers(storage)):
            raise UnsupportedTableError(
                f"{storage.uri(METAFOLDER)}: holds layout-1 instant files ({', '.join(leftovers[:3])}"
                f"{', ...' if len(leftovers) > 3 else ''}) beside {folder}/: an unfinished upgrade to "
                "table version 8? Finish or roll back the upgrade with Hudi first")
        state_files: dict[Instant, FileStatus] = {}
        finished: dict[Instant, str] = {}
        legacy: set[str] = set()
        for status in storage.list(folder):
            if status.is_dir:
                continue
            parsed = parse_layout2_name(status.name)
            if parsed is None:
                continue
            instant, completed = parsed
            state_files[instant] = status
            if instant.is_completed:
                if completed is None:
                    legacy.add(instant.timestamp)
                    completed = format_epoch_ms(status.mtime_ms, timezone)
                finished[instant] = completed
        return cls(storage, state_files, folder, finished, legacy=frozenset(legacy), timezone=timezone)

    def completion_time(self, instant: Instant) -> str | None:
        return self.finished.get(instant)

    def state_file_path(self, instant: Instant) -> str:
        """The file of a state present on the timeline; a pending state's name where it is absent
        (to be written); a completed instant's name needs its completion time (`complete`)."""
        status = self.state_files.get(instant)
        if status is not None:
            return status.path
        if instant.is_completed:
            raise FileNotFoundError(f"{self.storage.uri(self.folder)}: no state file of {instant}")
        return f"{self.folder}/{instant.file_name}"

    @staticmethod
    def state_file_name(instant: Instant, completion_time: str) -> str:
        return layout2_file_name(instant, completion_time if instant.is_completed else None)

    def new_state_file_path(self, instant: Instant, completion_time: str | None = None) -> str:
        """A pending state as in layout 1; a completed one `<requested>_<completion>.<action>`, its
        completion time generated now as Hudi's time generator does, after every requested and
        completion time on this timeline (call it under the table lock, as Hudi does), or the
        `completion_time` given (a writer replaying a history on its own clock: the demo)."""
        if not instant.is_completed:
            return f"{self.folder}/{instant.file_name}"
        completion = completion_time or generate_completion_time(self.all_times, self.timezone,
                                                                 self.clock_skew_ms)
        return f"{self.folder}/{layout2_file_name(instant, completion)}"
