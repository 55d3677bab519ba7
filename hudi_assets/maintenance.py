"""`table.maintenance`: the Python face of the core workflows (clean, archive, status).

`HoodieTable(path, hoodie_conf={...}).maintenance.clean(dry_run=True)` plans without writing;
`clean()` runs one clean as Hudi's write client does; `archive()` archives and merges; `rollback(t)`
rolls back a failed write; `status()` says what is due and, in `report`, why not, what blocks it
and the table's backlog and files (`hudi-assets status`; `detail=False`: the timeline alone);
`check()` returns the findings on the settings; `metadata_services()` compacts, cleans and archives
the metadata table. The CLI and the Dagster assets call the same service
objects (`Cleaner`, `Rollbacker`, `HoodieTimelineArchiver`, `MetadataServices`), so a fix lands once; each
operation returns one result type, dry run or not (`CleanResult`, `ArchiveResult`, `RollbackResult`).

Findings (`config_options.check`): an ERROR raises `SettingsRefusedError` before anything but
hoodie.properties is read; a WARN is logged and returned by `check()`; `strict=True` refuses on it too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from hudi_assets.engine import DEFAULT_ENGINE, create_engine
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.table_config import PROPERTIES_FILE

if TYPE_CHECKING:
    from datetime import datetime, timedelta

    from hudi_assets.archive.archiver import ArchiveResult
    from hudi_assets.clean.cleaner import Cleaner, CleanResult
    from hudi_assets.clean.validation import ValidationReport
    from hudi_assets.config import WriteConfig
    from hudi_assets.engine import Engine
    from hudi_assets.findings import Finding
    from hudi_assets.listener import Listener
    from hudi_assets.metadata_services import ServicesResult
    from hudi_assets.repair import OrphanFilesResult
    from hudi_assets.rollback import Rollbacker, RollbackResult
    from hudi_assets.savepoint import Savepoint, SavepointUsage
    from hudi_assets.status import TableStatus
    from hudi_assets.table import HoodieTable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MaintenanceStatus:
    latest_instant: str
    commits_since_last_clean: int
    clean_max_commits: int
    completed_commits: int
    keep_max_commits: int
    # The whole report (`hudi-assets status`): why each service is due, blocked or idle, the backlog,
    # the files and the metadata table; None from the sensor's cheap look at the timeline.
    report: TableStatus | None = field(default=None, compare=False, repr=False)

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
    """When does a table need maintenance? The cleaning trigger is Hudi's `needsCleaning`
    (NUM_COMMITS); archival is due when completed commits exceed `hoodie.keep.max.commits`."""
    from hudi_assets.archive.config import ArchiveConfig
    from hudi_assets.clean.trigger import commits_since_last_clean

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


class TableMaintenance:
    """Clean, archive and status of one table, with the table's merged settings."""

    def __init__(self, table: HoodieTable):
        self.table = table

    def _engine(self, engine: Engine | str | None, spark_remote: str | None = None) -> Engine:
        if engine is None or isinstance(engine, str):
            return create_engine(engine or DEFAULT_ENGINE, remote=spark_remote)
        if spark_remote:
            raise InvalidConfigError("spark_remote goes with engine='spark', not with an engine object")
        return engine

    def check(self, *, strict: bool = False) -> list[Finding]:
        """The findings on the table's settings: raises `SettingsRefusedError` on an ERROR (on any
        finding when `strict`), else returns the warnings."""
        from hudi_assets.config_options import check
        from hudi_assets.findings import raise_if_refused

        findings = check(self.table.write_config)
        raise_if_refused(findings, strict, "strict=True")
        return findings

    def _service(self, service: str) -> None:
        """Refuse a service the table's version does not have yet (before anything is read)."""
        self.table.config.check_service(service, self.table.storage.uri(PROPERTIES_FILE))

    def _checked(self, strict: bool) -> None:
        for finding in self.check(strict=strict):
            log.warning(finding.message)

    def _cleaner(self, engine: Engine | None = None, now: datetime | None = None,
                 listener: Listener | None = None) -> Cleaner:
        """The table's cleaner; without `engine` a local one (validating and discarding spread no work)."""
        from hudi_assets.clean.cleaner import Cleaner
        from hudi_assets.listener import QUIET
        from hudi_assets.timeline.instant_time import wall_clock

        return Cleaner.for_table(self.table, engine, wall_clock if now is None else lambda: now,
                                 listener or QUIET)

    def clean(self, *, dry_run: bool = False, engine: Engine | str | None = None,
              listener: Listener | None = None, now: datetime | None = None,
              strict: bool = False, spark_remote: str | None = None) -> CleanResult:
        """Dry run: the plan Hudi would request now (`CleanResult.plan`; pending plans are validated
        first and an unsafe one raises `UnsafePlanError`); nothing is written. Otherwise one clean:
        schedule, validate, execute every pending clean; returns what was done. `listener` hears the
        steps and the progress of the deletes. The settings are checked first (`check`).
        `spark_remote` (`sc://HOST:PORT`): Spark on that Spark Connect server (see `create_engine`)."""
        self._service("clean")
        self._checked(strict)
        cleaner = self._cleaner(self._engine(engine, spark_remote), now, listener)
        return cleaner.dry_run() if dry_run else cleaner.clean()

    def validate(self, *, now: datetime | None = None) -> ValidationReport:
        """The safety rule over every pending clean plan, without executing anything."""
        return self._cleaner(now=now).validate()

    def discard_pending(self, instant_time: str) -> list[str]:
        """Remove a pending clean (keeping copies of its state files); returns the copies."""
        self._service("clean")
        return self._cleaner().discard_pending(instant_time)

    def _rollbacker(self) -> Rollbacker:
        from hudi_assets.metadata.rollback_records import MetadataTableSink
        from hudi_assets.rollback import Rollbacker

        return Rollbacker(self.table, metadata=MetadataTableSink(self.table))

    def rollback(self, instant_time: str, *, force: bool = False) -> RollbackResult:
        """Roll back one pending write as the `rollback` command does (pending rollbacks first)."""
        self._service("rollback")
        return self._rollbacker().rollback(instant_time, force=force)

    def discard_pending_rollback(self, rollback_instant: str) -> list[str]:
        """Remove a pending rollback (keeping copies of its state files); returns the copies."""
        return self._rollbacker().discard_pending(rollback_instant)

    def archive(self, *, dry_run: bool = False, strict: bool = False) -> ArchiveResult:
        """Dry run: what would be archived and why each fence stands where it does
        (`ArchiveResult.selection`, nothing written). Otherwise archive (and merge small archive files
        when enabled). The settings are checked first (`check`)."""
        from hudi_assets.archive.archiver import HoodieTimelineArchiver

        self._service("archive")
        self._checked(strict)
        archiver = HoodieTimelineArchiver.for_table(self.table)
        return archiver.dry_run() if dry_run else archiver.archive()

    def metadata_services(self, *, dry_run: bool = False, no_active_writer: bool = False,
                          services: tuple[str, ...] = ("compaction", "clean", "archive")) -> ServicesResult:
        """The metadata table's compaction, clean and archive without a data write, in Hudi's order
        (`hudi_assets.metadata_services`); a dry run reports what is due and what blocks it. Runs only
        under a lock provider shared with the writers or with `no_active_writer=True`."""
        from hudi_assets.metadata_services import MetadataServices

        return MetadataServices(self.table).run(services, dry_run=dry_run, no_active_writer=no_active_writer)

    def status(self, *, detail: bool = True, engine: Engine | str | None = None,
               now: datetime | None = None) -> MaintenanceStatus:
        """What is due; with `detail` (the default) also `report`, the facts of `hudi-assets status`
        (one listing of the partitions, as a clean dry run's), else from the timeline alone."""
        from hudi_assets.status import table_status

        status = maintenance_status(self.table, self.table.write_config)
        if not detail:
            return status
        local = engine is None  # a look, not a run: local threads unless an engine is asked for
        return replace(status, report=table_status(self.table, None if local else self._engine(engine), now))

    def savepoint(self, instant: str | None = None, *, user: str = "default",
                  comment: str = "default") -> Savepoint:
        """Savepoint a completed commit (None: the latest), as hudi-cli's `savepoint create`."""
        from hudi_assets.savepoint import Savepointer

        return Savepointer(self.table).create(instant, user=user, comment=comment)

    def savepoints(self) -> list[SavepointUsage]:
        """Every savepoint with the files and bytes it keeps alive."""
        from hudi_assets.savepoint import Savepointer

        return Savepointer(self.table).list()

    def delete_savepoint(self, instant: str) -> None:
        """Remove a savepoint (refused for an instant that is none), as `savepoint delete`."""
        from hudi_assets.savepoint import Savepointer

        Savepointer(self.table).delete(instant)

    def remove_orphan_files(self, *, dry_run: bool = False, delete: bool = False,
                            min_age: timedelta | None = None, max_orphans: int | None = None,
                            engine: Engine | str | None = None) -> OrphanFilesResult:
        """Data files no commit owns: listed (`dry_run`), quarantined (undo: `hudi_assets.repair`),
        or with `delete` removed. Refusals raise `HudiInputError` before anything moves."""
        from hudi_assets.repair import OrphanFileRepair

        service = OrphanFileRepair.for_table(self.table, self._engine(engine), min_age, max_orphans)
        return service.plan() if dry_run else service.delete() if delete else service.quarantine()
