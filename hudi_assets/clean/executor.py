"""`CleanActionExecutor`: carries out validated clean plans (Hudi's CleanActionExecutor).

Execution of one pending clean: requested -> inflight (the plan as read, upgraded to v2, as Hudi
0.x writes it; empty on timeline layout 2, as Hudi 1.x writes it) -> delete the files on the engine
(with their Hadoop `.crc` companions) -> delete the partitions in `partitionsToBeDeleted`
(partitioned tables only, as Hudi) -> on a table with a metadata table, the metadata deltacommit
`<t>` recording the deletes (`metadata.writer`) -> `<t>.clean` (HoodieCleanMetadata v2; on layout 2
`<t>_<completion time>.clean`, the completion time from the layout's time generator, under the
table lock). A file that could not be deleted is recorded in `failedDeleteFiles` and the clean
completes, as in Hudi; `DeleteFailedError` then names the files (the next clean retries them).
Deciding what is safe is `clean.validation`'s job; this module only acts on its verdict.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass

from hudi_assets.clean.config import CleanConfig
from hudi_assets.clean.plan import (
    CleanerPlan,
    PartitionCleanStat,
    clean_metadata_record,
    serialize_clean_metadata,
)
from hudi_assets.clean.validation import ValidatedPlan
from hudi_assets.engine import Engine, LocalEngine, gc_paused
from hudi_assets.exceptions import CleanAbortedError
from hudi_assets.listener import QUIET, Listener, ServiceRun, Step
from hudi_assets.metadata.clean_records import clean_records
from hudi_assets.metadata.writer import MetadataTableWriter
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import CLEAN, Instant, State
from hudi_assets.timeline.timeline import WRITE_ACTIONS

log = logging.getLogger(__name__)

@dataclass(frozen=True, slots=True)
class ExecutedClean:
    """What one executed clean did."""

    instant: str
    files_deleted: int
    partitions_deleted: int
    failed: tuple[str, ...]  # relative paths that could not be deleted


Batch = list[tuple[str, list[str]]]  # (partition, file names) of `delete_batch` files in all


def _batches(files: dict[str, list[str]], size: int) -> list[Batch]:
    """The names per partition cut into batches of `size` files, a batch spanning partitions."""
    batches: list[Batch] = []
    current: Batch = []
    room = size
    for partition, names in files.items():
        start = 0
        while start < len(names):
            part = names[start:start + room]
            current.append((partition, part))
            start += len(part)
            room -= len(part)
            if not room:
                batches.append(current)
                current, room = [], size
    if current:
        batches.append(current)
    return batches


def _delete_batch(storage: Storage, batch: Batch) -> tuple[int, dict[str, str]]:
    """One batch: how many of its files are gone (deleted, or already gone: a resumed clean) and
    those that could not be deleted, with why. All a clean records, and compact to send back from a
    worker process."""
    if not storage.is_local:  # the batch as one request (S3's DeleteObjects), whatever its partitions
        result = storage.delete_many(f"{partition}/{name}" if partition else name
                                     for partition, names in batch for name in names)
        return len(result.deleted) + len(result.missing), result.failed
    gone = 0
    failed: dict[str, str] = {}
    for partition, names in batch:
        result = storage.delete_in(partition, names)
        gone += len(result.deleted) + len(result.missing)
        failed.update(result.failed)
    return gone, failed


class CleanActionExecutor:
    """Acts on validated plans: the only place the cleaner deletes. It decides nothing about what is
    safe; `Cleaner` hands it plans that passed `clean.validation` moments before."""

    def __init__(self, table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
                 listener: Listener = QUIET, metadata_table: HoodieTable | None = None):
        self.table = table
        self.config = config
        self.engine = engine or LocalEngine()
        self.listener = listener
        self.metadata_table = metadata_table  # the run's, when it opened one already

    def check_no_newer_writes(self, plan: CleanerPlan, files: dict[str, list[str]]) -> None:
        """Defence in depth: a commit completed after planning must not have written a planned file
        (`files`: names per partition)."""
        timeline = self.table.reload_timeline()
        since = plan.last_completed_commit_timestamp
        planned_set: set[str] | None = None  # made only when there is a newer commit to compare
        for instant in timeline.filter_actions(WRITE_ACTIONS).filter_completed():
            if instant.timestamp <= since:
                continue
            if planned_set is None:
                planned_set = {f"{partition}/{name}" if partition else name
                               for partition, names in files.items() for name in names}
            commit = metadata.commit_metadata(timeline, instant.with_state(State.COMPLETED))
            touched = set(commit.written_paths)
            for stat in commit.write_stats:
                partition = stat.partition_path or ""
                touched.update(f"{partition}/{n}" if partition else n for n in stat.log_files)
            clash = touched & planned_set
            if clash:
                raise CleanAbortedError(
                    f"{self.table.base_path}: commit {instant.timestamp} completed after the clean was "
                    f"planned and references {len(clash)} planned file(s), e.g. {sorted(clash)[0]}; "
                    "nothing was deleted. Remove the pending clean's state files and plan again.")

    def execute(self, instant: Instant, plan: CleanerPlan, validated: ValidatedPlan,
                inflight_data: bytes | None = None) -> ExecutedClean:
        """Carry out one validated plan and write its completed instant. `inflight_data`: the plan as
        the inflight state file holds it, when already encoded (else encoded here). The cyclic
        collector is paused throughout: it would rescan the decoded plan's objects while the rounds'
        results and the metadata's lists accumulate, none of them cyclic."""
        with gc_paused():
            return self._execute(instant, plan, validated, inflight_data)

    def _execute(self, instant: Instant, plan: CleanerPlan, validated: ValidatedPlan,
                 inflight_data: bytes | None) -> ExecutedClean:
        storage = self.table.storage
        self.check_no_newer_writes(plan, validated.files)
        timeline = self.table.active_timeline  # as the check just read it, under the table lock
        started = time.monotonic()
        if instant.is_requested:
            inflight = instant.with_state(State.INFLIGHT)
            data = b""
            if timeline.clean_inflight_holds_plan:
                data = plan.serialize() if inflight_data is None else inflight_data
            storage.create_if_absent(timeline.state_file_path(inflight), data)
        self.listener.reached(Step.CLEAN_INFLIGHT)
        failed = self._delete_files(validated.files)
        if validated.companions:
            storage.delete_many(validated.companions)  # Hadoop's checksums go with their files
        partitions_deleted = 0
        for partition in validated.partitions_to_delete:
            try:
                if storage.delete_dir(partition):
                    partitions_deleted += 1
            except OSError as exc:  # Hudi logs and goes on
                log.warning("could not delete partition %s: %s", partition, exc)
        self.listener.reached(Step.CLEAN_PARTITIONS)
        stats = []
        for partition, names in validated.files.items():
            stat = PartitionCleanStat(partition, self.config.policy,
                                      is_partition_deleted=partition in validated.partitions_to_delete)
            stat.delete_path_patterns = names
            if not failed:
                stat.success_delete_files = list(names)
            else:
                prefix = f"{partition}/" if partition else ""
                for name in names:
                    (stat.failed_delete_files if prefix + name in failed else stat.success_delete_files
                     ).append(name)
            stats.append(stat)
        taken = int((time.monotonic() - started) * 1000)
        record = clean_metadata_record(instant.timestamp, taken, plan, stats)
        if self.table.config.has_metadata_table:
            self._update_metadata_table(instant.timestamp, record)
        self.listener.reached(Step.CLEAN_COMPLETE)
        completed = Instant(instant.timestamp, CLEAN, State.COMPLETED)
        data = serialize_clean_metadata(record)
        if not storage.create_if_absent(timeline.new_state_file_path(completed), data):
            log.info("%s already completed by another writer", completed.file_name)
        log.info("clean %s completed: %d files deleted", instant.timestamp, record["totalFilesDeleted"])
        self.listener.finished(ServiceRun(CLEAN, instant.timestamp, taken, self.table.is_metadata_table,
                                          files_deleted=record["totalFilesDeleted"]))
        return ExecutedClean(instant.timestamp, record["totalFilesDeleted"], partitions_deleted,
                             tuple(sorted(failed)))

    def _update_metadata_table(self, instant_time: str, record: dict) -> None:
        """`writeTableMetadata`: the metadata deltacommit of this clean, before `<t>.clean` is written
        (a retry after a crash rolls back the metadata instant and writes it again)."""
        writer = MetadataTableWriter(self.table, self.listener, self.metadata_table)
        writer.commit(instant_time, clean_records(self.table, record, instant_time))

    def _delete_files(self, files: dict[str, list[str]]) -> dict[str, str]:
        """Deletes on the engine, in rounds; returns the files that could not be deleted, with why. A
        file already gone counts as deleted (a resumed clean); one that could not be deleted and is
        still there is reported as failed, and the clean completes (Hudi records it in
        `failedDeleteFiles`). Progress is reported every `progress_interval_ms`, and at the first and
        the last round; `Step.CLEAN_DELETES` is reached after every round."""
        storage = self.table.storage
        listener = self.listener
        failed: dict[str, str] = {}
        batches = _batches(files, self.config.delete_batch)
        total = sum(map(len, files.values()))
        interval = self.config.progress_interval_ms / 1000
        done = 0
        reported = time.monotonic()
        listener.progress(0, total)
        for parts in self._delete_rounds(batches):
            for count, failures in parts:
                done += count + len(failures)
                failed.update(failures)
            if done == total or time.monotonic() - reported >= interval:
                reported = time.monotonic()
                listener.progress(done, total)
            listener.reached(Step.CLEAN_DELETES, done)
        for rel, why in failed.items():
            log.warning("could not delete %s: %s", storage.uri(rel), why)
        return failed

    def _delete_rounds(self, batches: list[Batch]) -> Iterator[list[tuple[int, dict[str, str]]]]:
        """The results of each round of batches, in order. On the local engine over a local file
        system the unlinks run in forked workers, a batch per round (threads would take turns holding
        the GIL between syscalls). A batch a dead worker leaves is deleted again here, which gives
        the same result: a file already gone counts as deleted."""
        storage = self.table.storage
        if storage.is_local and isinstance(self.engine, LocalEngine):
            delete = functools.partial(_delete_batch, storage)
            for part in self.engine.imap_in_processes(delete, batches, 1):
                yield [part]
            return
        per_round = max(1, min(self.config.parallelism, 64))
        for start in range(0, len(batches), per_round):
            chunk = batches[start:start + per_round]
            yield self.engine.map(lambda batch: _delete_batch(storage, batch), chunk, len(chunk))
