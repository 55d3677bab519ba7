"""`Cleaner`: Hudi's clean of one table (the write client's `clean()`: CleanPlanActionExecutor, then
CleanActionExecutor), built once per run from the table, its settings, the engine, the clock and the
listener, which every step reads from the object instead of taking them as parameters.

- `pending()`: the requested/inflight cleans and their plans, in time order.
- `validate()`: the safety rule (`clean.validation`) over every pending plan at once.
- `plan()`: what Hudi would request now (CleanPlanner, plus the files earlier cleans failed to
  delete); `request(plan)` validates it in memory, then writes `<t>.clean.requested`: an unsafe plan
  never reaches the timeline, where a Hudi writer would execute it.
- `run_pending()`: validate every pending plan, then execute them in time order.
- `clean()`: one clean as Hudi's client runs it; `dry_run()`: the plan it would request, nothing written.
- `discard_pending(t)`: the way out of a refused plan, keeping a copy of its state files.

`clean()` takes the table's lock once; the public steps called one by one (the Dagster assets) each
take it themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hudi_assets.clean.config import CleanConfig, CleaningPolicy
from hudi_assets.clean.executor import CleanActionExecutor, ExecutedClean
from hudi_assets.clean.plan import CleanerPlan, CleanFileInfo
from hudi_assets.clean.planner import CleanPlanner
from hudi_assets.clean.reader_window import HeldBack
from hudi_assets.clean.trigger import needs_cleaning
from hudi_assets.clean.validation import PlanValidator, ValidationReport
from hudi_assets.discard import discard_instant
from hudi_assets.engine import Engine, LocalEngine
from hudi_assets.exceptions import DeleteFailedError, HudiAssetsError, HudiInputError, UnsupportedTableError
from hudi_assets.heartbeat import HeartbeatConfig
from hudi_assets.listener import QUIET, Listener
from hudi_assets.metadata.clean_records import refuse_pending_compaction, refuse_unknown_partitions
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.metrics.reporter import with_metrics
from hudi_assets.rollback import Rollbacker, failed_writes, pending_rollbacks
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import CLEAN, DELTA_COMMIT, Instant, State
from hudi_assets.timeline.instant_time import Clock, new_instant_time, refuse_future_instants, wall_clock
from hudi_assets.transaction import HeldLock, table_lock

log = logging.getLogger(__name__)

METADATA_CLEAN_SUFFIX = "002"  # HoodieTableMetadataUtil.OperationSuffix.CLEAN


@dataclass(frozen=True, slots=True)
class PendingClean:
    """A requested or inflight clean; `plan` is None for an empty state file."""

    instant: Instant
    plan_file: str  # full path of the state file holding the plan
    plan: CleanerPlan | None


@dataclass
class CleanResult:
    """What one run did: the cleans executed (oldest first) and the plan scheduled, if any; with
    `dry_run`, the plan a run would request now (`plan`), nothing written or executed."""

    executed: list[ExecutedClean] = field(default_factory=list)
    scheduled: str | None = None
    plan: CleanerPlan | None = field(default=None, repr=False)
    dry_run: bool = False
    held_back: HeldBack = field(default_factory=HeldBack)  # what the reader window kept out of `plan`

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


class Cleaner:
    """One table's cleaner: `(table, config, engine, clock, listener)` held for the whole run."""

    def __init__(self, table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
                 clock: Clock = wall_clock, listener: Listener = QUIET):
        self.table = table
        self.config = config
        self.engine = engine or LocalEngine()
        self.clock = clock
        self.listener = with_metrics(table, listener)  # reports HoodieMetrics' metrics when on
        self._planned: tuple[CleanerPlan, CleanPlanner] | None = None  # the last plan and its planner
        self._metadata_table: HoodieTable | None = None  # opened once, by the refusal check

    @classmethod
    def for_table(cls, table: HoodieTable, engine: Engine | None = None, clock: Clock = wall_clock,
                  listener: Listener = QUIET) -> Cleaner:
        """The cleaner with the table's own merged settings (`table.write_config`, validated)."""
        return cls(table, CleanConfig.from_write_config(table.write_config), engine, clock, listener)

    def _lock(self, operation: str = "clean"):
        return table_lock(self.table, operation)

    # ------------------------------------------------------------------------------ refusals
    def refuse_unsupported(self, *, dry_run: bool = False) -> None:
        """What hudi-assets does not clean, refused before anything is read beyond the timeline. A
        pending metadata-table compaction is refused here only in a dry run (which takes no lock); a
        run refuses it under the table's lock before it changes anything (`_refuse_pending_compaction`):
        seen before, it may be one a writer is running under the lock this run waits for."""
        table = self.table
        table.config.check_service("clean", table.base_path)
        refuse_future_instants(table, "clean")
        if table.config.has_metadata_table:
            self._metadata_table = refuse_unknown_partitions(table, pending_compaction=dry_run)
        if table.config.bootstrap_base_path and self.config.delete_bootstrap_base_file:
            raise UnsupportedTableError(f"{table.base_path}: deleting bootstrap base files is not supported")

    # ------------------------------------------------------------------------------- pending
    def pending(self) -> list[PendingClean]:
        """Every requested/inflight clean in time order, with the plan its state file holds (the
        inflight file repeats the plan; a 1.x writer may leave it empty, so the requested file wins)."""
        table = self.table
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

    def _validate(self, plans: list[tuple[str, str, CleanerPlan]],
                  meanwhile: Callable[[], Any] | None = None) -> ValidationReport:
        """The safety rule over (instant time, plan file, plan) as of the clock's now. `meanwhile`:
        work done while forked workers check the partitions (`PlanValidator.validate`)."""
        return PlanValidator(self.table, self.config, self.clock()).validate(plans, meanwhile)

    def validate(self, pending: list[PendingClean] | None = None) -> ValidationReport:
        """The safety rule over every pending plan: the rows the CLI and the Dagster check show.
        `pending`: as the caller read them (a plan of millions of files is not decoded twice)."""
        return self._validate_pending(self._current(pending))

    def _current(self, pending: list[PendingClean] | None) -> list[PendingClean]:
        """Pending cleans to validate as of now: read when None; a caller's list is kept, the
        timeline read again, so it is validated against the timeline as after a fresh read."""
        if pending is None:
            return self.pending()
        self.table.reload_timeline()
        return pending

    def _validate_pending(self, pending: list[PendingClean],
                          meanwhile: Callable[[], Any] | None = None) -> ValidationReport:
        """The safety rule over pending cleans read together with the timeline the table holds."""
        plans = [(p.instant.timestamp, p.plan_file, p.plan) for p in pending if p.plan is not None]
        return self._validate(plans, meanwhile)

    # ------------------------------------------------------------------------------ planning
    def failed_deletes_to_retry(self) -> dict[str, list[str]]:
        """Files that completed cleans on the active timeline failed to delete and that still exist.
        Incremental planning never revisits their partitions, so the next plan names them again."""
        table = self.table
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

    def plan(self, *, with_sizes: bool = False) -> CleanerPlan:
        """The plan Hudi 0.15 would request now, plus the files earlier cleans failed to delete
        (`with_sizes`: the planner also keeps the sizes of the files it plans, for `file_sizes`)."""
        table = self.table
        planner = CleanPlanner(table, self.config, self.engine, self.clock(), with_sizes)
        plan = planner.plan()
        by_versions = self.config.policy == CleaningPolicy.KEEP_LATEST_FILE_VERSIONS
        if plan.earliest_instant_to_retain is not None or by_versions:
            for partition, rels in self.failed_deletes_to_retry().items():
                files = plan.file_paths_to_delete.setdefault(partition, [])
                known = {f.file_path for f in files}
                for rel in rels:
                    uri = table.storage.uri(rel)
                    if uri not in known:
                        log.info("retrying the delete of %s, which an earlier clean failed to delete", uri)
                        files.append(CleanFileInfo(uri))
        self._planned = (plan, planner)
        return plan

    @property
    def planner(self) -> CleanPlanner | None:
        """The planner of the last `plan()` of this run (what it listed, through which metadata table)."""
        return self._planned[1] if self._planned is not None else None

    def _planner_of(self, plan: CleanerPlan) -> CleanPlanner | None:
        """The planner that made `plan` in this run (None for a pending plan read from the timeline)."""
        return self._planned[1] if self._planned is not None and self._planned[0] is plan else None

    def file_sizes(self, plan: CleanerPlan) -> dict[str, list[int]]:
        """Sizes of a plan's files, per partition in plan order (0 for a file already gone): the
        planner's own, from its one listing of each partition, when it planned with sizes; the rest (a
        pending plan, files an earlier clean failed to delete) looked up without listing a partition
        again."""
        planner = self._planner_of(plan)
        known_sizes = planner.file_sizes if planner is not None else {}
        sizes = {}
        for partition, files in plan.file_paths_to_delete.items():
            known = known_sizes.get(partition, [])
            if extra := files[len(known):]:
                names = (f.file_path.rpartition("/")[2] for f in extra)
                known = known + self.table.storage.file_sizes(partition, names)
            sizes[partition] = known
        return sizes

    def partitions_to_clean(self, pending: list[PendingClean] | None = None) -> list[str]:
        """The partitions the next clean deals with: those of the pending plans when there are any
        (they run first), else those the planner would scan now (none when no clean is due)."""
        pending = self.pending() if pending is None else pending
        plans = [p.plan for p in pending if p.plan is not None]
        if plans:
            return sorted({p for plan in plans
                           for p in [*plan.file_paths_to_delete, *plan.partitions_to_delete]})
        if not needs_cleaning(self.table, self.config):
            return []
        planner = CleanPlanner(self.table, self.config, now=self.clock())
        return planner.partitions_to_clean(planner.earliest_commit_to_retain())

    # ----------------------------------------------------------------------------- requesting
    def _next_requested(self) -> Instant:
        """Where a new plan is requested: at a new instant time; on a version-6 metadata table at the
        time its writer cleans at, the latest deltacommit's + `002` (`HoodieTableMetadataUtil
        .createCleanTimestamp`, called by the metadata writer's `cleanIfNecessary`). Hudi 1.x cleans a
        version 8/9 metadata table at a new instant time (`writeClient.clean()`)."""
        table = self.table
        timeline = table.reload_timeline()
        if table.is_metadata_table and not table.config.is_hudi_1x:  # 1.x's take new times
            latest = timeline.filter_completed().filter_actions({DELTA_COMMIT}).last()
            if latest is None:
                raise HudiAssetsError(f"{table.base_path}: no completed deltacommit to clean after")
            return Instant(latest.timestamp + METADATA_CLEAN_SUFFIX, CLEAN, State.REQUESTED)
        instant_time = new_instant_time((i.timestamp for i in timeline.raw_instants),
                                        table.config.timeline_timezone, self.clock(),
                                        table.clock_skew_ms)
        return Instant(instant_time, CLEAN, State.REQUESTED)

    def validate_new(self, plan: CleanerPlan) -> ValidationReport:
        """The safety rule over a plan not yet requested, as of the instant it would be requested at."""
        return self._validate([(self._next_requested().timestamp, "new clean plan", plan)])

    def request(self, plan: CleanerPlan) -> str | None:
        """Validate a plan in memory, then persist it as `<t>.clean.requested` (`_next_requested`).
        None (nothing written) when the plan lists no file, as Hudi drops such plans. The empty
        completed clean the planner of `plan` found is deleted as Hudi does, once the plan passed."""
        if plan.total_files == 0 and self._empty_last_clean(plan) is None:
            return None
        with self._lock():
            return self._request(plan)

    def _empty_last_clean(self, plan: CleanerPlan) -> Instant | None:
        planner = self._planner_of(plan)
        return planner.empty_last_clean if planner is not None else None

    def _request(self, plan: CleanerPlan) -> str | None:
        empty_last_clean = self._empty_last_clean(plan)
        if plan.total_files == 0:
            self._delete_empty_last_clean(empty_last_clean)
            return None
        table = self.table
        requested = self._next_requested()
        instant_time = requested.timestamp
        path = table.active_timeline.state_file_path(requested)
        report = self._validate([(instant_time, f"new clean plan {requested.file_name}", plan)])
        report.raise_if_unsafe(table.base_path, requested=False)  # a refusal comes before the first delete
        self._delete_empty_last_clean(empty_last_clean)
        if not table.storage.create_if_absent(path, plan.serialize()):
            raise HudiAssetsError(f"{requested.file_name} already exists")
        log.info("scheduled clean %s: %d files", instant_time, plan.total_files)
        return instant_time

    def _delete_empty_last_clean(self, instant: Instant | None) -> None:
        if instant is not None:  # Hudi deletes an empty last clean file (its plan scanned every partition)
            self.table.storage.delete_checked([self.table.active_timeline.state_file_path(instant)])

    # ------------------------------------------------------------------------------ execution
    def run_pending(self, pending: list[PendingClean] | None = None,
                    result: CleanResult | None = None) -> CleanResult:
        """Validate every pending plan (refusing all of them if one fails, before any delete), then
        execute them in time order. Raises `DeleteFailedError` after completing them when a file
        could not be deleted (`result`, when given, holds what was done). `pending`: the pending
        cleans as the caller just read them under the table's lock (a plan of millions of files is
        not decoded twice)."""
        with self._lock() as lock:
            self._refuse_pending_compaction()
            return self._run_pending(lock, self._current(pending), result or CleanResult())

    def _refuse_pending_compaction(self) -> None:
        """Under the table's lock: a metadata-table compaction still pending is one a writer left."""
        if self._metadata_table is not None:
            refuse_pending_compaction(self._metadata_table, "clean")

    def _run_pending(self, lock: HeldLock, pending: list[PendingClean], result: CleanResult) -> CleanResult:
        """`pending`: read under `lock` with the timeline the table holds (`pending()`, `_current`)."""
        table = self.table
        # The first requested plan's inflight copy is encoded while its partitions are checked; it is
        # written only after every plan passed (executor.execute).
        inflight: dict[str, bytes] = {}
        first = next((c for c in pending if c.plan is not None), None)

        def encode_inflight() -> None:
            if first is not None and first.instant.is_requested and \
                    table.active_timeline.clean_inflight_holds_plan:
                inflight[first.instant.timestamp] = first.plan.serialize()

        report = self._validate_pending(pending, encode_inflight)
        report.raise_if_unsafe(table.base_path)
        validated = {v.instant: v for v in report.plans}
        executor = CleanActionExecutor(table, self.config, self.engine, self.listener, self._metadata_table)
        for position, clean in enumerate(pending):
            if clean.plan is None:
                # Hudi deletes the empty state file (the inflight one first) and moves on.
                state_file = table.active_timeline.state_file_path(clean.instant)
                table.storage.delete_checked([state_file])
                log.warning("empty clean state file %s: deleted", table.storage.uri(state_file))
                continue
            checked = validated[clean.instant.timestamp]
            if position:  # an earlier clean ran since: check this one against the table as it is now
                again = self._validate([(clean.instant.timestamp, clean.plan_file, clean.plan)])
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
                f"metadata; the next clean retries them: {', '.join(uris[:5])}"
                f"{', ...' if len(uris) > 5 else ''}",
                uris)
        return result

    def roll_back_failed_writes(self) -> None:
        """Under LAZY, the failed writes (expired heartbeat) are rolled back before planning, as Hudi's
        clean does (`rollbackFailedWrites`); their pending instants would otherwise pin the earliest
        commit to retain forever. Under EAGER the writer rolls back at its own start: nothing here.
        While a pending clean plan is refused, nothing is rolled back: the refusal comes before any
        delete, as in the dry run."""
        if self.config.failed_writes_policy != "LAZY":
            return
        with self._lock() as lock:
            self._roll_back_failed_writes(lock)

    def _roll_back_failed_writes(self, lock: HeldLock) -> None:
        if self.config.failed_writes_policy != "LAZY":
            return
        table = self.table
        heartbeat = HeartbeatConfig.from_write_config(table.write_config)
        rollbacker = Rollbacker(table, self.engine, self.clock, self.listener,
                                metadata=MetadataTableSink(table))
        failed = failed_writes(table, heartbeat, rollbacker.now_ms())
        if not (failed or pending_rollbacks(table)):
            return  # nothing to roll back (a table version without rollback yet is not refused for it)
        pending = self.pending()
        if any(p.plan is not None for p in pending) and not self._validate_pending(pending).safe:
            log.warning("%s: failed writes are not rolled back while a pending clean plan is refused",
                        table.base_path)
            return
        rollbacker.rollback_failed_writes(lock, failed)

    def clean(self) -> CleanResult:
        """One clean as Hudi's client runs it, under one hold of the table's lock: under LAZY, roll
        back failed writes (expired heartbeat); schedule unless a clean is pending (allow.multiple
        off); then validate and execute every pending clean in time order."""
        self.refuse_unsupported()
        with self._lock() as lock:
            self._refuse_pending_compaction()
            self._roll_back_failed_writes(lock)
            result = CleanResult()
            pending = self.pending()
            if (self.config.allow_multiple or not pending) and needs_cleaning(self.table, self.config):
                # Read again after scheduling: a new plan, or the pending clean an empty last clean
                # leaves once the planner deleted its completed file, runs in this same run.
                result.plan = self.plan()
                result.held_back = self.planner.held_back
                result.scheduled = self._request(result.plan)
                pending = self.pending()
            return self._run_pending(lock, pending, result)

    def dry_run(self, *, with_sizes: bool = False) -> CleanResult:
        """What `clean()` would request now, nothing written: pending plans are validated first (an
        unsafe one raises `UnsafePlanError`), then the new plan is made (`with_sizes`: see `plan`)."""
        self.refuse_unsupported(dry_run=True)
        self.validate().raise_if_unsafe(self.table.base_path)
        plan = self.plan(with_sizes=with_sizes)
        return CleanResult(plan=plan, dry_run=True, held_back=self.planner.held_back)

    # ------------------------------------------------------------------------------- way out
    def discard_pending(self, instant_time: str) -> list[str]:
        """Remove a pending clean from the timeline, first copying its state files to
        `.hoodie/.aux/hudi-assets/discarded/`. The inflight file goes before the requested one, so a
        crash leaves a clean that is still pending, never a half-removed one. Returns the copies."""
        with self._lock("discard a pending clean"):
            table = self.table
            timeline = table.reload_timeline()
            refuse_future_instants(table, "discard a pending clean", allowed=instant_time)
            matches = [i for i in timeline.clean_timeline().filter_pending() if i.timestamp == instant_time]
            if not matches:
                pending = ", ".join(i.timestamp for i in timeline.clean_timeline().filter_pending()) or "none"
                raise HudiInputError(f"{table.base_path}: no pending clean {instant_time} "
                                     f"(pending cleans: {pending})")
            return discard_instant(table, matches[0])
