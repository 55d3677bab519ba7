"""What the metadata table's services would do now and what blocks them, by name (issue: MDT services
without a data write). Reads only.

Hudi 0.15's writer runs them after each data commit (`HoodieBackedTableMetadataWriter
.performTableServices`): a pending compaction is finished first; the clean runs (instant: latest
deltacommit + `002`) unless fewer than 3 instants completed since the last compaction (a buffer for
readers that opened its log files); the compaction (latest deltacommit + `001`) once
`hoodie.metadata.compact.max.delta.commits` deltacommits have piled up and no data instant at or
before the latest deltacommit is pending; then the archive, fenced by the data table's earliest
commit or pending instant. Hudi 1.x (table versions 8/9) cleans and compacts at fresh instant times,
the compaction unblocked by pending data instants (`metadata.compaction`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from hudi_assets import config_options as opt
from hudi_assets.archive import HoodieTimelineArchiver
from hudi_assets.clean import Cleaner
from hudi_assets.clean.cleaner import METADATA_CLEAN_SUFFIX
from hudi_assets.clean.plan import CleanerPlan
from hudi_assets.clean.trigger import needs_cleaning
from hudi_assets.heartbeat import HeartbeatConfig, is_heartbeat_expired, last_heartbeat_ms
from hudi_assets.metadata.compaction import (
    compaction_due,
    compaction_instant_time,
    deltacommits_since_compaction,
    fresh_compaction_time,
    pending_compaction,
    takes_fresh_time,
)
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.metadata_services.write_config import metadata_table, read_metadata
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, Instant
from hudi_assets.timeline.instant_time import parse_instant_time

INSTANTS_BEFORE_CLEAN = 3  # cleanIfNecessary: completed instants after the last compaction


@dataclass(frozen=True)
class Blocker:
    """One thing that holds a service back: the instant (or setting) and why."""

    instant: str
    action: str
    reason: str


@dataclass
class ServiceStatus:
    due: bool
    instant: str | None = None
    blocked_by: list[Blocker] = field(default_factory=list)
    detail: str = ""


@dataclass(frozen=True)
class FileGroupLogs:
    partition: str
    file_id: str
    log_files: int
    log_bytes: int
    base_file: str | None


@dataclass
class MetadataServicesStatus:
    base_path: str
    deltacommits_since_compaction: int
    max_delta_commits: int
    latest_compaction: str | None
    compaction: ServiceStatus
    clean: ServiceStatus
    archive: ServiceStatus
    file_groups: list[FileGroupLogs]
    retention: dict[str, str]

    @property
    def log_files(self) -> int:
        return sum(g.log_files for g in self.file_groups)

    @property
    def log_bytes(self) -> int:
        return sum(g.log_bytes for g in self.file_groups)

    @property
    def due(self) -> bool:
        return self.compaction.due or self.clean.due or self.archive.due

    def to_dict(self) -> dict[str, Any]:
        view = asdict(self)
        view.update(log_files=self.log_files, log_bytes=self.log_bytes)
        return view


def services_status(data_table: HoodieTable, now_ms: int | None = None,
                    mdt: HoodieTable | None = None, *,
                    metadata: MetadataTable | None = None) -> MetadataServicesStatus:
    """The metadata table's services as its writer would run them now (`mdt`: the metadata table as
    a table of its own, when the caller has it open; its timeline is read again; `metadata`: the
    metadata table read by `read_metadata`, when the caller has read it)."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    metadata = metadata or read_metadata(data_table)
    mdt = mdt or metadata_table(data_table)
    max_delta = data_table.write_config.get(opt.METADATA_COMPACT_MAX_DELTA_COMMITS)
    latest = metadata.latest_compaction()
    since = deltacommits_since_compaction(metadata)
    groups = [FileGroupLogs(p, s.file_id, len(s.log_files), sum(f.size for f in s.log_files),
                            s.base_file.name if s.base_file else None)
              for p in metadata.partitions for s in metadata.file_slices(p)]
    return MetadataServicesStatus(
        base_path=data_table.base_path, deltacommits_since_compaction=len(since),
        max_delta_commits=max_delta, latest_compaction=latest.timestamp if latest else None,
        compaction=compaction_status(data_table, metadata, len(since), max_delta, now_ms),
        clean=clean_decision(Cleaner.for_table(mdt))[0], archive=archive_status(mdt), file_groups=groups,
        retention={key: mdt.write_config.text(option) for option in (
            opt.CLEANER_POLICY, opt.CLEANER_COMMITS_RETAINED, opt.KEEP_MIN_COMMITS, opt.KEEP_MAX_COMMITS)
            for key in [option.key]})


def compaction_status(data_table: HoodieTable, metadata: MetadataTable, since: int, max_delta: int,
                      now_ms: int) -> ServiceStatus:
    pending = pending_compaction(metadata)
    if pending is not None:
        return ServiceStatus(True, pending.timestamp, detail=f"pending compaction {pending.timestamp} "
                             f"({pending.state.name.lower()}) is completed first")
    latest = metadata.timeline.filter_completed().filter_actions({DELTA_COMMIT}).last()
    if latest is None:
        return ServiceStatus(False, detail="the metadata table has no completed deltacommit")
    detail = f"{since} deltacommits since the last compaction (due at {max_delta})"
    if takes_fresh_time(metadata):  # Hudi 1.x: no pending data instant blocks it
        # As of the service's clock, made once: the time shown is the one the run's verdict judged.
        instant = fresh_compaction_time(metadata, datetime.fromtimestamp(now_ms / 1000, UTC))
        return ServiceStatus(compaction_due(metadata, max_delta, fresh_time=instant) is not None, instant,
                             [], detail)
    instant = compaction_instant_time(latest.timestamp)
    blockers = [_data_blocker(data_table, i, now_ms) for i in metadata.data_timeline.filter_pending()
                if i.timestamp <= latest.timestamp]
    if instant in metadata.timeline.filter_completed().timestamps:
        blockers.append(Blocker(instant, COMMIT, "a compaction at this time completed already; the next "
                                                 "deltacommit moves it on"))
    # The verdict is the run's own (`compaction_due`); the blockers say why it is no.
    return ServiceStatus(compaction_due(metadata, max_delta) is not None, instant, blockers, detail)


def _data_blocker(data_table: HoodieTable, instant: Instant, now_ms: int) -> Blocker:
    """A pending data instant at or before the latest metadata deltacommit, and the way out."""
    started = parse_instant_time(instant.timestamp[:17])
    age = f"{(now_ms - started.timestamp() * 1000) / 3_600_000:.0f} h" if started else "an unknown time"
    state = instant.state.name.lower()
    if instant.action in (COMPACTION, REPLACE_COMMIT) or instant.action not in (COMMIT, DELTA_COMMIT):
        return Blocker(instant.timestamp, instant.action,
                       f"data-table {instant.action} {instant.timestamp} is {state} since {age}: a table "
                       "service of the data table; let its writer finish it")
    heartbeat = HeartbeatConfig.from_write_config(data_table.write_config)
    storage, ts = data_table.storage, instant.timestamp
    if last_heartbeat_ms(storage, ts) == 0:
        beat = "no heartbeat"
    elif is_heartbeat_expired(storage, ts, heartbeat, now_ms):
        beat = "heartbeat expired"
    else:
        beat = "heartbeat alive: its writer is running"
    return Blocker(ts, instant.action,
                   f"data-table instant {ts} ({instant.action}) is {state} since {age}, {beat}: "
                   f"`hudi-assets rollback {data_table.base_path} {ts}` removes it")


def clean_decision(cleaner: Cleaner) -> tuple[ServiceStatus, CleanerPlan | None]:
    """The metadata table's clean (`cleaner`: of the metadata table) and, when it got as far, the
    plan it judged by, so a run requests that plan rather than planning again."""
    pending = cleaner.pending()  # reads the timeline again
    timeline = cleaner.table.active_timeline
    completed = timeline.filter_completed()
    latest = completed.filter_actions({DELTA_COMMIT}).last()
    suffixed = not cleaner.table.config.is_hudi_1x
    instant = latest.timestamp + METADATA_CLEAN_SUFFIX if latest and suffixed else None  # 1.x: a new time
    if pending:
        return ServiceStatus(True, pending[0].instant.timestamp,
                             detail=f"pending clean {pending[0].instant.timestamp} is completed first"), None
    compaction = completed.filter_actions({COMMIT}).last()
    if compaction is not None:
        after = len(completed.filter(lambda i: i.timestamp > compaction.timestamp))
        if after < INSTANTS_BEFORE_CLEAN:
            reason = (f"{after} instants completed since the compaction {compaction.timestamp}; the "
                      f"writer cleans after {INSTANTS_BEFORE_CLEAN} (a buffer for readers)")
            return ServiceStatus(False, instant, [Blocker(compaction.timestamp, COMMIT, reason)]), None
    config = cleaner.config
    if not needs_cleaning(cleaner.table, config):
        return ServiceStatus(False, instant, detail="the clean trigger is not reached"), None
    plan = cleaner.plan()
    return ServiceStatus(plan.total_files > 0, instant,
                         detail=f"{plan.total_files} files to delete ({config.policy}, "
                                f"{config.commits_retained} commits retained)"), plan


def archive_status(mdt: HoodieTable) -> ServiceStatus:
    """The metadata table's archive; blocked by the data table's fence when it holds back instants
    the keep range would archive."""
    selection = HoodieTimelineArchiver.for_table(mdt).plan()
    held_back = len(selection.clean_rollback) + len(selection.commits) - len(selection.instants)
    blockers = [Blocker(f.instant, f.name, f.reason) for f in selection.fences
                if f.instant and f.name == "data table"] if held_back else []
    return ServiceStatus(bool(selection), None, blockers,
                         detail=f"{len(selection.instants)} instants to archive"
                                + (f", {held_back} held back" if held_back else ""))
