"""`MetadataServices`: the metadata table's compaction, clean and archive run without a data write,
in the order Hudi 0.15's writer runs them after a data commit (`performTableServices`): a pending
compaction is finished, then the clean, the compaction and the archive.

Who else may be compacting: a Java writer runs the same services inline after its commits, under
the same instant names. They run here only under a Hudi lock provider shared with the writers
(`hoodie.write.lock.provider`, held on the data table for the whole run, as a writer holds it while
it writes the metadata table), or when the caller states that the writers are stopped
(`no_active_writer`) and the timeline agrees: no pending data instant and no write (commit,
deltacommit, replacecommit) completed in the last hour. Our own rollbacks and cleans do not count,
nor, under LAZY, the failed writes (expired heartbeat) that `--run-services` rolls back first.
Otherwise `ActiveWriterError` (exit 2), before anything is written.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from hudi_assets import config_options as opt
from hudi_assets.archive import HoodieTimelineArchiver
from hudi_assets.archive.archiver import ArchiveHooks
from hudi_assets.clean import CleanHooks
from hudi_assets.clean.config import CleanConfig
from hudi_assets.clean.validation import validate_plans
from hudi_assets.clean.workflow import pending_cleans, plan_clean, roll_back_failed_writes, run_pending
from hudi_assets.exceptions import HudiAssetsError, HudiInputError, UnsupportedTableError
from hudi_assets.heartbeat import HeartbeatConfig
from hudi_assets.metadata.compaction import (
    compaction_due,
    complete_pending_compaction,
    execute_compaction,
    pending_compaction,
    schedule_compaction,
)
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.metadata_services.status import MetadataServicesStatus, services_status
from hudi_assets.metadata_services.write_config import metadata_table
from hudi_assets.rollback.planner import failed_writes
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import PROPERTIES_FILE
from hudi_assets.timeline.instant import CLEAN, Instant, State
from hudi_assets.timeline.instant_time import format_instant_time, now_in_zone
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


def check_no_other_writer(data_table: HoodieTable, no_active_writer: bool, now_ms: int | None = None) -> str:
    """Why the services may run here (the lock provider, or the caller's word checked against the
    timeline); `ActiveWriterError` naming what stands against it otherwise."""
    provider = data_table.write_config.get(opt.LOCK_PROVIDER)
    if provider:
        return f"under the lock provider {provider}, shared with the writers"
    where = data_table.base_path
    if not no_active_writer:
        raise ActiveWriterError(
            f"{where}: a writer runs the metadata table's services inline after its commits; run them "
            "here only under the Hudi lock provider the writers share (hoodie.write.lock.provider) or, "
            "with the writers stopped, with --no-active-writer. Nothing was changed")
    timeline = data_table.reload_timeline()
    failed = set()
    if data_table.write_config.get(opt.FAILED_WRITES_CLEANER_POLICY) == "LAZY":
        heartbeat = HeartbeatConfig.from_write_config(data_table.write_config)
        failed = {i.timestamp for i in failed_writes(data_table, heartbeat, now_ms)}
    pending = timeline.filter_pending().filter(lambda i: i.timestamp not in failed)
    if pending:
        raise ActiveWriterError(
            f"{where}: --no-active-writer, but data instant(s) {', '.join(pending.timestamps[:5])} are "
            f"pending: roll back or finish them first (`hudi-assets metadata {where} --services` names "
            "them). Nothing was changed")
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    an_hour_ago = datetime.fromtimestamp((now_ms - QUIET_PERIOD_MS) / 1000, UTC)
    horizon = format_instant_time(now_in_zone(data_table.config.timeline_timezone, an_hour_ago))
    recent = [i.timestamp for i in timeline.commits_timeline().filter_completed()
              if i.timestamp[:17] > horizon]
    if recent:
        raise ActiveWriterError(
            f"{where}: --no-active-writer, but data write(s) {', '.join(recent[:5])} completed in the "
            "last hour: a writer may still be running. Nothing was changed")
    return "--no-active-writer: no pending data instant and none completed in the last hour"


class MetadataServices:
    """The metadata table services of one data table (table version 6 metadata tables)."""

    def __init__(self, data_table: HoodieTable, reached: Callable[[str, int], None] | None = None,
                 clean_hooks: CleanHooks | None = None, archive_hooks: ArchiveHooks | None = None):
        """`reached(step, count)`: the compaction's steps ("compaction_requested" and those of
        `execute_compaction`); `clean_hooks`, `archive_hooks`: the metadata table's clean and archive
        (a test crashes a run there)."""
        self.data_table = data_table
        self.reached = reached or (lambda step, count: None)
        self.clean_hooks = clean_hooks
        self.archive_hooks = archive_hooks

    def status(self) -> MetadataServicesStatus:
        return services_status(self.data_table)

    def run(self, services: tuple[str, ...] = SERVICES, *, dry_run: bool = False,
            no_active_writer: bool = False) -> ServicesResult:
        """Run `services` (any of "compaction", "clean", "archive") in Hudi's order, under the data
        table's lock; a dry run says what would be done and writes nothing."""
        self._refuse_unsupported()
        result = ServicesResult(dry_run, self.status())
        if dry_run:
            return result
        check_no_other_writer(self.data_table, no_active_writer)
        with table_lock(self.data_table, "metadata table services"):
            if set(services) == set(SERVICES):
                # Under LAZY, the data table's failed writes go first, as the data table's clean does.
                data_clean = CleanConfig.from_write_config(self.data_table.write_config)
                roll_back_failed_writes(self.data_table, data_clean)
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
        mdt = metadata_table(self.data_table)
        if mdt.config.table_version != 6:
            raise UnsupportedTableError(f"{mdt.storage.uri(PROPERTIES_FILE)}: metadata table version "
                                        f"{mdt.config.table_version}; only version 6 is written")

    def _finish_pending_compaction(self, result: ServicesResult) -> None:
        metadata = MetadataTable(self.data_table.storage)
        pending = pending_compaction(metadata)
        if pending is not None:
            log.info("completing the pending metadata table compaction %s", pending.timestamp)
            complete_pending_compaction(metadata, pending)
            result.compacted.append(pending.timestamp)

    def _compact(self, result: ServicesResult) -> None:
        metadata = MetadataTable(self.data_table.storage)
        instant_time = compaction_due(metadata, self.data_table.write_config.get(
            opt.METADATA_COMPACT_MAX_DELTA_COMMITS))
        if instant_time is None:
            return
        schedule_compaction(metadata, instant_time)
        self.reached("compaction_requested", 0)
        execute_compaction(MetadataTable(self.data_table.storage), instant_time, reached=self.reached)
        result.compacted.append(instant_time)

    def _archive(self, result: ServicesResult) -> None:
        """`writeClient.archive()` of the metadata table, fenced by the data table."""
        archiver = HoodieTimelineArchiver.for_table(metadata_table(self.data_table), self.archive_hooks)
        result.archived = len(archiver.archive_if_required().selection.instants)

    def _clean(self, result: ServicesResult) -> None:
        """`cleanIfNecessary`: the clean Hudi's writer runs on the metadata table, at the latest
        deltacommit's time + `002`, with the metadata table's own retention; pending cleans first."""
        clean = result.before.clean if not result.compacted else self.status().clean
        mdt = metadata_table(self.data_table)
        config = CleanConfig.from_write_config(mdt.write_config)
        with table_lock(mdt, "clean"):
            if clean.due and not pending_cleans(mdt):
                self._request_clean(mdt, config, clean.instant)
            done = run_pending(mdt, config, hooks=self.clean_hooks)
        result.cleaned += [c.instant for c in done.executed]
        result.files_cleaned += done.files_deleted

    @staticmethod
    def _request_clean(mdt: HoodieTable, config: CleanConfig, instant_time: str) -> None:
        plan, _ = plan_clean(mdt, config)
        if plan.total_files == 0:
            return
        requested = Instant(instant_time, CLEAN, State.REQUESTED)
        report = validate_plans(mdt, config, [(instant_time, f"new clean plan {requested.file_name}", plan)])
        report.raise_if_unsafe(mdt.base_path, requested=False)
        if not mdt.storage.create_if_absent(mdt.active_timeline.state_file_path(requested), plan.serialize()):
            raise HudiAssetsError(f"{mdt.storage.uri(mdt.active_timeline.state_file_path(requested))} "
                                  "already exists")
