"""Rollback of failed writes (Hudi 0.15's rollback planner and executors; on table versions 8 and 9
Hudi 1.x's, which only delete), for the LAZY failed-writes policy and for an operator's explicit
request: `Rollbacker` is the service."""

from hudi_assets.rollback.executor import RollbackActionExecutor
from hudi_assets.rollback.metadata import RollbackPlan, RollbackRequest
from hudi_assets.rollback.pending import pending_rollbacks
from hudi_assets.rollback.planner import failed_writes, plan_rollback
from hudi_assets.rollback.rollbacker import ExecutedRollback, Rollbacker, RollbackResult

__all__ = [
    "ExecutedRollback",
    "RollbackActionExecutor",
    "RollbackPlan",
    "RollbackRequest",
    "RollbackResult",
    "Rollbacker",
    "failed_writes",
    "pending_rollbacks",
    "plan_rollback",
]
