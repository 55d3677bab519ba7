"""Each service of the status report: due or not, what holds it back since when, and why, decided by
the functions the services run themselves (the clean trigger and planner, the archiver's selection
and its fences, the metadata-table services' status), so the report cannot drift from what a run does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hudi_assets.archive.selection import ArchiveSelection
from hudi_assets.clean.cleaner import PendingClean
from hudi_assets.clean.config import CleaningPolicy
from hudi_assets.clean.planner import CleanPlanner
from hudi_assets.clean.validation import ValidationReport
from hudi_assets.metadata_services.status import ServiceStatus
from hudi_assets.retention import earliest_commit_to_retain
from hudi_assets.status import reasons
from hudi_assets.timeline.instant import Instant
from hudi_assets.timeline.timeline import ActiveTimeline


@dataclass
class ServiceHealth:
    """One service: `due` (None: not known, as on a table version hudi-assets does not run it on),
    `blocked_since` (the instant time of what holds it back; None: nothing does), the sentences
    that say why, and its numbers."""

    due: bool | None
    reasons: list[str] = field(default_factory=list)
    blocked_since: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def blocked(self) -> bool:
        return self.blocked_since is not None

    def to_dict(self) -> dict[str, Any]:
        return {"due": self.due, "blocked": self.blocked, "blocked_since": self.blocked_since,
                "reasons": self.reasons, **self.facts}


@dataclass(frozen=True)
class CleanOutlook:
    """What the clean would do now: pending plans and their validation, and the new plan's size."""

    commits_since_last_clean: int
    pending: list[PendingClean]
    validation: ValidationReport | None
    ectr: Instant | None
    files: int
    bytes_to_reclaim: int
    failed_deletes_to_retry: int


def clean_health(planner: CleanPlanner, outlook: CleanOutlook, now: datetime) -> ServiceHealth:
    """The clean: due when Hudi's trigger is reached or a clean is pending; if it would delete
    nothing, the reason the planner's own inputs give."""
    config = planner.config
    since = outlook.commits_since_last_clean
    health = ServiceHealth(since >= config.max_commits or bool(outlook.pending),
                           [reasons.clean_trigger(since, config.max_commits)])
    health.facts = {
        "policy": config.policy, "commits_since_last_clean": since, "max_commits": config.max_commits,
        "earliest_commit_to_retain": outlook.ectr.timestamp if outlook.ectr else None,
        "pending": [p.instant.timestamp for p in outlook.pending],
        "files_to_delete": outlook.files, "bytes_to_reclaim": outlook.bytes_to_reclaim,
        "failed_deletes_to_retry": outlook.failed_deletes_to_retry}
    for pending in outlook.pending:
        files = pending.plan.total_files if pending.plan else 0
        health.reasons.append(reasons.pending_clean(pending.instant, files))
    if outlook.validation is not None and not outlook.validation.safe:
        for violation in outlook.validation.violations[:3]:
            health.reasons.append(f"clean refused: the plan of {violation.instant} lists {violation.path}: "
                                  f"{violation.problem}")
        health.blocked_since = outlook.validation.violations[0].instant
    pinned = _pinned_by_pending(planner, outlook.ectr, now)
    if pinned is not None:
        health.reasons.append(pinned[1])
        if health.due and not outlook.pending:
            health.blocked_since = pinned[0].timestamp
    if outlook.files:
        health.reasons.append(reasons.files_to_clean(outlook.files, outlook.bytes_to_reclaim))
    elif pinned is None:
        health.reasons.extend(_nothing_to_clean(planner, outlook.ectr))
    return health


def _pinned_by_pending(planner: CleanPlanner, ectr: Instant | None,
                       now: datetime) -> tuple[Instant, str] | None:
    """A pending instant that holds the earliest commit to retain back: the rule run again over the
    completed commits alone retains from later."""
    commits = planner.timeline.commits_and_compaction_timeline()
    pending = commits.filter_pending().first()
    if pending is None:
        return None
    unpinned = earliest_commit_to_retain(commits.filter_completed(), planner.config, now)
    if unpinned is None or (ectr is not None and ectr.timestamp == unpinned.timestamp):
        return None
    held = ectr.timestamp if ectr else None
    return pending, reasons.pending_pins_retention(pending, held, unpinned.timestamp)


def _nothing_to_clean(planner: CleanPlanner, ectr: Instant | None) -> list[str]:
    config = planner.config
    if config.policy == CleaningPolicy.KEEP_LATEST_FILE_VERSIONS:
        found = [reasons.versions_cover_all(config.file_versions_retained)]
    elif config.policy == CleaningPolicy.KEEP_LATEST_BY_HOURS:
        first = planner.timeline.commits_and_compaction_timeline().filter_completed().first()
        hours = config.hours_retained
        found = [reasons.retained_cover_all(f"commits of the last {hours} hours", ectr.timestamp)
                 if ectr is not None and first is not None and ectr.timestamp > first.timestamp
                 else reasons.no_commit_older_than_hours(hours)]
    elif ectr is None or len(planner.commit_timeline) <= config.commits_retained:
        completed = planner.timeline.commits_and_compaction_timeline().filter_completed()
        found = [reasons.too_few_commits(min(len(completed), len(planner.commit_timeline)),
                                         config.commits_retained)]
    else:
        found = [reasons.retained_cover_all(f"{config.commits_retained} retained commits", ectr.timestamp)]
    savepoints = planner.timeline.savepoint_timeline().timestamps
    if savepoints:
        found.append(reasons.savepoints_keep(savepoints))
    return found


def archive_health(active: ActiveTimeline, is_mor: bool, selection: ArchiveSelection) -> ServiceHealth:
    """The archive: due when completed commits exceed the configured keep.max (or cleans and
    rollbacks do); blocked by each fence that holds back a commit those settings would archive. The
    counts are the selection's own (its keep range may be widened by the cleaner's retention)."""
    keep = selection.keep
    commits = active.completed_commits_timeline(is_mor).instants
    wanted = commits[:len(commits) - keep.configured_min] if len(commits) > keep.configured_max else []
    health = ServiceHealth(bool(wanted) or bool(selection.clean_rollback),
                           [reasons.archive_trigger(len(commits), keep.configured_max)])
    chosen = {i.timestamp for i in selection.instants}
    health.facts = {"completed_commits": len(commits), "keep_min_commits": keep.min_commits,
                    "keep_max_commits": keep.max_commits, "instants_to_archive": len(selection.instants),
                    "state_files_to_archive": len(selection.state_files),
                    "commits_held_back": sum(1 for i in wanted if i.timestamp not in chosen)}
    if keep.adjusted:
        health.reasons.append(f"archive keeps {keep.min_commits} to {keep.max_commits} commits: "
                              f"{keep.reason}")
    if wanted:
        last = wanted[-1].timestamp
        blocking = [f for f in selection.fences if f.instant is not None and f.instant <= last]
        health.reasons.extend(reasons.archive_waits_for(f) for f in blocking)
        since = [_blocked_since(active, f.name, f.instant) for f in blocking]
        health.blocked_since = min(since) if since else None
    if selection.instants:
        health.reasons.append(f"{len(selection.instants)} instants to archive")
    return health


def _blocked_since(active: ActiveTimeline, fence: str, instant: str) -> str:
    """Since when a fence holds: the pending write it stands for, else the instant it stands at."""
    pending = active.write_timeline().filter_pending().first() if fence == "oldest pending write" else None
    return pending.timestamp if pending is not None else instant


def metadata_service_health(status: ServiceStatus, due: bool) -> ServiceHealth:
    """A metadata-table service as `metadata --services` judges it; `due`: by its own trigger, even
    when a blocker stops it."""
    health = ServiceHealth(due, [status.detail] if status.detail else [])
    health.reasons.extend(b.reason for b in status.blocked_by)
    if status.blocked_by:
        health.blocked_since = min(b.instant for b in status.blocked_by)
    health.facts = {"instant": status.instant}
    return health
