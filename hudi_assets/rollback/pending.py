"""Pending rollbacks (BaseHoodieTableServiceClient.getPendingRollbackInfos): read by the data
table's rollback workflow and by the metadata table writer, which rolls back metadata instants."""

from __future__ import annotations

import logging
from dataclasses import dataclass

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
        plan = RollbackPlan.deserialize(timeline.read_details(requested), path)
        if plan.action == COMPACTION or (plan.action == REPLACE_COMMIT and is_clustering(
                timeline, Instant(plan.instant_time, REPLACE_COMMIT, State.INFLIGHT))):
            continue
        found.setdefault(plan.instant_time, PendingRollback(instant, plan))
    return found
