"""Hudi's cleaner outside the JVM: `CleanPlanner` decides, `CleanActionExecutor` acts.

`clean_table` runs one clean the way Hudi's write client does (§2 of the spec): finish every
pending clean, schedule a new plan if the trigger allows, and execute it.
"""

from hudi_assets.clean.config import CleanConfig, CleaningPolicy
from hudi_assets.clean.executor import CleanActionExecutor, CleanResult, clean_table, schedule_clean
from hudi_assets.clean.plan import CleanerPlan, CleanFileInfo
from hudi_assets.clean.planner import CleanPlanner

__all__ = [
    "CleanActionExecutor",
    "CleanConfig",
    "CleanFileInfo",
    "CleanPlanner",
    "CleanResult",
    "CleanerPlan",
    "CleaningPolicy",
    "clean_table",
    "schedule_clean",
]
