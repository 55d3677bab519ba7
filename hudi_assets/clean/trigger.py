"""Hudi's cleaning trigger (`needsCleaning`, strategy NUM_COMMITS): completed commits since the
commit the last completed clean saw, against `hoodie.clean.max.commits`."""

from __future__ import annotations

from hudi_assets.clean.config import CleanConfig
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata


def commits_since_last_clean(table: HoodieTable) -> int:
    """Completed COMMITS(all) instants after the last completed clean's `lastCompletedCommitTimestamp`."""
    active = table.active_timeline
    completed_commits = active.commits_timeline().filter_completed()
    last_clean = active.clean_timeline().filter_completed().last()
    if last_clean is None or active.state_files[last_clean].size == 0:
        return len(completed_commits)
    clean = metadata.completed_metadata(active, last_clean) or {}
    since = clean.get("lastCompletedCommitTimestamp") or ""
    return len(completed_commits.filter(lambda i: i.timestamp > since))


def needs_cleaning(table: HoodieTable, config: CleanConfig) -> bool:
    """Trigger NUM_COMMITS: completed COMMITS(all) since the last clean's last completed commit."""
    return commits_since_last_clean(table) >= config.max_commits
