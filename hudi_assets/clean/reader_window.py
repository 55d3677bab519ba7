"""The reader-safety window (`hudi_assets.cleaner.reader.window`): Delta's retention-duration check for
Hudi's cleaner. A query that started while a file version was the latest of its file group may read it
until it ends; Hudi's policies count commits or hours of commits, never how long ago a version stopped
being the latest (apache/hudi #8584: KEEP_LATEST_BY_HOURS deleted a file a 2.5-hour query read).

A version stops being the latest when the commit that supersedes it completes: the next committed slice
of its file group, or the replace commit of a replaced group. Its completion time is the timeline's on
table versions 8 and 9; version 6 records none, so the completed state file's modification time stands
in. A version superseded less than the window ago is kept: left out of a new plan (`ReaderWindow.split`,
counted in `HeldBack` for the dry run) and refused in a pending one (`ReaderWindow.why`, in
`clean.validation`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise

from hudi_assets.fsview import FileSlice
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import State
from hudi_assets.timeline.instant_time import instant_epoch


@dataclass(frozen=True, slots=True)
class ReaderWindow:
    """The window as of one moment; small and picklable (planner and validator tasks carry it)."""

    seconds: int
    now: float  # epoch seconds
    completed_at: Mapping[str, float]  # completed commit (requested time) -> completion, epoch seconds
    first_active: str  # commits before it are archived: they completed before any active one
    timezone: str  # the timeline's zone (UTC or LOCAL), in which its instant times are minted

    @classmethod
    def of(cls, table: HoodieTable, seconds: int, now: datetime) -> ReaderWindow | None:
        """The window of `table` as of `now`; None when it is off (0)."""
        if not seconds:
            return None
        timeline = table.active_timeline
        commits = timeline.commits_and_compaction_timeline()
        first = commits.first()
        zone = table.config.timeline_timezone
        completed_at: dict[str, float] = {}
        for instant in commits.filter_completed():
            completion = timeline.completion_times.get(instant.timestamp)
            epoch = instant_epoch(completion, zone) if completion else None
            if epoch is not None:
                completed_at[instant.timestamp] = epoch
            else:  # table version 6: the completed state file's modification time
                status = timeline.state_files.get(instant.with_state(State.COMPLETED))
                completed_at[instant.timestamp] = status.mtime_ms / 1000 if status else math.inf
        return cls(seconds, now.timestamp(), completed_at, first.timestamp if first else "", zone)

    def held_until(self, superseded_by: str | None) -> float | None:
        """Epoch seconds until which a version superseded by the commit `superseded_by` (None: by none,
        still the latest) is kept; None when it may go now. A superseding commit that is not completed
        keeps it for good; one archived completed before every active commit, long ago."""
        if superseded_by is None:
            return math.inf
        completed = self.completed_at.get(superseded_by)
        if completed is None:
            return None if superseded_by < self.first_active else math.inf
        until = completed + self.seconds
        return until if until > self.now else None

    def superseding_since(self, instant_time: str) -> list[str]:
        """The commits that completed later than the window before `instant_time`: those whose
        superseded versions a clean planned then may have held back, so an incremental plan (which
        scans only the partitions of newer commits) looks at their partitions again."""
        epoch = instant_epoch(instant_time, self.timezone)
        if epoch is None:
            return list(self.completed_at)
        since = epoch - self.seconds
        return [commit for commit, completed in self.completed_at.items() if completed >= since]

    def split(self, slices: list[FileSlice], doomed: list[FileSlice], replaced_at: str | None = None
              ) -> tuple[list[FileSlice], HeldBack]:
        """`doomed` (some of `slices`, a file group's committed slices newest first) as (those that may
        go now, what is held back): each slice is superseded by the one before it in `slices`, the
        newest by the replace commit `replaced_at` of a replaced group (else by none)."""
        newer = {older.base_instant: newer.base_instant for newer, older in pairwise(slices)}
        if slices and replaced_at is not None:
            newer[slices[0].base_instant] = replaced_at
        free: list[FileSlice] = []
        held = HeldBack()
        for piece in doomed:
            until = self.held_until(newer.get(piece.base_instant))
            if until is None:
                free.append(piece)
            else:
                held += HeldBack(len(piece.file_names), until)
        return free, held

    def why(self, superseded_by: str | None) -> str | None:
        """Why a version superseded by `superseded_by` may not be deleted now (None when it may)."""
        until = self.held_until(superseded_by)
        if until is None:
            return None
        if math.isinf(until):
            return f"is within the reader window ({format_seconds(self.seconds)}): the commit " \
                   f"{superseded_by or '(none)'} that would supersede it has not completed"
        return f"stopped being the latest version when {superseded_by} completed, less than the reader " \
               f"window ({format_seconds(self.seconds)}) ago: kept until {format_epoch(until)}"


@dataclass(frozen=True, slots=True)
class HeldBack:
    """What the reader window left out of a new plan: how many files, and until when the last one is
    kept (epoch seconds; inf: a superseding commit has not completed)."""

    files: int = 0
    until: float = 0.0

    def __add__(self, other: HeldBack) -> HeldBack:
        return HeldBack(self.files + other.files, max(self.until, other.until))

    def as_json(self) -> dict[str, object]:
        """`files`, and `until` (ISO 8601 UTC; null when none is held or a superseding commit is pending)."""
        until = None if not self.files or math.isinf(self.until) else \
            datetime.fromtimestamp(self.until, UTC).isoformat()
        return {"files": self.files, "until": until}

    def describe(self) -> str:
        until = "a superseding commit completes" if math.isinf(self.until) else format_epoch(self.until)
        return f"{self.files} file(s) held back by the reader window, the last until {until}"


def format_seconds(seconds: int) -> str:
    """7200 -> `2h`: the window as it is set."""
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def format_epoch(epoch: float) -> str:
    """Epoch seconds as a UTC time a person reads."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
