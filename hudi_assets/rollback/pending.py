"""Pending rollbacks (BaseHoodieTableServiceClient.getPendingRollbackInfos): read by the data
table's rollback workflow and by the metadata table writer, which rolls back metadata instants."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from hudi_assets.discard import discard_instant
from hudi_assets.exceptions import CorruptFileError, StorageError
from hudi_assets.rollback.metadata import RollbackPlan
from hudi_assets.rollback.planner import is_clustering
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import COMPACTION, REPLACE_COMMIT, ROLLBACK, Instant, State

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PendingRollback:
    instant: Instant  # the rollback's own requested or inflight instant
    plan: RollbackPlan


def pending_rollbacks(table: HoodieTable) -> dict[str, PendingRollback]:
    """getPendingRollbackInfos (compaction and clustering ignored): instant undone -> its rollback.
    The plan is read from the requested file, which an inflight rollback keeps."""
    timeline = table.reload_timeline()
    found: dict[str, PendingRollback] = {}
    for instant in timeline.rollback_timeline().filter_pending():
        requested = Instant(instant.timestamp, ROLLBACK, State.REQUESTED)
        path = table.storage.uri(timeline.state_file_path(requested))
        if not timeline.has_state_file(requested):
            log.warning("pending rollback %s has no requested file %s: skipped", instant.timestamp, path)
            continue
        try:
            plan = RollbackPlan.deserialize(timeline.read_details(requested), path)
        except CorruptFileError as exc:
            _drop_corrupt(table, instant, exc)
            continue
        if plan.action == COMPACTION or (plan.action == REPLACE_COMMIT and is_clustering(
                timeline, Instant(plan.instant_time, REPLACE_COMMIT, State.INFLIGHT))):
            continue
        found.setdefault(plan.instant_time, PendingRollback(instant, plan))
    return found


def _drop_corrupt(table: HoodieTable, instant: Instant, exc: CorruptFileError) -> None:
    """getPendingRollbackInfos: a requested rollback whose plan cannot be read has done nothing and
    is removed (we keep a copy in the discarded folder); an inflight one is skipped, its plan
    assumed intact and the failure another's (its files may be half deleted: never dropped)."""
    if not instant.is_requested:
        log.warning("pending rollback %s skipped: %s", instant.timestamp, exc)
        return
    log.warning("requested rollback %s has a plan that cannot be read (%s): removing it",
                instant.timestamp, exc)
    try:
        discard_instant(table, instant)
    except StorageError as failed:  # `Storage.delete_checked`: a state file that stays
        log.warning("cannot remove %s: %s", instant, failed)
