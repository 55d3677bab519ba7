"""When does a table need maintenance? Cheap answers from one listing of `.hoodie/`.

The cleaning trigger is Hudi's `needsCleaning` (NUM_COMMITS strategy): completed commits since the
commit the last completed clean saw. Archival is due when the table's completed commits exceed
`hoodie.keep.max.commits`, as the archiver itself decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_assets.archive.config import ArchiveConfig
from hudi_assets.clean.trigger import commits_since_last_clean
from hudi_assets.config import WriteConfig
from hudi_assets.table import HoodieTable


@dataclass(frozen=True)
class MaintenanceStatus:
    latest_instant: str
    commits_since_last_clean: int
    clean_max_commits: int
    completed_commits: int
    keep_max_commits: int

    @property
    def clean_due(self) -> bool:
        return self.commits_since_last_clean >= self.clean_max_commits

    @property
    def archive_due(self) -> bool:
        return self.completed_commits > self.keep_max_commits

    @property
    def due(self) -> bool:
        return self.clean_due or self.archive_due


def maintenance_status(table: HoodieTable, config: WriteConfig) -> MaintenanceStatus:
    settings = ArchiveConfig.from_write_config(config)  # validated before the timeline is read
    active = table.active_timeline
    last = active.last()
    return MaintenanceStatus(
        latest_instant=last.timestamp if last else "",
        commits_since_last_clean=commits_since_last_clean(table),
        clean_max_commits=settings.cleaner.max_commits,
        completed_commits=len(active.completed_commits_timeline(table.is_mor)),
        keep_max_commits=settings.max_commits,
    )
