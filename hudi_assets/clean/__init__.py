"""Hudi's cleaner outside the JVM: `CleanPlanner` decides, `CleanActionExecutor` acts.

`clean.workflow` runs one clean the way Hudi's write client does: schedule a new plan if the
trigger allows, validate every pending plan against the table as it is (`clean.validation`), and
execute them in time order.
"""

from hudi_assets.clean.config import CleanConfig, CleaningPolicy
from hudi_assets.clean.executor import CleanActionExecutor, CleanHooks
from hudi_assets.clean.plan import CleanerPlan, CleanFileInfo
from hudi_assets.clean.planner import CleanPlanner
from hudi_assets.clean.validation import PlanViolation, ValidationReport, validate_plans
from hudi_assets.clean.workflow import (
    CleanResult,
    clean_table,
    discard_pending,
    pending_cleans,
    run_pending,
    schedule_clean,
    validate_pending,
)

__all__ = [
    "CleanActionExecutor",
    "CleanConfig",
    "CleanFileInfo",
    "CleanHooks",
    "CleanPlanner",
    "CleanResult",
    "CleanerPlan",
    "CleaningPolicy",
    "PlanViolation",
    "ValidationReport",
    "clean_table",
    "discard_pending",
    "pending_cleans",
    "run_pending",
    "schedule_clean",
    "validate_pending",
    "validate_plans",
]
