"""Rollback of failed writes (Hudi 0.15's rollback planner and executors), for the LAZY
failed-writes policy and for an operator's explicit request."""

from hudi_assets.rollback.executor import RollbackActionExecutor, RollbackHooks
from hudi_assets.rollback.metadata import RollbackPlan, RollbackRequest
from hudi_assets.rollback.pending import pending_rollbacks
from hudi_assets.rollback.planner import failed_writes, plan_rollback
from hudi_assets.rollback.workflow import (
    ExecutedRollback,
    discard_pending_rollback,
    rollback_failed_writes,
    rollback_write,
)

__all__ = [
    "ExecutedRollback",
    "RollbackActionExecutor",
    "RollbackHooks",
    "RollbackPlan",
    "RollbackRequest",
    "discard_pending_rollback",
    "failed_writes",
    "pending_rollbacks",
    "plan_rollback",
    "rollback_failed_writes",
    "rollback_write",
]
