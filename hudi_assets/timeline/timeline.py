"""`Timeline`: an ordered, filterable view of instants; `ActiveTimeline`: a table's timeline folder.

The filters carry the names of the timelines Hudi's clean and archive code use, because picking
the wrong one (all commits vs the table's completed commits, with or without compaction) is the
most common way to diverge from Hudi's decisions.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar, TypeVar

from hudi_assets.config_options import MAX_EXPECTED_CLOCK_SKEW_MS
from hudi_assets.exceptions import StorageError
from hudi_assets.storage import FileStatus, Storage
from hudi_assets.table_config import METAFOLDER, TableConfig
from hudi_assets.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    highest_states,
)
from hudi_assets.timeline.layout1 import COMMIT_METADATA_SERDE_V1

if TYPE_CHECKING:
    from hudi_assets.timeline.layout import CommitMetadataSerDe

COMMIT_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING})
"""COMMITS(all): every action that writes data, except table services in their pending form."""
WRITE_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, COMPACTION, LOG_COMPACTION, REPLACE_COMMIT, CLUSTERING})

_SORT_KEY = operator.attrgetter("sort_key")
_V = TypeVar("_V")


def first_per_requested_time(completed: Iterable[tuple[str, _V]]) -> dict[str, _V]:
    """Requested time -> the value of its first pair, the pairs given in Hudi's timeline order: the
    rule of a completion-time lookup (CompletionTimeQueryViewV2.setCompletionTime puts if absent).
    Two completed instants share a requested time when a savepoint keeps a commit (it completes
    later) or two 0.x writers drew the same millisecond; the first in timeline order answers for
    the time, so a later one never moves the commit's completion time a file slicing reads."""
    found: dict[str, _V] = {}
    for requested, value in completed:
        if requested not in found:
            found[requested] = value
    return found


class Timeline:
    """Instants in Hudi's order; every filter returns a new `Timeline`.

    `completion_times` maps a completed instant's requested time to its completion time where the
    timeline knows it (layout 2's active and archived timelines); empty otherwise.
    """

    completion_times: Mapping[str, str] = MappingProxyType({})

    def __init__(self, instants: Iterable[Instant]):
        self.instants: list[Instant] = sorted(instants, key=_SORT_KEY)

    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    def __bool__(self) -> bool:
        return bool(self.instants)

    def __repr__(self) -> str:
        return f"Timeline({', '.join(map(str, self.instants))})"

    # --------------------------------------------------------------- access
    def first(self) -> Instant | None:
        return self.instants[0] if self.instants else None

    def last(self) -> Instant | None:
        return self.instants[-1] if self.instants else None

    @property
    def timestamps(self) -> list[str]:
        return [i.timestamp for i in self.instants]

    def get(self, ts: str, action: str | None = None) -> Instant | None:
        for instant in self.instants:
            if instant.timestamp == ts and (action is None or instant.comparable_action == action):
                return instant
        return None

    def completion_time(self, instant: Instant) -> str | None:
        """When `instant` (completed) completed, where the timeline records it (Hudi's
        HoodieInstant.getCompletionTime). A savepoint shares its commit's requested time and
        completes later, so a layout that can hold both keeps each instant's own time and overrides
        this; here `completion_times` answers, right where a requested time is one instant's."""
        return self.completion_times.get(instant.timestamp) if instant.is_completed else None

    @property
    def all_times(self) -> list[str]:
        """Every requested time and every instant's own completion time: a new instant or completion
        time made beside this timeline must come after each, a savepoint's later completion too."""
        completions = (self.completion_time(i) for i in self.instants if i.is_completed)
        return [*self.timestamps, *(t for t in completions if t is not None)]

    def is_before_timeline_starts(self, ts: str) -> bool:
        """Hudi's `isBeforeTimelineStarts`: `ts` precedes the first instant of this timeline."""
        first = self.first()
        return first is not None and ts < first.timestamp

    @staticmethod
    def _of_sorted(instants: list[Instant]) -> Timeline:
        """A timeline of instants already in Hudi's order (a filter keeps the order it was given)."""
        timeline = Timeline.__new__(Timeline)
        timeline.instants = instants
        return timeline

    # -------------------------------------------------------------- filters
    def filter(self, predicate: Callable[[Instant], bool]) -> Timeline:
        return Timeline._of_sorted([i for i in self.instants if predicate(i)])

    def filter_actions(self, actions: Iterable[str]) -> Timeline:
        wanted = frozenset(actions)
        return self.filter(lambda i: i.action in wanted)

    def filter_completed(self) -> Timeline:
        return self.filter(lambda i: i.is_completed)

    def filter_pending(self) -> Timeline:
        """Requested or inflight instants (Hudi's `filterInflightsAndRequested`)."""
        return self.filter(lambda i: not i.is_completed)

    def filter_inflight(self) -> Timeline:
        return self.filter(lambda i: i.is_inflight)

    def before(self, ts: str) -> Timeline:
        return self.filter(lambda i: i.timestamp < ts)

    def at_or_after(self, ts: str) -> Timeline:
        return self.filter(lambda i: i.timestamp >= ts)

    def between(self, start_inclusive: str, end_exclusive: str) -> Timeline:
        return self.filter(lambda i: start_inclusive <= i.timestamp < end_exclusive)

    # ------------------------------------------------- Hudi's named timelines
    def commits_timeline(self) -> Timeline:
        """COMMITS(all): commit, deltacommit, replacecommit in any state."""
        return self.filter_actions(COMMIT_ACTIONS)

    def commits_and_compaction_timeline(self) -> Timeline:
        """COMMITS+COMPACTION: what the cleaner derives the earliest commit to retain from."""
        return self.filter_actions(COMMIT_ACTIONS | {COMPACTION})

    def write_timeline(self) -> Timeline:
        """WRITE: every data-writing action including table services, any state."""
        return self.filter_actions(WRITE_ACTIONS)

    def completed_commits_timeline(self, is_mor: bool) -> Timeline:
        """TABLE-COMMITS: `table.getCompletedCommitsTimeline()`, which depends on the table type."""
        actions = COMMIT_ACTIONS if is_mor else COMMIT_ACTIONS - {DELTA_COMMIT}
        return self.filter_actions(actions).filter_completed()

    def clean_timeline(self) -> Timeline:
        return self.filter_actions({CLEAN})

    def rollback_timeline(self) -> Timeline:
        return self.filter_actions({ROLLBACK})

    def savepoint_timeline(self) -> Timeline:
        """Completed savepoints (an inflight savepoint protects nothing)."""
        return self.filter_actions({SAVEPOINT}).filter_completed()

    def pending_compaction_timeline(self) -> Timeline:
        return self.filter_actions({COMPACTION}).filter_pending()

    def pending_log_compaction_timeline(self) -> Timeline:
        return self.filter_actions({LOG_COMPACTION}).filter_pending()

    def pending_replace_timeline(self) -> Timeline:
        """Requested/inflight replacecommits: clustering or insert_overwrite in progress (Hudi 1.x
        names a pending clustering `clustering`: its filterPendingReplaceOrClusteringTimeline)."""
        return self.filter_actions({REPLACE_COMMIT, CLUSTERING}).filter_pending()

    def pending_writes_timeline(self) -> Timeline:
        """Requested/inflight commits and deltacommits: running or failed writers."""
        return self.filter_actions({COMMIT, DELTA_COMMIT}).filter_pending()


class ActiveTimeline(Timeline):
    """The active timeline of a layout-1 table (Hudi's ActiveTimelineV1), from one listing of its folder.

    `instants` holds each instant once, in its highest state; `state_files` keeps every state file
    that is present (the raw timeline the archiver works on) with its size and modification time.
    Other layouts subclass it (`layout2.LayoutTwoTimeline`); `TimelineLayout` picks the class.
    """

    commit_metadata_serde: ClassVar[CommitMetadataSerDe] = COMMIT_METADATA_SERDE_V1
    # Whether a clean's `.inflight` repeats its plan (Hudi 0.x) or is written empty (Hudi 1.x's
    # ActiveTimelineV2.transitionCleanRequestedToInflight writes Option.empty()).
    clean_inflight_holds_plan: ClassVar[bool] = True

    def __init__(self, storage: Storage, state_files: dict[Instant, FileStatus], folder: str = METAFOLDER):
        self.storage = storage
        self.state_files = state_files
        self.folder = folder
        # Requested time -> completion time where the layout records it; none in layout 1, where
        # instants complete in the order of their requested times as far as readers can tell.
        self.completion_times = {}
        # hoodie.time.generator.max_expected_clock_skew_ms, which the table that reads the timeline
        # sets from its settings: how long a layout-2 completion time waits (layout 1 names none).
        self.clock_skew_ms = MAX_EXPECTED_CLOCK_SKEW_MS.default
        self._index()

    def _index(self) -> None:
        """`instants` and the raw timeline from `state_files`."""
        # One sort serves both views: in Hudi's order an instant's state files are adjacent, lowest
        # state first, so keeping each one's highest state leaves the instants in order too.
        self._raw = sorted(self.state_files, key=_SORT_KEY)
        self.instants = highest_states(self._raw)

    @classmethod
    def load(cls, storage: Storage, folder: str = METAFOLDER, config: TableConfig | None = None
             ) -> ActiveTimeline:
        """The timeline in `folder`; `config` is the table's (layouts that need it read it)."""
        state_files: dict[Instant, FileStatus] = {}
        for status in storage.list(folder):
            if status.is_dir:
                continue
            instant = Instant.parse_file_name(status.name)
            if instant is not None:
                state_files[instant] = status
        return cls(storage, state_files, folder)

    def without(self, gone: Iterable[Instant]) -> ActiveTimeline:
        """This timeline as it reads once the state files `gone` are removed (nothing is deleted):
        what a service would decide then. Completion times stay: they are the other instants'."""
        dropped = set(gone)
        hidden = copy.copy(self)
        hidden.state_files = {i: s for i, s in self.state_files.items() if i not in dropped}
        hidden._index()
        return hidden

    @property
    def raw_instants(self) -> list[Instant]:
        """Every state file as its own instant, in Hudi's order (the archiver's raw timeline)."""
        return list(self._raw)

    def state_file_path(self, instant: Instant) -> str:
        return f"{self.folder}/{instant.file_name}"

    @staticmethod
    def state_file_name(instant: Instant, completion_time: str) -> str:
        """The name of a state file of `instant`; layout 1's names carry no completion time."""
        return instant.file_name

    def new_state_file_path(self, instant: Instant, completion_time: str | None = None) -> str:
        """Where a state file of `instant` not yet on the timeline is written (layout 2 names a
        completed one by a completion time generated now, so call it under the table lock, or by
        `completion_time`, a writer's that replays a history on its own clock)."""
        return f"{self.folder}/{instant.file_name}"

    def create_state_file(self, instant: Instant, data: bytes) -> str:
        """Write a new, immutable state file of `instant`; its path. A file already there is
        another writer's: `StorageError`, nothing overwritten."""
        path = self.new_state_file_path(instant)
        if not self.storage.create_if_absent(path, data):
            raise StorageError(f"{self.storage.uri(path)}: exists already; state files are written once")
        return path

    def has_state_file(self, instant: Instant) -> bool:
        return instant in self.state_files

    def read_details(self, instant: Instant) -> bytes:
        """The bytes of an instant's state file (Hudi's `getInstantDetails`)."""
        return self.storage.read(self.state_file_path(instant))
