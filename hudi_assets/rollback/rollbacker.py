"""`Rollbacker`: rolling back failed writes as Hudi 0.15's client does (BaseHoodieTableServiceClient
.rollback and rollbackFailedWrites), built once from the table, the engine, the clock and the
listener: resume every pending rollback, then plan, request and execute one per failed write, newest
first. Its settings are the table's (`table.write_config`: heartbeats, the failed-writes policy).

- `rollback_failed_writes(lock)`: the LAZY policy's step before a clean: writes whose heartbeat expired.
- `rollback(t)`: one named pending write (the `rollback` command); `dry_run(t)`: its plan only.
- `discard_pending(t)`: the way out of a refused or stuck rollback, while the write it rolls back is
  still pending (once that write is gone from the timeline, its files would be trusted).

Before each step that deletes, the table's lock is checked to be still held (`HeldLock.check_held`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from hudi_assets import config_options as opt
from hudi_assets.discard import discard_instant
from hudi_assets.engine import Engine
from hudi_assets.exceptions import HudiAssetsError, HudiInputError
from hudi_assets.heartbeat import (
    HeartbeatConfig,
    delete_heartbeat,
    heartbeat_path,
    is_heartbeat_expired,
    last_heartbeat_ms,
)
from hudi_assets.listener import QUIET, Listener, Step
from hudi_assets.metrics.reporter import with_metrics
from hudi_assets.rollback.executor import MetadataSink, RollbackActionExecutor
from hudi_assets.rollback.markers import delete_marker_dir
from hudi_assets.rollback.metadata import RollbackPlan
from hudi_assets.rollback.pending import PendingRollback, pending_rollbacks
from hudi_assets.rollback.planner import failed_writes, pending_writes, plan_rollback
from hudi_assets.rollback.safety import check_plan
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import ROLLBACK, Instant, State
from hudi_assets.timeline.instant_time import Clock, new_instant_time, refuse_future_instants, wall_clock
from hudi_assets.timeline.timeline import ActiveTimeline
from hudi_assets.transaction import HeldLock, table_lock

log = logging.getLogger(__name__)

FULL_BOOTSTRAP_INSTANT = "00000000000002"  # HoodieTimeline.FULL_BOOTSTRAP_INSTANT_TS


@dataclass(frozen=True, slots=True)
class ExecutedRollback:
    """What one rollback did."""

    rollback_instant: str
    instant_time: str  # the write rolled back
    action: str
    files_deleted: int
    rollback_log_files: int


@dataclass
class RollbackResult:
    """What one run did: the rollbacks executed, newest first (pending ones resumed included); with
    `dry_run`, the plan of the named write (None when it is not a pending write), nothing written."""

    executed: list[ExecutedRollback] = field(default_factory=list)
    plan: RollbackPlan | None = None
    dry_run: bool = False


class Rollbacker:
    """Rolls back one table's failed writes: `(table, engine, clock, listener)` held for the run, and
    the `metadata` sink that keeps a metadata table in step (built by the caller:
    `metadata.rollback_records.MetadataTableSink`; a table with a metadata table and no sink is refused
    before anything is written)."""

    def __init__(self, table: HoodieTable, engine: Engine | None = None, clock: Clock = wall_clock,
                 listener: Listener = QUIET, *, metadata: MetadataSink | None = None):
        self.table = table
        self.engine = engine
        self.clock = clock
        self.listener = with_metrics(table, listener)  # reports HoodieMetrics' metrics when on
        self.metadata = metadata

    def _refuse_unwritable(self) -> None:
        """Before anything is written: a table with a metadata table is rolled back only with a sink
        that can keep that metadata table in step."""
        if not self.table.config.has_metadata_table:
            return
        if self.metadata is None:
            raise HudiAssetsError(f"{self.table.base_path}: the table has a metadata table and the rollback "
                                  "was given no metadata sink to keep it in step")
        self.metadata.refuse_unwritable("roll back")

    def now_ms(self) -> int:
        """The clock's now in epoch milliseconds, as heartbeats are kept."""
        return int(self.clock().timestamp() * 1000)

    @property
    def _lazy(self) -> bool:
        """HeartbeatUtils.deleteHeartbeatFile(..., config) removes a rolled-back write's heartbeat only
        under the LAZY failed-writes policy, whose writers keep heartbeats."""
        return self.table.write_config.get(opt.FAILED_WRITES_CLEANER_POLICY) == "LAZY"

    def _plan(self, instant_time: str, timeline: ActiveTimeline) -> RollbackPlan | None:
        """BaseRollbackPlanActionExecutor's plan of a pending write (None when it is gone), checked
        against the marker rule before anything is written."""
        target = timeline.commits_timeline().get(instant_time)
        if target is None or target.is_completed:
            log.warning("no pending write %s left to roll back", instant_time)
            return None
        return plan_rollback(self.table, target, self.engine)

    def _execute(self, planned: PendingRollback | RollbackPlan, lock: HeldLock, lazy: bool
                 ) -> ExecutedRollback:
        """BaseHoodieTableServiceClient.rollback: resume a pending rollback or request a new one."""
        table = self.table
        if isinstance(planned, RollbackPlan):
            # As read under the lock, or as the previous rollback's executor read it when it finished.
            timeline = table.active_timeline
            rollback_time = new_instant_time((i.timestamp for i in timeline.raw_instants),
                                             table.config.timeline_timezone, self.clock(),
                                             table.clock_skew_ms)
            pending = PendingRollback(Instant(rollback_time, ROLLBACK, State.REQUESTED), planned)
            table.storage.create_if_absent(timeline.state_file_path(pending.instant), planned.serialize())
            log.info("requested rollback %s of %s %s (%d requests)", rollback_time, planned.action,
                     planned.instant_time, len(planned.requests))
            self.listener.reached(Step.ROLLBACK_REQUESTED)
        else:
            pending = planned
        record = RollbackActionExecutor(table, pending.instant, pending.plan, listener=self.listener,
                                        lock=lock, metadata=self.metadata).execute()
        if lazy:
            delete_heartbeat(table.storage, pending.plan.instant_time)
        return ExecutedRollback(pending.instant.timestamp, pending.plan.instant_time, pending.plan.action,
                                record["totalFilesDeleted"],
                                sum(len(p["rollbackLogFiles"]) for p in record["partitionMetadata"].values()))

    def _rollback_all(self, pending: dict[str, PendingRollback], instant_times: list[str], lock: HeldLock,
                      lazy: bool) -> list[ExecutedRollback]:
        """Every `pending` rollback (as `pending_rollbacks` read them under `lock`, from the timeline
        the table then holds, which plans the writes), plus the given writes, newest first
        (rollbackFailedWrites). Every pending plan is checked and every new
        rollback planned (its markers checked), and the metadata table asked whether it can undo each
        write planned (`MetadataSink.validate_rollback`), before the first is requested or resumed: one
        refused marker, plan or write leaves the whole table as it was."""
        table = self.table
        timeline = table.active_timeline
        targets: dict[str, PendingRollback | None] = dict(pending)
        for instant_time in instant_times:
            targets.setdefault(instant_time, None)
        planned: dict[str, PendingRollback | RollbackPlan] = {}
        for instant_time in sorted(targets, reverse=True):
            if instant_time <= FULL_BOOTSTRAP_INSTANT:
                log.warning("failed bootstrap %s is not rolled back by hudi-assets", instant_time)
                continue
            found = targets[instant_time]
            if found is None:
                found = self._plan(instant_time, timeline)
            else:
                check_plan(table, found.plan, found.instant)
            if found is not None:
                planned[instant_time] = found
        if planned and table.config.has_metadata_table:
            self.metadata.validate_rollback(list(planned))
        return [self._execute(found, lock, lazy) for found in planned.values()]

    def rollback_failed_writes(self, lock: HeldLock, failed: list[Instant] | None = None
                               ) -> list[ExecutedRollback]:
        """The LAZY policy: roll back writes whose heartbeat expired, finishing pending rollbacks first.
        The caller holds the table lock (`lock`); `failed`: the failed writes when it found them under
        that same hold (`failed_writes`), else they are read here. A metadata table is kept in step
        (refused before anything is written when it has a partition hudi-assets cannot update)."""
        table = self.table
        table.config.check_service("rollback", table.base_path)
        if failed is None:
            heartbeat = HeartbeatConfig.from_write_config(table.write_config)
            failed = failed_writes(table, heartbeat, self.now_ms())
        failed_times = [i.timestamp for i in failed]
        pending = pending_rollbacks(table)
        if failed_times or pending:
            self._refuse_unwritable()
        return self._rollback_all(pending, failed_times, lock, lazy=True)

    def dry_run(self, instant_time: str) -> RollbackResult:
        """The plan a rollback of `instant_time` would request, nothing written (None when it is not
        a pending write)."""
        target = pending_writes(self.table.reload_timeline()).get(instant_time)
        plan = None if target is None else plan_rollback(self.table, target, self.engine)
        return RollbackResult(plan=plan, dry_run=True)

    def rollback(self, instant_time: str, *, force: bool = False) -> RollbackResult:
        """Roll back one pending write (and finish any pending rollback first). Refused with
        `HudiInputError` when `instant_time` is not a pending commit, deltacommit or non-clustering
        replacecommit, or when its writer's heartbeat is live, unless `force`."""
        table = self.table
        table.config.check_service("rollback", table.base_path)
        refuse_future_instants(table, "roll back another instant", allowed=instant_time)
        with table_lock(table, "rollback") as lock:
            self._refuse_unwritable()  # under the lock: a pending metadata compaction is then a crashed one
            pending = pending_rollbacks(table)
            timeline = table.active_timeline  # as `pending_rollbacks` read it: one read decides
            if instant_time not in pending:
                if self._finish_completed(instant_time, timeline):
                    return RollbackResult()
                self._check_rollbackable(instant_time, force, timeline)
            return RollbackResult(self._rollback_all(pending, [instant_time], lock, self._lazy))

    def _finish_completed(self, instant_time: str, timeline: ActiveTimeline) -> bool:
        """True when a completed rollback on the timeline already undid `instant_time`; the marker
        directory and heartbeat a run killed after completing it left behind are removed."""
        table = self.table
        for rollback in timeline.rollback_timeline().filter_completed():
            if not timeline.state_files[rollback].size:
                continue
            done = metadata.completed_metadata(timeline, rollback) or {}
            if instant_time in done.get("commitsRollback", []):
                log.info("%s was already rolled back by %s", instant_time, rollback.timestamp)
                delete_marker_dir(table.storage, instant_time)
                if self._lazy:
                    delete_heartbeat(table.storage, instant_time)
                return True
        return False

    def _check_rollbackable(self, instant_time: str, force: bool, timeline: ActiveTimeline) -> None:
        table = self.table
        writes = pending_writes(timeline)
        if writes.get(instant_time) is None:
            found = [i for i in timeline if i.timestamp == instant_time]
            what = (f"it is {', '.join(f'{i.action} ({i.state.name.lower()})' for i in found)}" if found
                    else "no such instant in the active timeline")
            raise HudiInputError(
                f"{table.base_path}: {instant_time} is not a pending write ({what}); only a requested or "
                "inflight commit, deltacommit or non-clustering replacecommit is rolled back (pending "
                f"compaction and clustering are resumed, not rolled back). Pending writes: "
                f"{', '.join(writes.timestamps) or 'none'}")
        heartbeat = HeartbeatConfig.from_write_config(table.write_config)
        if not is_heartbeat_expired(table.storage, instant_time, heartbeat, self.now_ms()):
            beat = last_heartbeat_ms(table.storage, instant_time)
            message = (f"{table.base_path}: write {instant_time} has a live heartbeat "
                       f"({heartbeat_path(instant_time)} renewed at {beat} ms, within "
                       f"{heartbeat.max_allowed_ms} ms): its writer is running")
            if not force:
                raise HudiInputError(f"{message}; pass --force only if the writer is surely gone")
            log.warning("%s; rolling back anyway (--force)", message)

    def discard_pending(self, rollback_instant: str) -> list[str]:
        """Remove the pending rollback `rollback_instant` from the timeline, keeping copies of its state
        files (`discard.discard_instant`). Refused (`HudiInputError`) unless the instant it rolls back
        is still pending: a rollback half done on a write that is gone must be finished, not dropped."""
        table = self.table
        with table_lock(table, "discard a pending rollback"):
            timeline = table.reload_timeline()
            pending = {p.instant.timestamp: p for p in pending_rollbacks(table).values()}
            found = pending.get(rollback_instant)
            if found is None:
                names = ", ".join(sorted(pending)) or "none"
                raise HudiInputError(f"{table.base_path}: no pending rollback {rollback_instant} "
                                     f"(pending rollbacks: {names})")
            if pending_writes(timeline).get(found.plan.instant_time) is None:
                raise HudiInputError(
                    f"{table.base_path}: pending rollback {rollback_instant} rolls back "
                    f"{found.plan.instant_time}, which is no longer pending: its files are no longer on "
                    "the timeline, so the rollback must finish (run `hudi-assets rollback` again), not be "
                    "discarded")
            return discard_instant(table, found.instant)
