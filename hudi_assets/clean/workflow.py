"""The clean workflow every face runs: plan, validate, request, execute (Hudi's write client `clean()`).

- `pending_cleans`: the requested/inflight cleans and their plans, in time order.
- `validate_pending`: the safety rule (`clean.validation`) over every pending plan at once.
- `schedule_clean`: plan (CleanPlanner, plus the files earlier cleans failed to delete), validate
  in memory, then write `<t>.clean.requested`: an unsafe plan never reaches the timeline, where a
  Hudi writer would execute it.
- `run_pending`: validate every pending plan, then execute them in time order.
- `clean_table`: one clean as Hudi's client runs it.
- `discard_pending`: the way out of a refused plan, keeping a copy of its state files.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hudi_assets.clean.config import CleanConfig, CleaningPolicy
from hudi_assets.clean.executor import CleanActionExecutor, CleanHooks, ExecutedClean, Progress
from hudi_assets.clean.plan import CleanerPlan, CleanFileInfo
from hudi_assets.clean.planner import CleanPlanner
from hudi_assets.clean.trigger import needs_cleaning
from hudi_assets.clean.validation import ValidationReport, validate_plans
from hudi_assets.config_options import MAX_EXPECTED_CLOCK_SKEW_MS
from hudi_assets.discard import discard_instant
from hudi_assets.engine import Engine
from hudi_assets.exceptions import DeleteFailedError, HudiAssetsError, HudiInputError, UnsupportedTableError
from hudi_assets.heartbeat import HeartbeatConfig
from hudi_assets.metadata.clean_records import refuse_unknown_partitions
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.rollback import RollbackHooks, failed_writes, pending_rollbacks, rollback_failed_writes
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import CLEAN, Instant, State
from hudi_assets.timeline.instant_time import new_instant_time, refuse_future_instants
from hudi_assets.transaction import HeldLock, table_lock

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PendingClean:
    """A requested or inflight clean; `plan` is None for an empty state file."""

    instant: Instant
    plan_file: str  # full path of the state file holding the plan
    plan: CleanerPlan | None


@dataclass
class CleanResult:
    """What one run did: the cleans executed (oldest first) and the plan scheduled, if any."""

    executed: list[ExecutedClean] = field(default_factory=list)
    scheduled: str | None = None
    plan: CleanerPlan | None = field(default=None, repr=False)

    @property
    def completed(self) -> dict[str, int]:
        return {c.instant: c.files_deleted for c in self.executed}

    @property
    def files_deleted(self) -> int:
        return sum(c.files_deleted for c in self.executed)

    @property
    def partitions_deleted(self) -> int:
        return sum(c.partitions_deleted for c in self.executed)

    @property
    def failed(self) -> list[str]:
        return [rel for c in self.executed for rel in c.failed]


# ---------------------------------------------------------------------------------- refusals
def refuse_unsupported(table: HoodieTable, config: CleanConfig) -> None:
    refuse_future_instants(table, "clean")
    if table.config.has_metadata_table:
        refuse_unknown_partitions(table)
    if table.config.bootstrap_base_path and config.delete_bootstrap_base_file:
        raise UnsupportedTableError(f"{table.base_path}: deleting bootstrap base files is not supported")


# ------------------------------------------------------------------------------------ pending
def pending_cleans(table: HoodieTable) -> list[PendingClean]:
    """Every requested/inflight clean in time order, with the plan its state file holds (the
    inflight file repeats the plan; a 1.x writer may leave it empty, so the requested file wins)."""
    timeline = table.reload_timeline()
    found = []
    for instant in timeline.clean_timeline().filter_pending():
        source = instant.with_state(State.REQUESTED)
        if not timeline.has_state_file(source):
            source = instant
        data = timeline.read_details(source)
        path = table.storage.uri(timeline.state_file_path(source))
        plan = CleanerPlan.deserialize(data, path, table.base_path) if data else None
        found.append(PendingClean(instant, path, plan))
    return found


def validate_pending(table: HoodieTable, config: CleanConfig, pending: list[PendingClean] | None = None,
                     now: datetime | None = None, meanwhile: Callable[[], Any] | None = None
                     ) -> ValidationReport:
    """The safety rule over every pending plan: the rows the CLI and the Dagster check show.
    `meanwhile`: work done while forked workers check the partitions (`PlanValidator.validate`)."""
    if pending is None:
        pending = pending_cleans(table)
    else:
        table.reload_timeline()  # validated against the timeline as it is now, as after a fresh read
    return validate_plans(table, config, [(p.instant.timestamp, p.plan_file, p.plan)
                                          for p in pending if p.plan is not None], now, meanwhile)


# --------------------------------------------------------------------------------- scheduling
def failed_deletes_to_retry(table: HoodieTable) -> dict[str, list[str]]:
    """Files that completed cleans on the active timeline failed to delete and that still exist.
    Incremental planning never revisits their partitions, so the next plan names them again."""
    timeline = table.active_timeline
    retry: dict[str, list[str]] = {}
    for instant in timeline.clean_timeline().filter_completed():
        if not timeline.state_files[instant].size:
            continue
        for partition, stat in (metadata.completed_metadata(timeline, instant) or {}).get(
                "partitionMetadata", {}).items():
            for name in stat.get("failedDeleteFiles") or []:
                rel = f"{partition}/{name}" if partition else name
                if table.storage.exists(rel):
                    retry.setdefault(partition, []).append(rel)
    return retry


def plan_clean(table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
               now: datetime | None = None, with_sizes: bool = False) -> tuple[CleanerPlan, CleanPlanner]:
    """The plan Hudi 0.15 would request now, plus the files earlier cleans failed to delete
    (`with_sizes`: the planner also keeps the sizes of the files it plans, for a dry run)."""
    planner = CleanPlanner(table, config, engine, now, with_sizes)
    plan = planner.plan()
    by_versions = config.policy == CleaningPolicy.KEEP_LATEST_FILE_VERSIONS
    if plan.earliest_instant_to_retain is not None or by_versions:
        for partition, rels in failed_deletes_to_retry(table).items():
            files = plan.file_paths_to_delete.setdefault(partition, [])
            known = {f.file_path for f in files}
            for rel in rels:
                uri = table.storage.uri(rel)
                if uri not in known:
                    log.info("retrying the delete of %s, which an earlier clean failed to delete", uri)
                    files.append(CleanFileInfo(uri))
    return plan, planner


def planned_file_sizes(table: HoodieTable, plan: CleanerPlan,
                       planner: CleanPlanner | None = None) -> dict[str, list[int]]:
    """Sizes of a plan's files, per partition in plan order (0 for a file already gone): the planner's
    own, from its one listing of each partition, when it planned with sizes; the rest (a pending
    plan, files an earlier clean failed to delete) looked up without listing a partition again."""
    known_sizes = planner.file_sizes if planner is not None else {}
    sizes = {}
    for partition, files in plan.file_paths_to_delete.items():
        known = known_sizes.get(partition, [])
        if extra := files[len(known):]:
            names = (f.file_path.rpartition("/")[2] for f in extra)
            known = known + table.storage.file_sizes(partition, names)
        sizes[partition] = known
    return sizes


def _next_requested(table: HoodieTable, now: datetime | None) -> Instant:
    timeline = table.reload_timeline()
    instant_time = new_instant_time((i.timestamp for i in timeline.raw_instants),
                                    table.config.timeline_timezone, now,
                                    table.write_config.get(MAX_EXPECTED_CLOCK_SKEW_MS))
    return Instant(instant_time, CLEAN, State.REQUESTED)


def validate_new_plan(table: HoodieTable, config: CleanConfig, plan: CleanerPlan,
                      now: datetime | None = None) -> ValidationReport:
    """The safety rule over a plan not yet requested, as of the instant it would be requested at."""
    requested = _next_requested(table, now)
    return validate_plans(table, config, [(requested.timestamp, "new clean plan", plan)], now)


def request_clean(table: HoodieTable, config: CleanConfig, plan: CleanerPlan,
                  now: datetime | None = None, empty_last_clean: Instant | None = None) -> str | None:
    """Validate a plan in memory, then persist it as `<t>.clean.requested` at a new instant time.
    None (nothing written) when the plan lists no file, as Hudi drops such plans. `empty_last_clean`:
    the empty completed clean the planner found, deleted as Hudi does, once the plan passed."""
    if plan.total_files == 0 and empty_last_clean is None:
        return None
    with table_lock(table, "clean"):
        if plan.total_files == 0:
            _delete_empty_last_clean(table, empty_last_clean)
            return None
        return _request(table, config, plan, now, empty_last_clean)


def _delete_empty_last_clean(table: HoodieTable, instant: Instant | None) -> None:
    if instant is not None:  # Hudi deletes an empty last clean file (its plan scanned every partition)
        table.storage.delete_checked([table.active_timeline.state_file_path(instant)])


def _request(table: HoodieTable, config: CleanConfig, plan: CleanerPlan, now: datetime | None,
             empty_last_clean: Instant | None) -> str:
    requested = _next_requested(table, now)
    instant_time = requested.timestamp
    path = table.active_timeline.state_file_path(requested)
    report = validate_plans(table, config, [(instant_time, f"new clean plan {requested.file_name}", plan)],
                            now)
    report.raise_if_unsafe(table.base_path, requested=False)  # a refusal comes before the first delete
    _delete_empty_last_clean(table, empty_last_clean)
    if not table.storage.create_if_absent(path, plan.serialize()):
        raise HudiAssetsError(f"{requested.file_name} already exists")
    log.info("scheduled clean %s: %d files", instant_time, plan.total_files)
    return instant_time


def schedule_clean(table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
                   now: datetime | None = None, dry_run: bool = False) -> tuple[CleanerPlan, str | None]:
    """Plan a clean and, unless `dry_run` or the plan lists no file, validate and request it.
    Returns the plan and the new instant time (None when nothing was written)."""
    plan, planner = plan_clean(table, config, engine, now)
    if dry_run:
        return plan, None
    return plan, request_clean(table, config, plan, now, planner.empty_last_clean)


# ---------------------------------------------------------------------------------- execution
def run_pending(table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
                progress: Progress | None = None, hooks: CleanHooks | None = None,
                result: CleanResult | None = None, now: datetime | None = None, *,
                pending: list[PendingClean] | None = None) -> CleanResult:
    """Validate every pending plan (refusing all of them if one fails, before any delete), then
    execute them in time order. Raises `DeleteFailedError` after completing them when a file could
    not be deleted. `pending`: the pending cleans as the caller just read them under the table's
    lock (a plan of millions of files is not decoded twice)."""
    with table_lock(table, "clean") as lock:
        return _run_pending(table, config, engine, progress, hooks, result or CleanResult(), now, lock,
                            pending)


def _run_pending(table: HoodieTable, config: CleanConfig, engine: Engine | None, progress: Progress | None,
                 hooks: CleanHooks | None, result: CleanResult, now: datetime | None,
                 lock: HeldLock, pending: list[PendingClean] | None) -> CleanResult:
    if pending is None:
        pending = pending_cleans(table)
    else:
        table.reload_timeline()  # validated against the timeline as it is now, as after a fresh read
    # The first requested plan's inflight copy is encoded while its partitions are checked; it is
    # written only after every plan passed (executor.execute).
    inflight: dict[str, bytes] = {}
    first = next((c for c in pending if c.plan is not None), None)

    def encode_inflight() -> None:
        if first is not None and first.instant.is_requested:
            inflight[first.instant.timestamp] = first.plan.serialize()

    report = validate_pending(table, config, pending, now, encode_inflight)
    report.raise_if_unsafe(table.base_path)
    validated = {v.instant: v for v in report.plans}
    executor = CleanActionExecutor(table, config, engine, progress, hooks)
    for position, clean in enumerate(pending):
        if clean.plan is None:
            # Hudi deletes the empty state file (the inflight one first) and moves on.
            state_file = table.active_timeline.state_file_path(clean.instant)
            table.storage.delete_checked([state_file])
            log.warning("empty clean state file %s: deleted", table.storage.uri(state_file))
            continue
        checked = validated[clean.instant.timestamp]
        if position:  # an earlier clean ran since: check this one against the table as it is now
            again = validate_plans(table, config, [(clean.instant.timestamp, clean.plan_file, clean.plan)],
                                   now)
            again.raise_if_unsafe(table.base_path)
            checked = again.plans[0]
        lock.check_held()
        result.executed.append(executor.execute(clean.instant, clean.plan, checked,
                                                inflight.pop(clean.instant.timestamp, None)))
        table.reload_timeline()
    if result.failed:
        uris = [table.storage.uri(rel) for rel in result.failed]
        raise DeleteFailedError(
            f"{len(uris)} file(s) could not be deleted and are recorded as failed in the clean "
            f"metadata; the next clean retries them: {', '.join(uris[:5])}{', ...' if len(uris) > 5 else ''}",
            uris)
    return result


def roll_back_failed_writes(table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
                            now: datetime | None = None, hooks: RollbackHooks | None = None) -> None:
    """Under LAZY, the failed writes (expired heartbeat) are rolled back before planning, as Hudi's
    clean does (`rollbackFailedWrites`); their pending instants would otherwise pin the earliest
    commit to retain forever. Under EAGER the writer rolls back at its own start: nothing here.
    While a pending clean plan is refused, nothing is rolled back: the refusal comes before any
    delete, as in the dry run."""
    if config.failed_writes_policy != "LAZY":
        return
    with table_lock(table, "clean"):
        heartbeat = HeartbeatConfig.from_write_config(table.write_config)
        if failed_writes(table, heartbeat) or pending_rollbacks(table):
            plans = [p for p in pending_cleans(table) if p.plan is not None]
            if plans and not validate_pending(table, config, plans, now).safe:
                log.warning("%s: failed writes are not rolled back while a pending clean plan is refused",
                            table.base_path)
                return
        rollback_failed_writes(table, engine, hooks=hooks, now=now, metadata=MetadataTableSink(table))


def clean_table(table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
                now: datetime | None = None, progress: Progress | None = None,
                hooks: CleanHooks | None = None, rollback_hooks: RollbackHooks | None = None) -> CleanResult:
    """One clean as Hudi's client runs it: under LAZY, roll back failed writes (expired heartbeat);
    schedule unless a clean is pending (allow.multiple off); then validate and execute every pending
    clean in time order."""
    refuse_unsupported(table, config)
    with table_lock(table, "clean"):
        roll_back_failed_writes(table, config, engine, now, rollback_hooks)
        result = CleanResult()
        pending = pending_cleans(table)
        if (config.allow_multiple or not pending) and needs_cleaning(table, config):
            # Read again after scheduling: a new plan, or the pending clean an empty last clean
            # leaves once the planner deleted its completed file, runs in this same run.
            result.plan, result.scheduled = schedule_clean(table, config, engine, now)
            pending = None
        return run_pending(table, config, engine, progress, hooks, result, now, pending=pending)


def discard_pending(table: HoodieTable, instant_time: str) -> list[str]:
    """Remove a pending clean from the timeline, first copying its state files to
    `.hoodie/.aux/hudi-assets/discarded/`. The inflight file goes before the requested one, so a
    crash leaves a clean that is still pending, never a half-removed one. Returns the copies."""
    with table_lock(table, "discard a pending clean"):
        return _discard(table, instant_time)


def _discard(table: HoodieTable, instant_time: str) -> list[str]:
    timeline = table.reload_timeline()
    refuse_future_instants(table, "discard a pending clean", allowed=instant_time)
    matches = [i for i in timeline.clean_timeline().filter_pending() if i.timestamp == instant_time]
    if not matches:
        pending = ", ".join(i.timestamp for i in timeline.clean_timeline().filter_pending()) or "none"
        raise HudiInputError(f"{table.base_path}: no pending clean {instant_time} "
                             f"(pending cleans: {pending})")
    return discard_instant(table, matches[0])


def partitions_to_clean(table: HoodieTable, config: CleanConfig,
                        pending: list[PendingClean] | None = None) -> list[str]:
    """The partitions the next clean deals with: those of the pending plans when there are any
    (they run first), else those the planner would scan now (none when no clean is due)."""
    pending = pending_cleans(table) if pending is None else pending
    plans = [p.plan for p in pending if p.plan is not None]
    if plans:
        return sorted({p for plan in plans for p in [*plan.file_paths_to_delete, *plan.partitions_to_delete]})
    if not needs_cleaning(table, config):
        return []
    planner = CleanPlanner(table, config)
    return planner.partitions_to_clean(planner.earliest_commit_to_retain())
