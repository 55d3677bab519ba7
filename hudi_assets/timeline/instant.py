"""`Instant`: one action at one time in one state, and its file name in timeline layout v1.

Layout v1 keeps every state of an instant as its own file in `.hoodie/` (`T.clean.requested`,
`T.clean.inflight`, `T.clean`). Two irregular names matter: a commit's inflight file is the bare
`T.inflight`, and a compaction (log compaction) completes as `T.commit` (`T.deltacommit`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from hudi_assets.exceptions import CorruptFileError


class State(Enum):
    """Instant states, in the order Hudi sorts them."""

    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2


COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
CLEAN = "clean"
ROLLBACK = "rollback"
SAVEPOINT = "savepoint"
REPLACE_COMMIT = "replacecommit"
COMPACTION = "compaction"
LOG_COMPACTION = "logcompaction"
RESTORE = "restore"
INDEXING = "indexing"
SCHEMA_COMMIT = "schemacommit"
# Hudi 1.x (timeline layout 2) only: a pending clustering, which completes as a replacecommit.
CLUSTERING = "clustering"

ACTIONS = (COMMIT, DELTA_COMMIT, CLEAN, ROLLBACK, SAVEPOINT, REPLACE_COMMIT, COMPACTION,
           LOG_COMPACTION, RESTORE, INDEXING, SCHEMA_COMMIT)

# Actions whose completed file carries another action's name.
_COMPLETES_AS = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT, CLUSTERING: REPLACE_COMMIT}
# The action each one sorts and groups with (Hudi's "comparable action").
COMPARABLE_ACTION = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT, CLUSTERING: REPLACE_COMMIT}
# Actions that have no requested state file (savepoints go straight to inflight).
_NO_REQUESTED = {SAVEPOINT}

# Hudi's grammar: digits, `.action`, optional `.state`; no state means completed.
_NAME = re.compile(r"^([0-9]+)\.([A-Za-z]+)(?:\.([A-Za-z]+))?$")  # ASCII digits, as Java's \d


@dataclass(frozen=True, slots=True)
class Instant:
    """An instant of the timeline; ordering is Hudi's (time, comparable action, state)."""

    timestamp: str
    action: str
    state: State = State.COMPLETED

    @property
    def sort_key(self) -> tuple[str, str, int]:
        return self.timestamp, COMPARABLE_ACTION.get(self.action, self.action), self.state.value

    @property
    def comparable_key(self) -> tuple[str, str]:
        """(time, comparable action): the instant whatever its state, so every state file of one
        instant (a compaction's requested file and its `commit`) has the same key."""
        return self.timestamp, COMPARABLE_ACTION.get(self.action, self.action)

    def __lt__(self, other: Instant) -> bool:
        return self.sort_key < other.sort_key

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def is_requested(self) -> bool:
        return self.state is State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        return self.state is State.INFLIGHT

    @property
    def comparable_action(self) -> str:
        return COMPARABLE_ACTION.get(self.action, self.action)

    def with_state(self, state: State) -> Instant:
        """The same instant in another state; a completed compaction becomes a `commit`."""
        action = self.action
        if state is State.COMPLETED:
            action = _COMPLETES_AS.get(action, action)
        return Instant(self.timestamp, action, state)

    @property
    def file_name(self) -> str:
        """The state file's name in `.hoodie/` (layout v1)."""
        ts, action = self.timestamp, self.action
        if self.state is State.COMPLETED:
            return f"{ts}.{_COMPLETES_AS.get(action, action)}"
        if self.state is State.INFLIGHT:
            return f"{ts}.inflight" if action == COMMIT else f"{ts}.{action}.inflight"
        if action in _NO_REQUESTED:
            raise ValueError(f"{action} has no requested state")
        return f"{ts}.{action}.requested"

    @classmethod
    def parse_file_name(cls, name: str) -> Instant | None:
        """Parse a `.hoodie/` file name; None when it is not an instant file at all.

        Raises `CorruptFileError` for a name shaped like an instant whose action or state is not
        one Hudi writes: such a file means a writer we do not understand touched the table.
        """
        match = _NAME.match(name)
        if match is None:
            return None
        ts, action, suffix = match.groups()
        if suffix is None:
            if action == "inflight":
                return cls(ts, COMMIT, State.INFLIGHT)
            if action in (COMPACTION, LOG_COMPACTION) or action not in ACTIONS:
                raise CorruptFileError(name, f"unknown instant action {action!r}")
            return cls(ts, action, State.COMPLETED)
        if action not in ACTIONS:
            raise CorruptFileError(name, f"unknown instant action {action!r}")
        if suffix == "inflight":
            return cls(ts, action, State.INFLIGHT)
        if suffix == "requested" and action not in _NO_REQUESTED:
            return cls(ts, action, State.REQUESTED)
        raise CorruptFileError(name, f"unknown state {suffix!r} for action {action!r}")

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action}__{self.state.name}]"


def highest_states(state_files: Iterable[Instant]) -> list[Instant]:
    """Each instant once, in the highest of its states among `state_files`, in first-seen order."""
    highest: dict[tuple[str, str], Instant] = {}
    for instant in state_files:
        key = instant.comparable_key
        held = highest.get(key)
        if held is None or held.state.value < instant.state.value:
            highest[key] = instant
    return list(highest.values())


def completed_instants(times: Iterable[str], actions: Iterable[str]) -> list[Instant]:
    """Completed instants of times and actions already typed (an archive's columns), made by setting
    the slots directly: a frozen dataclass's `__init__` sets each field through `object.__setattr__`,
    which makes 100,000 of them a fifth slower. Knows `Instant`'s three fields and nothing else."""
    new, instant = object.__new__, Instant
    set_time, set_action, set_state = (Instant.timestamp.__set__, Instant.action.__set__,
                                       Instant.state.__set__)
    done = State.COMPLETED
    made = []
    for time, action in zip(times, actions, strict=True):
        one = new(instant)
        set_time(one, time)
        set_action(one, action)
        set_state(one, done)
        made.append(one)
    return made
