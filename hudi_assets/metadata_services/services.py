"""`MetadataServices`: the metadata table's compaction, clean and archive run without a data write,
in the order Hudi 0.15's writer runs them after a data commit (`performTableServices`): a pending
compaction is finished, then the clean, the compaction and the archive. Hudi 1.x's writer (table
versions 8/9) runs them in the same order, at fresh instant times (`metadata.compaction`).

Who else may be compacting: a Java writer runs the same services inline after its commits, under the
same instant names (on 8/9, times of its own clock). They run here only under a Hudi lock provider
shared with the writers (`hoodie.write.lock.provider`, held on the data table for the whole run, as
a writer holds it while it writes the metadata table), or when the caller states that the writers
are stopped (`no_active_writer`) and the timeline agrees: no pending data instant and no write
(commit, deltacommit, replacecommit) completed in the last hour. Our own rollbacks and cleans do not
count, nor, under LAZY, the failed writes (expired heartbeat) that `--run-services` rolls back
first. Otherwise `ActiveWriterError` (exit 2), before anything is written.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property

from hudi_assets import config_options as opt
from hudi_assets.archive import HoodieTimelineArchiver
from hudi_assets.clean import Cleaner
from hudi_assets.engine import Engine
from hudi_assets.exceptions import HudiInputError, UnsupportedTableError
from hudi_assets.heartbeat import HeartbeatConfig
from hudi_assets.listener import QUIET, Listener, Step
from hudi_assets.metadata.clean_records import WRITTEN_METADATA_VERSIONS
from hudi_assets.metadata.compaction import (
    compaction_due,
    complete_pending_compaction,
    execute_compaction,
    pending_compaction,
    schedule_compaction,
)
from hudi_assets.metadata_services.status import MetadataServicesStatus, clean_decision, services_status
from hudi_assets.metadata_services.write_config import metadata_table, read_metadata
from hudi_assets.metrics.reporter import with_metrics
from hudi_assets.rollback.planner import failed_writes
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import PROPERTIES_FILE
from hudi_assets.timeline.instant_time import Clock, format_instant_time, now_in_zone, wall_clock
from hudi_assets.transaction import table_lock

log = logging.getLogger(__name__)

QUIET_PERIOD_MS = 3_600_000  # no completed data instant this recent under `no_active_writer`
SERVICES = ("compaction", "clean", "archive")


class ActiveWriterError(HudiInputError):
    """The metadata table's services would run beside a writer that may run them too."""


@dataclass
class ServicesResult:
    """What a run did (or, in a dry run, would do): one type whether or not it acted."""

    dry_run: bool
    before: MetadataServicesStatus
    after: MetadataServicesStatus | None = None
    compacted: list[str] = field(default_factory=list)
    cleaned: list[str] = field(default_factory=list)
    files_cleaned: int = 0
    archived: int = 0


def check_no_other_writer(data_table: HoodieTable, no_active_writer: bool, clock: Clock = wall_clock) -> str:
    """Why the services may run here (the lock provider, or the caller's word checked against the
    timeline as of the clock's now); `ActiveWriterError` naming what stands against it otherwise."""
    provider = data_table.write_config.get(opt.LOCK_PROVIDER)
    if provider:
        return f"under the lock provider {provider}, shared with the writers"
    where = data_table.base_path
    if not no_active_writer:
        raise ActiveWriterError(
            f"{where}: a writer runs the metadata table's services inline after its commits; run them "
            "here only under the Hudi lock provider the writers share (hoodie.write.lock.provider) or, "
            "with the writers stopped, with --no-active-writer. Nothing was changed")
    now = clock()
    timeline = data_table.reload_timeline()
    failed = set()
    if data_table.write_config.get(opt.FAILED_WRITES_CLEANER_POLICY) == "LAZY":
        heartbeat = HeartbeatConfig.from_write_config(data_table.write_config)
        failed = {i.timestamp for i in failed_writes(data_table, heartbeat, int(now.timestamp() * 1000))}
    pending = timeline.filter_pending().filter(lambda i: i.timestamp not in failed)
    if pending:
        raise ActiveWriterError(
            f"{where}: --no-active-writer, but data instant(s) {', '.join(pending.timestamps[:5])} are "
            f"pending: roll back or finish them first (`hudi-assets metadata {where} --services` names "
            "them). Nothing was changed")
    an_hour_ago = now - timedelta(milliseconds=QUIET_PERIOD_MS)
    horizon = format_instant_time(now_in_zone(data_table.config.timeline_timezone, an_hour_ago))
    recent = [i.timestamp for i in timeline.commits_timeline().filter_completed()
              if i.timestamp[:17] > horizon]
    if recent:
        raise ActiveWriterError(
            f"{where}: --no-active-writer, but data write(s) {', '.join(recent[:5])} completed in the "
            "last hour: a writer may still be running. Nothing was changed")
    return "--no-active-writer: no pending data instant and none completed in the last hour"


class MetadataServices:
    """The metadata table services of one data table (table versions 6, 8 and 9), built like
    the other services: `(table, engine, clock, listener)` held for the whole run."""

    def __init__(self, table: HoodieTable, engine: Engine | None = None, clock: Clock = wall_clock,
                 listener: Listener = QUIET):
        """`table`: the data table. `listener`: hears the compaction's steps (`Step.COMPACTION_*`)
        and those of the metadata table's clean and archive (a test crashes a run there)."""
        self.table = table
        self.engine = engine
        self.clock = clock
        self.listener = with_metrics(table, listener)  # reports HoodieMetrics' metrics when on

    @cached_property
    def metadata_table(self) -> HoodieTable:
        """The metadata table as a table of its own, opened once per service object; each step
        reads its timeline again."""
        return metadata_table(self.table)

    def status(self) -> MetadataServicesStatus:
        return services_status(self.table, int(self.clock().timestamp() * 1000), self.metadata_table)

    def run(self, services: tuple[str, ...] = SERVICES, *, dry_run: bool = False,
            no_active_writer: bool = False) -> ServicesResult:
        """Run `services` (any of "compaction", "clean", "archive") in Hudi's order, under the data
        table's lock; a dry run says what would be done and writes nothing."""
        self._refuse_unsupported()
        if not dry_run:
            why = check_no_other_writer(self.table, no_active_writer, self.clock)
            log.info("metadata table services of %s run %s", self.table.base_path, why)
        result = ServicesResult(dry_run, self.status())
        if dry_run:
            return result
        with table_lock(self.table, "metadata table services"):
            if set(services) == set(SERVICES):
                # Under LAZY, the data table's failed writes go first, as the data table's clean does.
                data_cleaner = Cleaner.for_table(self.table, self.engine, self.clock, self.listener)
                data_cleaner.roll_back_failed_writes()
            if "compaction" in services:
                self._finish_pending_compaction(result)
            if "clean" in services:
                self._clean(result)
            if "compaction" in services:
                self._compact(result)
            if "archive" in services:
                self._archive(result)
        result.after = self.status()
        return result

    def _refuse_unsupported(self) -> None:
        mdt = self.metadata_table
        if mdt.config.table_version not in WRITTEN_METADATA_VERSIONS:
            versions = ", ".join(map(str, sorted(WRITTEN_METADATA_VERSIONS)))
            raise UnsupportedTableError(f"{mdt.storage.uri(PROPERTIES_FILE)}: metadata table version "
                                        f"{mdt.config.table_version}; only versions {versions} are written")

    def _finish_pending_compaction(self, result: ServicesResult) -> None:
        metadata = read_metadata(self.table)
        pending = pending_compaction(metadata)
        if pending is not None:
            log.info("completing the pending metadata table compaction %s", pending.timestamp)
            complete_pending_compaction(metadata, pending, listener=self.listener)
            result.compacted.append(pending.timestamp)

    def _compact(self, result: ServicesResult) -> None:
        metadata = read_metadata(self.table)
        max_delta_commits = self.table.write_config.get(opt.METADATA_COMPACT_MAX_DELTA_COMMITS)
        instant_time = compaction_due(metadata, max_delta_commits, self.clock())
        if instant_time is None:
            return
        schedule_compaction(metadata, instant_time)
        self.listener.reached(Step.COMPACTION_REQUESTED)
        execute_compaction(read_metadata(self.table), instant_time, listener=self.listener)
        result.compacted.append(instant_time)

    def _archive(self, result: ServicesResult) -> None:
        """`writeClient.archive()` of the metadata table, fenced by the data table."""
        archiver = HoodieTimelineArchiver.for_table(self.metadata_table, self.listener)
        result.archived = len(archiver.archive().selection.instants)

    def _clean(self, result: ServicesResult) -> None:
        """`cleanIfNecessary`: the clean Hudi's writer runs on the metadata table, at the latest
        deltacommit's time + `002`, with the metadata table's own retention; pending cleans first.
        Judged now, under the lock (after any compaction of this run), on the plan it then requests."""
        mdt = self.metadata_table
        cleaner = Cleaner.for_table(mdt, self.engine, self.clock, self.listener)
        with table_lock(mdt, "clean"):
            clean, plan = clean_decision(cleaner)
            if clean.due and plan is not None:
                cleaner.request(plan)
            done = cleaner.run_pending()
        result.cleaned += [c.instant for c in done.executed]
        result.files_cleaned += done.files_deleted
