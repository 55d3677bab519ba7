"""`table_status`: what a table's services are doing, in one read of the timeline plus the one
listing of the partitions the clean plan reads anyway (or the metadata table's): the timeline's
counts, pending instants with their age and heartbeat, each service due or not and why, the
compaction backlog, file sizes and small files, and the metadata table's lag and services.

On table versions 8 and 9, which hudi-assets reads but does not clean or archive, the services say
so and the rest is reported as read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hudi_assets import config_options as opt
from hudi_assets.archive.archiver import HoodieTimelineArchiver
from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.clean.planner import CleanPlanner, PartitionDecision
from hudi_assets.clean.trigger import commits_since_last_clean
from hudi_assets.engine import Engine, LocalEngine, gc_paused
from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.fsview import discover_partitions
from hudi_assets.heartbeat import HeartbeatConfig, last_heartbeat_ms
from hudi_assets.metadata_services.status import services_status
from hudi_assets.metadata_services.write_config import read_metadata
from hudi_assets.status.files import FactsOfPartitions, PartitionFacts, compaction_backlog, files_summary
from hudi_assets.status.services import (
    CleanOutlook,
    ServiceHealth,
    archive_health,
    clean_health,
    metadata_service_health,
)
from hudi_assets.storage import DirectoryListing
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import CLEAN, COMMIT, DELTA_COMMIT, ROLLBACK, Instant
from hudi_assets.timeline.instant_time import instant_epoch, wall_clock
from hudi_assets.timeline.timeline import ActiveTimeline

PENDING_KEYS = ("instant", "action", "state", "age_seconds", "heartbeat")


@dataclass
class TableStatus:
    """The report; `to_dict` is `hudi-assets status --json`."""

    table: dict[str, Any]
    timeline: dict[str, Any]
    pending: list[dict[str, Any]]
    clean: ServiceHealth
    archive: ServiceHealth
    compaction_backlog: dict[str, Any] | None
    files: dict[str, Any]
    metadata_table: dict[str, Any] | None
    metadata_services: dict[str, ServiceHealth]

    def services(self) -> dict[str, ServiceHealth]:
        """Every service by name, the metadata table's as `metadata <service>`."""
        return {"clean": self.clean, "archive": self.archive,
                **{f"metadata {name}": health for name, health in self.metadata_services.items()}}

    def to_dict(self) -> dict[str, Any]:
        metadata = None if self.metadata_table is None else {
            **self.metadata_table, "services": {k: v.to_dict() for k, v in self.metadata_services.items()}}
        return {"table": self.table, "timeline": self.timeline, "pending": self.pending,
                "clean": self.clean.to_dict(), "archive": self.archive.to_dict(),
                "compaction_backlog": self.compaction_backlog, "files": self.files,
                "metadata_table": metadata}


def table_status(table: HoodieTable, engine: Engine | None = None,
                 now: datetime | None = None) -> TableStatus:
    """The status of `table` as of `now` (default: the wall clock)."""
    now = now or wall_clock()
    now_s = now.timestamp()
    engine = engine or LocalEngine()
    active = table.active_timeline
    zone = table.config.timeline_timezone

    def age(instant: str) -> float | None:
        epoch = instant_epoch(instant, zone)
        return None if epoch is None else round(now_s - epoch, 1)

    pending = pending_instants(table, active, age, int(now_s * 1000))
    clean, facts = _clean(table, engine, now)
    archive = archive_health(active, table.is_mor, HoodieTimelineArchiver.for_table(table).plan())
    limit = table.write_config.get(opt.PARQUET_SMALL_FILE_LIMIT)
    metadata, metadata_services = _metadata_table(table, int(now_s * 1000))
    return TableStatus(
        table={"name": table.config.name, "base_path": table.base_path, "table_type": table.config.table_type,
               "table_version": table.config.table_version, "timeline_timezone": zone,
               "as_of": now.isoformat()},
        timeline=timeline_facts(table, active, pending, age, now_s), pending=pending, clean=clean,
        archive=archive,
        compaction_backlog=_backlog(active, facts) if table.is_mor else None,
        files=files_summary(facts, limit), metadata_table=metadata, metadata_services=metadata_services)


def _backlog(active: ActiveTimeline, facts: list[PartitionFacts]) -> dict[str, Any]:
    """The log files waiting for compaction, with the deltacommits since the last compaction and the
    compactions requested but not done."""
    last = active.filter_actions({COMMIT}).filter_completed().last()
    since = active.filter_actions({DELTA_COMMIT}).filter_completed().filter(
        lambda i: last is None or i.timestamp > last.timestamp)
    return {**compaction_backlog(facts), "last_compaction": last.timestamp if last else None,
            "deltacommits_since_compaction": len(since),
            "pending_compactions": active.pending_compaction_timeline().timestamps}


def pending_instants(table: HoodieTable, active: ActiveTimeline, age, now_ms: int) -> list[dict[str, Any]]:
    """Every pending instant, oldest first, with its heartbeat: `alive`, `expired` (older than
    interval x tolerable misses) or `none` (no heartbeat file)."""
    heartbeat = HeartbeatConfig.from_write_config(table.write_config)
    rows = []
    for instant in active.filter_pending():
        beat = last_heartbeat_ms(table.storage, instant.timestamp)
        state = "none" if beat == 0 else "expired" if now_ms - beat > heartbeat.max_allowed_ms else "alive"
        rows.append(dict(zip(PENDING_KEYS, (instant.timestamp, instant.action, instant.state.name,
                                            age(instant.timestamp), state), strict=True)))
    return rows


def timeline_facts(table: HoodieTable, active: ActiveTimeline, pending: list[dict[str, Any]],
                   age, now_s: float) -> dict[str, Any]:
    archived = table.timeline_layout.count_archived_instants(table.storage, table.config)
    by_action: dict[str, int] = {}
    for instant in active:
        by_action[instant.action] = by_action.get(instant.action, 0) + 1
    oldest: dict[str, dict[str, Any]] = {}
    for row in pending:
        oldest.setdefault(row["action"], row)
    last = {action: _last_completed(active, action, now_s) for action in (CLEAN, ROLLBACK)}
    last["archive"] = _last_archive(table, now_s)
    latest = active.last()
    return {"active_instants": len(active), "archived_instants": archived,
            "active_by_action": by_action, "latest_instant": latest.timestamp if latest else None,
            "latest_instant_age_seconds": age(latest.timestamp) if latest else None,
            "oldest_pending": oldest, "last": last}


def _last_completed(active: ActiveTimeline, action: str, now_s: float) -> dict[str, Any] | None:
    """The last completed instant of `action` and how long ago it completed (its state file's time)."""
    instant = active.filter_actions({action}).filter_completed().last()
    if instant is None:
        return None
    completed_ms = active.state_files[instant].mtime_ms
    return {"instant": instant.timestamp, "age_seconds": round(now_s - completed_ms / 1000, 1)}


def _last_archive(table: HoodieTable, now_s: float) -> dict[str, Any] | None:
    """The newest file of the archived timeline and how long ago it was written."""
    folder = table.timeline_layout.paths.history_path(table.config)
    files = [f for f in table.storage.list(folder) if not f.is_dir]
    if not files:
        return None
    newest = max(files, key=lambda f: f.mtime_ms)
    return {"file": newest.name, "age_seconds": round(now_s - newest.mtime_ms / 1000, 1)}


def _clean(table: HoodieTable, engine: Engine, now: datetime) -> tuple[ServiceHealth, list[PartitionFacts]]:
    """The clean's verdict and the partitions' facts, from one listing: each partition is decided by
    the planner's rule in the task that lists it, beside its facts."""
    cleaner = Cleaner.for_table(table, engine, lambda: now)
    pending = cleaner.pending()
    plans = [p for p in pending if p.plan is not None]
    validation = cleaner.validate(pending) if plans else None
    planner = CleanPlanner(table, cleaner.config, engine, now, with_sizes=True)
    ectr = planner.earliest_commit_to_retain()
    decisions, facts = _list_facts(table, engine, planner, ectr)
    outlook = CleanOutlook(
        commits_since_last_clean=commits_since_last_clean(table), pending=pending, validation=validation,
        ectr=ectr, files=sum(len(d.files) for d in decisions),
        bytes_to_reclaim=sum(sum(d.file_sizes or ()) for d in decisions),
        failed_deletes_to_retry=sum(map(len, cleaner.failed_deletes_to_retry().values())))
    return clean_health(planner, outlook, now), facts


def _list_facts(table: HoodieTable, engine: Engine, planner: CleanPlanner,
                ectr: Instant | None) -> tuple[list[PartitionDecision], list[PartitionFacts]]:
    """The plan's decisions and every partition's facts, from one listing: through the metadata table
    when the planner reads it (the plan decides from that read); else one discovery of the table in
    which each partition task decides and sums up its partition."""
    limit = table.write_config.get(opt.PARQUET_SMALL_FILE_LIMIT)
    of = FactsOfPartitions(table.storage, planner.view.slicing, planner.view.is_committed, limit).of
    scope = planner.scope(ectr)
    if planner.metadata is not None:
        listed = planner.metadata.files_in_partitions(planner.metadata.partition_paths())
        facts = [of(p, list(files), DirectoryListing(list(files), [], dict(files)))
                 for p, files in listed.items()]
        return planner.decide(scope, ectr, listed), facts
    decide = planner.partition_decider(ectr)
    wanted = None if scope is None else set(scope)

    def visit(partition: str, names: list[str], listing: DirectoryListing):
        planned = wanted is None or partition in wanted
        return decide(partition, names, listing) if planned else None, of(partition, names, listing)

    parallelism = table.write_config.get(opt.CLEANER_PARALLELISM)
    with gc_paused():
        found = discover_partitions(table.storage, engine, parallelism, visit)
    decisions = [d for _, (d, _) in found if d is not None]
    return decisions, [f for _, (_, f) in found]


def _metadata_table(table: HoodieTable,
                    now_ms: int) -> tuple[dict[str, Any] | None, dict[str, ServiceHealth]]:
    """The metadata table's lag behind the data table and its services (what blocks them)."""
    if not table.config.has_metadata_table or table.is_metadata_table:
        return None, {}
    try:
        metadata = read_metadata(table)
        status = services_status(table, now_ms, metadata=metadata)
    except HudiAssetsError as error:
        return {"error": str(error)}, {}
    latest = metadata.timeline.filter_completed().filter_actions({DELTA_COMMIT}).last()
    latest_ts = latest.timestamp if latest else ""
    data = table.active_timeline.filter_completed()
    behind = [i.timestamp for i in data if i.timestamp > latest_ts and i.action != "savepoint"]
    facts = {"base_path": f"{table.base_path}/.hoodie/metadata", "latest_deltacommit": latest_ts or None,
             "data_instants_behind": len(behind), "oldest_instant_behind": behind[0] if behind else None,
             "latest_compaction": status.latest_compaction,
             "deltacommits_since_compaction": status.deltacommits_since_compaction,
             "max_delta_commits": status.max_delta_commits, "log_files": status.log_files,
             "log_bytes": status.log_bytes}
    # Due by its own trigger even where a blocker stops it: that is what "blocked" means.
    compaction_due = status.compaction.due or status.deltacommits_since_compaction >= status.max_delta_commits
    services = {"compaction": metadata_service_health(status.compaction, compaction_due)}
    for name in ("clean", "archive"):
        service = getattr(status, name)
        services[name] = metadata_service_health(service, service.due or bool(service.blocked_by))
    return facts, services
