"""`CleanActionExecutor`: carries out clean plans; `schedule_clean` writes them; `clean_table` runs a
clean as Hudi's write client does (spec §2 and §4).

Execution of one pending clean: requested -> inflight (same plan bytes) -> delete the files on the
engine -> delete the partitions in `partitionsToBeDeleted` -> `<t>.clean` (HoodieCleanMetadata v2).
Beyond Hudi: tables with a metadata table are refused; before the first delete the timeline is read
again and the clean stops if a commit completed since planning wrote a planned file or a planned
path lies outside the base path; a file already gone when a resumed clean retries counts as deleted.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from hudi_assets.clean.config import CleanConfig
from hudi_assets.clean.plan import (
    CleanerPlan,
    PartitionCleanStat,
    clean_metadata_record,
    serialize_clean_metadata,
)
from hudi_assets.clean.planner import CleanPlanner
from hudi_assets.clean.trigger import needs_cleaning
from hudi_assets.engine import Engine, LocalEngine
from hudi_assets.exceptions import (
    CleanAbortedError,
    HudiAssetsError,
    PathOutsideTableError,
    UnsupportedTableError,
)
from hudi_assets.storage import DeleteResult, Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import CLEAN, Instant, State
from hudi_assets.timeline.instant_time import new_instant_time
from hudi_assets.timeline.timeline import WRITE_ACTIONS

log = logging.getLogger(__name__)

# Test hook for crash tests: "inflight", "deletes:N" (after at least N deletes), "partitions" (after
# the partition deletes) or "complete" (just before `<t>.clean`): the process kills itself (SIGKILL).
CRASH_HOOK_ENV = "HUDI_ASSETS_CLEAN_KILL_AT"
DELETE_BATCH = 500

Progress = Callable[[int, int], None]


def _crash_point(point: str, deleted: int = 0) -> None:
    wanted = os.environ.get(CRASH_HOOK_ENV)
    if not wanted:
        return
    kind, _, count = wanted.partition(":")
    if kind == point and (not count or deleted >= int(count)):
        os.kill(os.getpid(), signal.SIGKILL)


def refuse_metadata_table(table: HoodieTable) -> None:
    if table.config.has_metadata_table:
        raise UnsupportedTableError(
            f"{table.base_path}: the table has a metadata table (hoodie.table.metadata.partitions="
            f"{','.join(table.config.metadata_partitions)}); cleaning without updating it would leave the "
            "metadata table listing deleted files. To clean with hudi-assets, disable the metadata table "
            "in the writer (hoodie.metadata.enable=false) and remove it (Hudi drops .hoodie/metadata and "
            "the table property on the next write with it disabled), or let Hudi clean this table.")


def _delete_batch(storage: Storage, paths: list[str]) -> DeleteResult:
    return storage.delete_many(paths)


@dataclass
class CleanResult:
    """What one run did: the cleans completed (instant -> files deleted), and the plan scheduled."""

    completed: dict[str, int] = field(default_factory=dict)
    scheduled: str | None = None
    plan: CleanerPlan | None = None
    files_deleted: int = 0
    partitions_deleted: int = 0


class CleanActionExecutor:
    def __init__(self, table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
                 progress: Progress | None = None):
        self.table = table
        self.config = config
        self.engine = engine or LocalEngine()
        self.progress = progress
        self._last_deleted = 0
        self._last_partitions = 0

    # ------------------------------------------------------------------------------ pending
    def pending_cleans(self) -> list[Instant]:
        return self.table.reload_timeline().clean_timeline().filter_pending().instants

    def pending_plan(self, instant: Instant) -> tuple[CleanerPlan, bytes] | None:
        """The plan in a pending clean's state file (the inflight file repeats the requested bytes);
        None for an empty state file."""
        timeline = self.table.active_timeline
        data = timeline.read_details(instant)
        if not data:
            return None
        path = self.table.storage.uri(timeline.state_file_path(instant))
        return CleanerPlan.deserialize(data, path, self.table.base_path), data

    def run_pending(self, result: CleanResult | None = None) -> CleanResult:
        """Finish every requested/inflight clean in time order."""
        result = result or CleanResult()
        for instant in self.pending_cleans():
            pending = self.pending_plan(instant)
            if pending is None:
                # Hudi deletes the empty state file (the inflight one first) and moves on.
                log.warning("empty clean state file %s: deleted", instant.file_name)
                self.table.storage.delete_many([self.table.active_timeline.state_file_path(instant)])
                continue
            plan, data = pending
            self.execute(instant, plan, data)
            result.completed[instant.timestamp] = self._last_deleted
            result.files_deleted += self._last_deleted
            result.partitions_deleted += self._last_partitions
            self.table.reload_timeline()
        return result

    # ------------------------------------------------------------------------------ safety
    def _relative_paths(self, plan: CleanerPlan) -> dict[str, list[tuple[str, bool]]]:
        storage = self.table.storage
        relative: dict[str, list[tuple[str, bool]]] = {}
        for partition, files in plan.file_paths_to_delete.items():
            rels = relative[partition] = []
            for info in files:
                rel = storage.relativize(info.file_path)  # raises PathOutsideTableError
                if not rel or rel == ".hoodie" or rel.startswith(".hoodie/"):
                    raise PathOutsideTableError(f"{info.file_path}: not a data file of the table")
                rels.append((rel, info.is_bootstrap_base_file))
        for partition in plan.partitions_to_delete:
            if not partition or storage.relativize(partition) in ("", ".hoodie"):
                raise PathOutsideTableError(f"partition {partition!r} of the plan is the base path")
        return relative

    def _check_no_newer_writes(self, plan: CleanerPlan, planned: set[str]) -> None:
        """A commit completed after planning must not have written a planned file."""
        timeline = self.table.reload_timeline()
        since = plan.last_completed_commit_timestamp
        for instant in timeline.filter_actions(WRITE_ACTIONS).filter_completed():
            if instant.timestamp <= since:
                continue
            commit = metadata.commit_metadata(timeline, instant.with_state(State.COMPLETED))
            touched = set(commit.written_paths)
            for stat in commit.write_stats:
                partition = stat.partition_path or ""
                touched.update(f"{partition}/{n}" if partition else n for n in stat.log_files)
            clash = touched & planned
            if clash:
                raise CleanAbortedError(
                    f"{self.table.base_path}: commit {instant.timestamp} completed after the clean was "
                    f"planned and references {len(clash)} planned file(s), e.g. {sorted(clash)[0]}; "
                    "nothing was deleted. Remove the pending clean's state files and plan again.")

    # ----------------------------------------------------------------------------- execute
    def execute(self, instant: Instant, plan: CleanerPlan, plan_bytes: bytes) -> dict:
        """Carry out one plan; returns the HoodieCleanMetadata record written."""
        storage = self.table.storage
        timeline = self.table.active_timeline
        relative = self._relative_paths(plan)
        planned = {rel for rels in relative.values() for rel, _ in rels}
        self._check_no_newer_writes(plan, planned)
        started = time.monotonic()
        if instant.is_requested:
            inflight = instant.with_state(State.INFLIGHT)
            storage.create_if_absent(timeline.state_file_path(inflight), plan_bytes)
        _crash_point("inflight")
        outcome = self._delete_files([rel for rels in relative.values() for rel, _ in rels])
        self._last_partitions = 0
        if self.table.config.is_partitioned:
            for partition in plan.partitions_to_delete:
                try:
                    if storage.delete_dir(partition):
                        self._last_partitions += 1
                except OSError as exc:  # Hudi logs and goes on
                    log.warning("could not delete partition %s: %s", partition, exc)
        _crash_point("partitions")
        stats = []
        for partition, rels in relative.items():
            stat = PartitionCleanStat(partition, plan.policy,
                                      is_partition_deleted=partition in plan.partitions_to_delete)
            for rel, bootstrap in rels:
                name = rel.rpartition("/")[2]
                ok = rel in outcome.deleted or rel in outcome.missing
                if bootstrap:
                    full = storage.uri(rel)
                    stat.bootstrap_patterns.append(full)
                    (stat.success_bootstrap_files if ok else stat.failed_bootstrap_files).append(full)
                else:
                    stat.delete_path_patterns.append(name)
                    (stat.success_delete_files if ok else stat.failed_delete_files).append(name)
            stats.append(stat)
        taken = int((time.monotonic() - started) * 1000)
        record = clean_metadata_record(instant.timestamp, taken, plan, stats)
        self._last_deleted = record["totalFilesDeleted"]
        _crash_point("complete")
        completed = Instant(instant.timestamp, CLEAN, State.COMPLETED)
        completed_path = timeline.state_file_path(completed)
        if not storage.create_if_absent(completed_path, serialize_clean_metadata(record)):
            log.info("%s already completed by another writer", completed.file_name)
        log.info("clean %s completed: %d files deleted", instant.timestamp, self._last_deleted)
        return record

    def _delete_files(self, rels: list[str]) -> DeleteResult:
        """Deletes on the engine, in rounds so progress can be reported; a missing file is already
        deleted (a resumed clean). A file that could not be deleted and is still there fails the
        clean, as in 0.15 (HUDI-7655); the instant stays inflight and the next run retries it."""
        storage = self.table.storage
        total = DeleteResult()
        batch = 1 if os.environ.get(CRASH_HOOK_ENV, "").startswith("deletes") else DELETE_BATCH
        batches = [rels[i:i + batch] for i in range(0, len(rels), batch)]
        per_round = max(1, min(self.config.parallelism, 64)) if batch > 1 else 1
        done = 0
        if self.progress:
            self.progress(0, len(rels))
        for start in range(0, len(batches), per_round):
            chunk = batches[start:start + per_round]
            for part in self.engine.map(lambda paths: _delete_batch(storage, paths), chunk, len(chunk)):
                total.deleted.extend(part.deleted)
                total.missing.extend(part.missing)
                total.failed.update(part.failed)
                done += len(part.deleted) + len(part.missing)
            if self.progress:
                self.progress(done, len(rels))
            _crash_point("deletes", done)
        still_there = [p for p in total.failed if storage.exists(p)]
        if still_there:
            first = still_there[0]
            raise HudiAssetsError(f"{storage.uri(first)}: could not be deleted ({total.failed[first]}); "
                                  f"{len(still_there)} file(s) left, the clean stays pending")
        total.missing.extend(p for p in total.failed if p not in still_there)
        return total


# ----------------------------------------------------------------------------------- scheduling
def schedule_clean(table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
                   now: datetime | None = None, dry_run: bool = False) -> tuple[CleanerPlan, str | None]:
    """Plan a clean and, unless `dry_run` or the plan lists no file, write `<t>.clean.requested`.
    Returns the plan and the new instant time (None when nothing was written)."""
    planner = CleanPlanner(table, config, engine, now)
    plan = planner.plan()
    if dry_run:
        return plan, None
    if planner.empty_last_clean is not None:  # Hudi deletes an empty last clean file, then scans fully
        table.storage.delete_many([table.active_timeline.state_file_path(planner.empty_last_clean)])
    return plan, request_clean(table, plan, now)


def request_clean(table: HoodieTable, plan: CleanerPlan, now: datetime | None = None) -> str | None:
    """Persist a plan as `<t>.clean.requested` at a new instant time; None (nothing written) when the
    plan lists no file, as Hudi drops such plans."""
    if plan.total_files == 0:
        return None
    timeline = table.reload_timeline()
    instant_time = new_instant_time((i.timestamp for i in timeline.raw_instants),
                                    table.config.timeline_timezone, now)
    requested = Instant(instant_time, CLEAN, State.REQUESTED)
    if not table.storage.create_if_absent(timeline.state_file_path(requested), plan.serialize()):
        raise HudiAssetsError(f"{requested.file_name} already exists")
    log.info("scheduled clean %s: %d files", instant_time, plan.total_files)
    return instant_time


def clean_table(table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
                now: datetime | None = None, progress: Progress | None = None) -> CleanResult:
    """One clean as Hudi's client runs it: schedule unless a clean is pending (allow.multiple off),
    then execute every pending clean in time order."""
    refuse_metadata_table(table)
    if table.config.bootstrap_base_path and config.delete_bootstrap_base_file:
        raise UnsupportedTableError(f"{table.base_path}: deleting bootstrap base files is not supported")
    if config.failed_writes_policy == "LAZY":
        log.warning("failed-writes policy LAZY: failed writes are not rolled back by hudi-assets")
    executor = CleanActionExecutor(table, config, engine, progress)
    result = CleanResult()
    pending = executor.pending_cleans()
    if (config.allow_multiple or not pending) and needs_cleaning(table, config):
        result.plan, result.scheduled = schedule_clean(table, config, engine, now)
    return executor.run_pending(result)
