"""What the cleaner retains, as Hudi 0.15's `CleanerUtils` decides it: the earliest commit to retain
(ECTR) and the cutoff of KEEP_LATEST_BY_HOURS. The clean planner and validator use it for the plan, the
archiver for the min/max instants it keeps (`ArchivalUtils.getMinAndMaxInstantsToKeep`), so both read
one rule. Spec: table-services.md 3.1 and 5.1.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

from hudi_assets.config_options import CleaningPolicy
from hudi_assets.timeline.instant import Instant
from hudi_assets.timeline.instant_time import format_instant_time
from hudi_assets.timeline.timeline import Timeline


class RetentionSettings(Protocol):
    """The cleaner settings the rule reads (`clean.config.CleanConfig` has them)."""

    @property
    def policy(self) -> str: ...
    @property
    def commits_retained(self) -> int: ...
    @property
    def hours_retained(self) -> int: ...


def earliest_commit_to_retain(commits: Timeline, config: RetentionSettings,
                              now: datetime | None = None) -> Instant | None:
    """CleanerUtils.getEarliestCommitToRetain over a commits timeline of any state.

    The cleaner passes COMMITS+COMPACTION (pending compactions pin the result); the archiver passes
    COMMITS(all) with `now` taken from the latest commit (table-services.md 3.1 and 5.1).
    """
    completed = commits.filter_completed().instants
    if config.policy == CleaningPolicy.KEEP_LATEST_COMMITS:
        retained = config.commits_retained
        if len(completed) <= retained or retained <= 0:
            return None  # retained = 0: the n-th instant is out of range, never clean
        candidate = completed[len(completed) - retained]
        pending = commits.filter_pending().first()
        if pending is None or candidate.sort_key <= pending.sort_key:
            return candidate
        before = [i for i in completed if i.timestamp < pending.timestamp]
        return before[-1] if before else None
    if config.policy == CleaningPolicy.KEEP_LATEST_BY_HOURS:
        cutoff = hours_cutoff(config.hours_retained, now)
        return next((i for i in completed if i.timestamp >= cutoff), None)
    return None


def hours_cutoff(hours: int, now: datetime | None = None) -> str:
    """now - hours as `yyyyMMddHHmmssSSS` in the process time zone (Hudi applies the table's zone
    and then converts back to an absolute instant, so only the JVM default zone matters)."""
    moment = now or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.astimezone()  # a naive time is local wall-clock time
    moment -= timedelta(hours=hours)  # on an aware time: exact, also across DST changes
    return format_instant_time(moment.astimezone().replace(tzinfo=None))
