"""Hudi's cleaner outside the JVM: `CleanPlanner` decides, `CleanActionExecutor` acts.

`Cleaner` (`clean.cleaner`) runs one clean the way Hudi's write client does: schedule a new plan if
the trigger allows, validate every pending plan against the table as it is (`clean.validation`), and
execute them in time order.
"""

from hudi_assets.clean.cleaner import Cleaner, CleanResult, PendingClean
from hudi_assets.clean.config import CleanConfig, CleaningPolicy
from hudi_assets.clean.executor import CleanActionExecutor
from hudi_assets.clean.plan import CleanerPlan, CleanFileInfo
from hudi_assets.clean.planner import CleanPlanner
from hudi_assets.clean.validation import PlanViolation, ValidationReport

__all__ = [
    "CleanActionExecutor",
    "CleanConfig",
    "CleanFileInfo",
    "CleanPlanner",
    "CleanResult",
    "Cleaner",
    "CleanerPlan",
    "CleaningPolicy",
    "PendingClean",
    "PlanViolation",
    "ValidationReport",
]
