"""What a data-table rollback writes to the metadata table, as Hudi 0.15's
`HoodieBackedTableMetadataWriter.update(HoodieRollbackMetadata, instantTime)` does from
`BaseRollbackActionExecutor.finishRollback`: after the rollback's deletes and command blocks, before
the failed instant's state files go and `<t>.rollback` is written, under the same table lock.

1. One metadata deltacommit at the rollback's own instant time with `files` partition records only
   (`HoodieTableMetadataUtil.convertMetadataToRecords` for `HoodieRollbackMetadata`): per partition
   the log files the rollback appended (`rollbackLogFiles`, the larger size when named twice), then the
   log files the plan logs out (`logBlocksToBeDeleted`, re-added so that listing through the metadata
   table still shows them). Deleted files are not recorded: they were only ever listed by the failed
   instant's own metadata deltacommit, which step 2 undoes.
2. The failed instant's metadata deltacommit, when on the metadata timeline, rolled back at
   `<rollback time>006` (`createRollbackTimestamp`). Hudi rolls back a completed one here and leaves a
   pending one to the metadata write client's own failed-writes rollback; hudi-assets rolls back both,
   as its failed data instant is gone for good.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from hudi_assets.listener import Listener, Step
from hudi_assets.metadata.clean_records import open_metadata_table, refuse_unknown_partitions
from hudi_assets.metadata.deltacommit_rollback import DeltacommitRollbackSink
from hudi_assets.metadata.payloads import MetadataRecord, partition_files_record
from hudi_assets.metadata.rollback_validation import check_metadata_rollback, refuse_held_writes
from hudi_assets.metadata.writer import MetadataTableWriter
from hudi_assets.rollback.metadata import RollbackPlan, deletes_only
from hudi_assets.rollback.pending import pending_rollbacks
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import DELTA_COMMIT

ROLLBACK_SUFFIX = "006"  # HoodieTableMetadataUtil.OperationSuffix.ROLLBACK


def rollback_records(rollback_metadata: Mapping[str, Any], plan: RollbackPlan) -> list[MetadataRecord]:
    """`convertMetadataToRollbackRecords`: one `files` record per partition the rollback touched.

    Hudi re-adds the plan's log files with size 1, counting on the failed instant's own record to
    raise it to the real size; that record is rolled back in step 2, so the size the planner measured
    is recorded instead (1 only when it measured none)."""
    appended: dict[str, dict[str, int]] = {}
    for stat in (rollback_metadata.get("partitionMetadata") or {}).values():
        files = appended.setdefault(stat["partitionPath"], {}) if stat.get("rollbackLogFiles") else None
        for path, size in (stat.get("rollbackLogFiles") or {}).items():
            name = path.rpartition("/")[2]
            files[name] = max(size, files.get(name, size))
    for request in plan.requests:
        files = appended.setdefault(request.partition_path, {})
        files.update({path.rpartition("/")[2]: size if size > 0 else 1
                      for path, size in request.log_blocks_to_delete.items()})
    return [partition_files_record(partition, added=files) for partition, files in appended.items()]


def update_metadata_table(table: HoodieTable, rollback_time: str, rollback_metadata: Mapping[str, Any],
                          plan: RollbackPlan, listener: Listener, *,
                          metadata_table: HoodieTable | None = None) -> None:
    """Steps 1 and 2 of the module docstring; every step can be repeated after a crash (a retried
    deltacommit is rolled back and written again, a pending metadata rollback is resumed).
    `metadata_table`: the metadata table as the refusal check opened it, if it did."""
    writer = MetadataTableWriter(table, listener, metadata_table)
    failed = plan.instant_time
    mdt = writer.open()
    check_metadata_rollback(mdt, mdt.reload_timeline(), failed)  # checked up front too (the sink)
    writer.commit(rollback_time, rollback_records(rollback_metadata, plan))
    on_timeline = any(i.timestamp == failed for i in mdt.reload_timeline().filter_actions({DELTA_COMMIT}))
    if on_timeline or failed in pending_rollbacks(mdt):
        writer.roll_back(failed, f"{rollback_time}{ROLLBACK_SUFFIX}")
    listener.reached(Step.MDT_ROLLED_BACK)


class MetadataTableSink:
    """What a rollback of `table`'s data hands the metadata table (`rollback.executor.MetadataSink`):
    the refusal of a metadata table hudi-assets cannot keep in step or of a write it holds, and steps
    1 and 2 above. On Hudi 1.x tables (delete-only rollbacks) Hudi writes no records: the failed
    write's metadata deltacommit is rolled back instead (`deltacommit_rollback.DeltacommitRollbackSink`)."""

    def __init__(self, table: HoodieTable):
        self.table = table
        self._metadata_table: HoodieTable | None = None  # opened once, by the refusal check
        self._hudi_1x = DeltacommitRollbackSink(table) if deletes_only(table.config) else None

    def refuse_unwritable(self, action: str) -> None:
        if self._hudi_1x is not None:
            self._hudi_1x.refuse_unwritable(action)
        else:
            self._metadata_table = refuse_unknown_partitions(self.table, action)

    def validate_rollback(self, instant_times: Collection[str]) -> None:
        if self._hudi_1x is not None:
            self._hudi_1x.validate_rollback(instant_times)
        else:
            refuse_held_writes(self._metadata_table or open_metadata_table(self.table), instant_times)

    def rollback(self, rollback_time: str, record: Mapping[str, Any], plan: RollbackPlan,
                 listener: Listener) -> None:
        if self._hudi_1x is not None:
            self._hudi_1x.rollback(rollback_time, record, plan, listener)
        else:
            update_metadata_table(self.table, rollback_time, record, plan, listener,
                                  metadata_table=self._metadata_table)

