"""`RollbackActionExecutor`: carries out a requested rollback (Hudi 0.15's BaseRollbackActionExecutor
with BaseRollbackHelper; the COW and MOR executors differ only in what their plans hold).

Order, as Hudi: `<t>.rollback.requested` -> `<t>.rollback.inflight` (empty) -> delete the planned
files and append rollback command blocks, each log file written with an APPEND marker under the
rollback's instant (a planned file still there after its delete stops the rollback here, inflight:
exit 1, the next run retries) -> the metadata table's update, when the
table has one (its caller's `MetadataSink`) -> delete the failed instant's inflight, then
requested state file -> `<t>.rollback` (HoodieRollbackMetadata) -> delete the instant's marker
directory (its heartbeat is the workflow's: Hudi deletes it only under the LAZY failed-writes
policy). Every step can be repeated, so a run killed anywhere is finished by the next one: a file
already deleted is skipped, and a command block a killed run already wrote is found and reused
rather than appended twice.

Table versions 8 and 9 (Hudi 1.x's RollbackHelper, apache/hudi @03ab509c): the plan only deletes
files (`safety.check_plan` refuses one with log blocks), a file already gone counts as deleted, and
the completed file is `<t>_<completion>.rollback` (timeline layout 2); the rest is the same.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from hudi_assets.exceptions import DeleteFailedError
from hudi_assets.listener import QUIET, Listener, ServiceRun, Step
from hudi_assets.logformat import (
    BlockType,
    HeaderKey,
    LogFileName,
    encode_block,
    read_blocks,
    rollback_command_block,
)
from hudi_assets.logformat.block import ROLLBACK_COMMAND
from hudi_assets.rollback.markers import create_append_marker, delete_marker_dir
from hudi_assets.rollback.metadata import (
    PartitionRollbackStat,
    RollbackPlan,
    RollbackRequest,
    deletes_only,
    rollback_metadata_record,
    serialize_rollback_metadata,
)
from hudi_assets.rollback.planner import latest_log_file
from hudi_assets.rollback.safety import check_plan
from hudi_assets.table import HoodieTable
from hudi_assets.table_paths import table_relative
from hudi_assets.timeline.instant import ROLLBACK, Instant, State

if TYPE_CHECKING:
    from hudi_assets.transaction import HeldLock

log = logging.getLogger(__name__)

ROLLBACK_WRITE_TOKEN = "1-0-1"  # HoodieLogFormat.UNKNOWN_WRITE_TOKEN: writers without a task


class MetadataSink(Protocol):
    """The metadata table's side of a rollback, built by whoever runs the rollback
    (`metadata.rollback_records.MetadataTableSink`): rollback/ does not write the metadata table,
    which rolls back its own instants with this executor."""

    def refuse_unwritable(self, action: str) -> None:
        """Refuse, before anything is written, a metadata table `action` could not keep in step."""

    def validate_rollback(self, instant_times: Collection[str]) -> None:
        """Refuse, before anything is written, a run that rolls back any of the writes `instant_times`
        the metadata table cannot undo (`validateRollback`); other pending writes are not its concern."""

    def rollback(self, rollback_time: str, record: Mapping[str, Any], plan: RollbackPlan,
                 listener: Listener) -> None:
        """Record the rollback `record` of `plan` in the metadata table (`writeTableMetadata`)."""


class RollbackActionExecutor:
    """Executes one pending rollback of `plan` at `rollback_instant` (requested or inflight); a table
    with a metadata table needs `metadata`, checked by the caller before anything is written."""

    def __init__(self, table: HoodieTable, rollback_instant: Instant, plan: RollbackPlan,
                 *, listener: Listener = QUIET, lock: HeldLock | None = None,
                 metadata: MetadataSink | None = None, delete_instant: bool = True):
        """`delete_instant=False`: the failed instant's state files stay (Hudi's `deleteInstants`
        false: an inflight compaction's rollback keeps its plan, to be executed again)."""
        self.table = table
        self.delete_instant = delete_instant
        self.rollback_instant = rollback_instant
        self.plan = plan
        self.listener = listener
        self.lock = lock
        self.metadata = metadata

    def execute(self) -> dict:
        """Run the rollback to completion; returns the HoodieRollbackMetadata record written."""
        storage = self.table.storage
        timeline = self.table.reload_timeline()
        check_plan(self.table, self.plan, self.rollback_instant)
        started = time.monotonic()
        if self.rollback_instant.is_requested:
            inflight = self.rollback_instant.with_state(State.INFLIGHT)
            storage.create_if_absent(timeline.state_file_path(inflight), b"")
        self.listener.reached(Step.ROLLBACK_INFLIGHT)
        # BaseRollbackHelper.generateHeader: the command blocks carry the timeline's last instant.
        last = self.table.reload_timeline().last()
        block_instant = last.timestamp if last else self.rollback_instant.timestamp
        stats: dict[str, PartitionRollbackStat] = {}
        self._check_lock()
        for request in self.plan.requests:
            for stat in self._perform(request, block_instant):
                if stat.partition_path in stats:
                    stats[stat.partition_path].merge(stat)
                else:
                    stats[stat.partition_path] = stat
            self.listener.reached(Step.ROLLBACK_REQUEST)
        self._refuse_undeleted(stats.values())
        taken = int((time.monotonic() - started) * 1000)
        record = rollback_metadata_record(self.rollback_instant.timestamp, taken, self.plan.instant_time,
                                          self.plan.action, list(stats.values()))
        if self.table.config.has_metadata_table:
            self._update_metadata_table(record)
        self._check_lock()
        if self.delete_instant:
            self._delete_failed_instant()
        self.listener.reached(Step.ROLLBACK_INSTANT_DELETED)
        completed = Instant(self.rollback_instant.timestamp, ROLLBACK, State.COMPLETED)
        # Layout 2 names it `<t>_<completion>.rollback`, the completion time taken now, under the lock.
        storage.create_if_absent(self.table.reload_timeline().new_state_file_path(completed),
                                 serialize_rollback_metadata(record))
        self.listener.reached(Step.ROLLBACK_COMPLETE)
        self.listener.finished(ServiceRun(ROLLBACK, self.rollback_instant.timestamp, taken,
                                          self.table.is_metadata_table,
                                          files_deleted=record["totalFilesDeleted"]))
        delete_marker_dir(storage, self.plan.instant_time)
        self.table.reload_timeline()
        log.info("rolled back %s %s at %s: %d files deleted", self.plan.action, self.plan.instant_time,
                 self.rollback_instant.timestamp, record["totalFilesDeleted"])
        return record

    def _check_lock(self) -> None:
        """Before a step that deletes: the table's lock must still be ours (a metadata table's
        rollback runs under its data table's lock, checked by the data table's run)."""
        if self.lock is not None:
            self.lock.check_held()

    def _refuse_undeleted(self, stats: Iterable[PartitionRollbackStat]) -> None:
        """BaseRollbackHelper.deleteFiles throws when a delete fails: the rollback stays inflight and
        the next run retries it. Completing instead would drop the instant from the timeline while
        its uncommitted file stays, which readers take as committed once archival passes it. So no
        metadata-table update and no removal of the instant while a planned file still exists."""
        storage = self.table.storage
        left = [path for stat in stats for path in stat.failed_delete_files
                if storage.exists(table_relative(storage, path))]
        if left:
            raise DeleteFailedError(
                f"rollback {self.rollback_instant.timestamp} of {self.plan.instant_time} could not delete "
                f"{', '.join(left)}; it stays inflight and the next `hudi-assets rollback` (or LAZY clean) "
                "retries it", left)

    def _update_metadata_table(self, record: dict) -> None:
        """`writeTableMetadata`, in `finishRollback` before the failed instant's state files go."""
        self.metadata.rollback(self.rollback_instant.timestamp, record, self.plan, self.listener)

    def _delete_failed_instant(self) -> None:
        """deleteInflightAndRequestedInstant: the inflight file first, so a crash leaves a write that
        is still pending (its rollback is resumed), never a half-removed one."""
        timeline = self.table.reload_timeline()
        for state in (State.INFLIGHT, State.REQUESTED):
            instant = Instant(self.plan.instant_time, self.plan.action, state)
            if timeline.has_state_file(instant):
                self.table.storage.delete_checked([timeline.state_file_path(instant)])

    def _perform(self, request: RollbackRequest, block_instant: str) -> list[PartitionRollbackStat]:
        """BaseRollbackHelper.maybeDeleteAndCollectStats for one request."""
        if request.files_to_delete:
            return [self._delete(path) for path in request.files_to_delete]
        stat = PartitionRollbackStat(request.partition_path)
        if request.log_blocks_to_delete:
            rel, size = self._append_rollback_block(request, block_instant)
            stat.rollback_log_files[self.table.storage.uri(rel)] = size
            stat.log_files_from_failed_commit.update(request.log_blocks_to_delete)
        return [stat]

    def _delete(self, path: str) -> PartitionRollbackStat:
        storage = self.table.storage
        rel = table_relative(storage, path)
        directory, _, name = rel.rpartition("/")
        # Hadoop's local file system deletes a file's `.crc` checksum with it (its listing hides
        # them, Hudi's raw listing filter takes them): a checksum of a deleted file goes too.
        companions = [f"{directory}/.{name}.crc" if directory else f".{name}.crc"] if storage.is_local else []
        outcome = storage.delete_many([rel, *companions])
        stat = PartitionRollbackStat(directory)
        # Hadoop's delete() answers false for a file already gone (a resumed rollback), which Hudi 0.x
        # records as a failed delete; Hudi 1.x's RollbackHelper.deleteFiles as a success once it
        # finds the file gone (and fails the rollback while the file is still there). So do we.
        gone = rel in outcome.deleted or (deletes_only(self.table.config) and rel in outcome.missing)
        (stat.success_delete_files if gone else stat.failed_delete_files).append(path)
        for failed, why in outcome.failed.items():
            log.warning("rollback %s could not delete %s: %s", self.rollback_instant.timestamp,
                        storage.uri(failed), why)
        return stat

    def _append_rollback_block(self, request: RollbackRequest, block_instant: str) -> tuple[str, int]:
        """Log out the failed instant's blocks in the slice: a rollback command block in a new log
        version (pyarrow's stores, like Hudi's local and object stores, cannot append, so Hudi's log
        writer rolls over to version + 1 with the token of task-less writers)."""
        storage = self.table.storage
        partition = request.partition_path
        latest = latest_log_file(self.table, partition, request.file_id, request.latest_base_instant)
        if latest is not None and self._is_our_block(partition, latest.name):
            rel = f"{partition}/{latest.name}" if partition else latest.name
            create_append_marker(storage, self.rollback_instant.timestamp, rel)
            status = storage.status(rel)
            return rel, status.size if status else 0
        version = latest.version + 1 if latest is not None else 1
        name = LogFileName(request.file_id, request.latest_base_instant, "log", version,
                           ROLLBACK_WRITE_TOKEN).format()
        rel = f"{partition}/{name}" if partition else name
        data = encode_block(rollback_command_block(block_instant, self.plan.instant_time))
        create_append_marker(storage, self.rollback_instant.timestamp, rel)
        storage.create_if_absent(rel, data)
        return rel, len(data)

    def _is_our_block(self, partition: str, name: str) -> bool:
        """A log file a killed run of this rollback wrote: one rollback command block aimed at the
        failed instant, in a task-less writer's file."""
        if not name.endswith(f"_{ROLLBACK_WRITE_TOKEN}"):
            return False
        rel = f"{partition}/{name}" if partition else name
        blocks = list(read_blocks(self.table.storage.read(rel), self.table.storage.uri(rel)))
        return (len(blocks) == 1 and blocks[0].block_type == BlockType.COMMAND
                and blocks[0].header.get(HeaderKey.COMMAND_BLOCK_TYPE) == ROLLBACK_COMMAND
                and blocks[0].header.get(HeaderKey.TARGET_INSTANT_TIME) == self.plan.instant_time)
