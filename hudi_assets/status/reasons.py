"""The sentences that say why a service is due, not due or blocked: one wording for `hudi-assets
status`, `table.maintenance.status()` and the Dagster sensor's skip reasons."""

from __future__ import annotations

from hudi_assets.archive.selection import Fence
from hudi_assets.config_options import (
    CLEAN_MAX_COMMITS,
    CLEANER_COMMITS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED,
    CLEANER_HOURS_RETAINED,
    KEEP_MAX_COMMITS,
)
from hudi_assets.timeline.instant import Instant


def clean_trigger(commits_since_last_clean: int, max_commits: int) -> str:
    """Hudi's NUM_COMMITS trigger, reached or not."""
    due = commits_since_last_clean >= max_commits
    return (f"clean {'due' if due else 'not due'}: {commits_since_last_clean} commits since the last "
            f"clean {'>=' if due else '<'} {CLEAN_MAX_COMMITS.key}={max_commits}")


def archive_trigger(completed_commits: int, keep_max_commits: int) -> str:
    """Whether completed commits exceed what the archiver keeps at most."""
    due = completed_commits > keep_max_commits
    return (f"archive {'due' if due else 'not due'}: {completed_commits} completed commits "
            f"{'>' if due else '<='} {KEEP_MAX_COMMITS.key}={keep_max_commits}")


def pending_clean(instant: Instant, files: int) -> str:
    return (f"the pending clean {instant.timestamp} ({instant.state.name.lower()}) runs first: "
            f"{files} files in its plan")


def too_few_commits(completed: int, retained: int) -> str:
    return (f"nothing to clean: {completed} completed commits, not more than the {retained} the cleaner "
            f"retains ({CLEANER_COMMITS_RETAINED.key}={retained})")


def no_commit_older_than_hours(hours: int) -> str:
    return (f"nothing to clean: no completed commit is older than the {hours} hours the cleaner retains "
            f"({CLEANER_HOURS_RETAINED.key}={hours})")


def retained_cover_all(policy_words: str, ectr: str) -> str:
    return (f"nothing to clean: the {policy_words} cover every older file version (earliest commit to "
            f"retain {ectr})")


def versions_cover_all(versions: int) -> str:
    return (f"nothing to clean: no file group has more than the {versions} file versions retained "
            f"({CLEANER_FILE_VERSIONS_RETAINED.key}={versions})")


def pending_pins_retention(pending: Instant, ectr: str | None, unpinned: str) -> str:
    held = f"at {ectr}" if ectr else "unset (nothing is cleaned)"
    return (f"clean held back by the pending {pending.action} {pending.timestamp} "
            f"({pending.state.name.lower()}): the earliest commit to retain stays {held} instead of "
            f"{unpinned} until it completes or is rolled back")


def savepoints_keep(savepoints: list[str]) -> str:
    return f"the savepoints {', '.join(savepoints)} keep every file version they hold"


def files_to_clean(files: int, bytes_: int) -> str:
    return f"{files} files to delete, {bytes_} bytes to reclaim"


def archive_waits_for(fence: Fence) -> str:
    return f"archive waits for the {fence.name}: {fence.reason}"
