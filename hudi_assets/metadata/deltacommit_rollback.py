"""What a data-table rollback does to the metadata table on table versions 8 and 9, as Hudi 1.x's
`HoodieBackedTableMetadataWriter.update(HoodieRollbackMetadata, instantTime)` does (apache/hudi 1.0.x,
stored-file id 1993771; master, id 54669790096): it writes no records. Hudi 0.x's `files` records of
a rollback (`rollback_records`) are gone: when the metadata timeline holds a deltacommit of the failed
instant, the metadata table's own write client rolls that deltacommit back, at the data rollback's
own instant time (the Java-written v9 rollback fixture has `<t>.rollback` at the same time on both
timelines and no metadata deltacommit of it); else nothing is done.

- A completed metadata deltacommit is checked first (`rollback_validation`: one at or before the
  metadata table's latest compaction is inside a compacted base file, and Hudi asks for a restore),
  then planned by listing (Hudi plans a completed instant's rollback by listing), un-published (its
  completed file goes, so readers skip its log files) and its files deleted.
- A pending one is planned as a failed write (its markers, else listing).
- A pending metadata rollback of it, which a killed run left, is resumed.

The data rollback calls `roll_back_metadata_deltacommit` between its deletes and the removal of the
failed instant's state files, under the data table's lock; `check_metadata_rollback` comes before
anything is written. `DeltacommitRollbackSink` is both, as the rollback's `MetadataSink`.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import Any

from hudi_assets.exceptions import UnsupportedTableError
from hudi_assets.listener import QUIET, Listener, Step
from hudi_assets.metadata.clean_records import open_metadata_table
from hudi_assets.metadata.rollback_validation import check_metadata_rollback, refuse_held_writes
from hudi_assets.rollback.executor import RollbackActionExecutor
from hudi_assets.rollback.metadata import RollbackPlan
from hudi_assets.rollback.pending import pending_rollbacks
from hudi_assets.rollback.planner import plan_rollback, plan_rollback_by_listing
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import PROPERTIES_FILE
from hudi_assets.timeline.instant import DELTA_COMMIT, ROLLBACK, Instant, State
from hudi_assets.timeline.timeline import ActiveTimeline

log = logging.getLogger(__name__)


def _deltacommit(timeline: ActiveTimeline, failed: str) -> Instant | None:
    """The metadata deltacommit requested at `failed`, in its highest state (None: not there)."""
    return next((i for i in timeline.filter_actions({DELTA_COMMIT}) if i.timestamp == failed), None)


def roll_back_metadata_deltacommit(mdt: HoodieTable, failed: str, rollback_time: str,
                                   listener: Listener = QUIET) -> dict | None:
    """Roll back the metadata deltacommit of the data instant `failed` at `rollback_time` (the data
    rollback's instant); the HoodieRollbackMetadata written, None when there was nothing to undo.
    Every step can be repeated after a crash: a pending metadata rollback is resumed."""
    pending = pending_rollbacks(mdt).get(failed)
    timeline = mdt.active_timeline  # as `pending_rollbacks` read it just now: read once
    target = _deltacommit(timeline, failed)
    if pending is not None:
        rollback, plan = pending.instant, pending.plan
    elif target is None:
        log.info("no metadata deltacommit of %s to roll back", failed)
        return None
    else:
        check_metadata_rollback(mdt, timeline, failed)
        plan = plan_rollback_by_listing(mdt, target) if target.is_completed else plan_rollback(mdt, target)
        rollback = Instant(rollback_time, ROLLBACK, State.REQUESTED)
        mdt.storage.create_if_absent(timeline.state_file_path(rollback), plan.serialize())
    if target is not None and target.is_completed:  # un-published before its files go
        mdt.storage.create_if_absent(timeline.state_file_path(target.with_state(State.INFLIGHT)), b"")
        mdt.storage.delete_checked([timeline.state_file_path(target)])
    log.info("rolling back metadata table deltacommit %s at %s", failed, rollback.timestamp)
    record = RollbackActionExecutor(mdt, rollback, plan, listener=listener).execute()
    listener.reached(Step.MDT_ROLLED_BACK)
    return record


class DeltacommitRollbackSink:
    """The metadata table's side of a rollback on table versions 8 and 9 (`rollback.executor.MetadataSink`,
    the 1.x counterpart of `rollback_records.MetadataTableSink`)."""

    def __init__(self, table: HoodieTable):
        self.table = table
        self._metadata_table: HoodieTable | None = None  # opened once, by the refusal check

    def refuse_unwritable(self, action: str) -> None:
        """Before anything is written: the metadata table opens (its own version and layout)."""
        mdt = open_metadata_table(self.table)
        if mdt.config.table_version != self.table.config.table_version:
            raise UnsupportedTableError(
                f"{mdt.storage.uri(PROPERTIES_FILE)}: metadata table version {mdt.config.table_version} "
                f"beside a table version {self.table.config.table_version} table; cannot {action} it")
        self._metadata_table = mdt

    def validate_rollback(self, instant_times: Collection[str]) -> None:
        """Before anything is written: no write the run rolls back has a metadata deltacommit a
        compaction already holds (`validateRollback`)."""
        refuse_held_writes(self._opened(), instant_times)

    def rollback(self, rollback_time: str, record: Mapping[str, Any], plan: RollbackPlan,
                 listener: Listener) -> None:
        roll_back_metadata_deltacommit(self._opened(), plan.instant_time, rollback_time, listener)

    def _opened(self) -> HoodieTable:
        """The metadata table as the refusal check opened it (opened here if it did not run)."""
        if self._metadata_table is None:
            self._metadata_table = open_metadata_table(self.table)
        return self._metadata_table
