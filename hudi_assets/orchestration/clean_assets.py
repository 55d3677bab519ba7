"""clean_plan -> clean_result: Hudi's cleaner as two assets, each guarded by a blocking pandera check.

The plan is validated in memory before `<t>.clean.requested` is written: a requested clean is one
Hudi's own writers would go on to execute, so an unsafe plan must never reach the timeline.
"""

import time
from dataclasses import dataclass, field

import dagster as dg
import pandas as pd
from dagster_pyspark import LazyPySparkResource

from hudi_assets.clean.config import CleanConfig
from hudi_assets.clean.plan import CleanerPlan
from hudi_assets.clean.trigger import needs_cleaning
from hudi_assets.clean.validation import ValidationReport
from hudi_assets.clean.workflow import (
    pending_cleans,
    plan_clean,
    refuse_unsupported,
    request_clean,
    run_pending,
    validate_new_plan,
    validate_pending,
)
from hudi_assets.fsview import FileSystemView
from hudi_assets.orchestration.assets import GROUP, TABLES, check_result, markdown_table, timeline_snapshot
from hudi_assets.orchestration.invariants import SURVIVORS_SCHEMA, violations
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata

PLAN_COLUMNS = ["partition", "file", "path", "size_bytes"]
VIOLATION_COLUMNS = ["plan_file", "path", "problem"]


@dataclass
class CleanPlanOutput:
    """What clean_result needs: the plan, its instant (None: not requested), and what must survive."""

    frame: pd.DataFrame
    instant: str | None
    dry_run: bool
    ectr: str | None
    must_survive: list[str] = field(default_factory=list)


def _plan_frame(table: HoodieTable, view: FileSystemView, plan: CleanerPlan) -> pd.DataFrame:
    """One row per planned file with its size, for the metadata people read."""
    rows = []
    for partition, files in plan.file_paths_to_delete.items():
        sizes = view.file_sizes(partition)
        for info in files:
            name = info.file_path.rpartition("/")[2]
            rows.append({"partition": partition, "file": name, "path": info.file_path,
                         "size_bytes": sizes.get(name, 0)})
    return pd.DataFrame(rows, columns=PLAN_COLUMNS)


def _must_survive(table: HoodieTable, view: FileSystemView, ectr: str | None) -> list[str]:
    """Files the clean must leave: every latest slice, and everything written at or after the ECTR."""
    paths = {p for partition in view.partitions for s in view.latest_file_slices(partition) for p in s.paths}
    if ectr is not None:
        active = table.active_timeline
        for instant in active.completed_commits_timeline(table.is_mor).at_or_after(ectr):
            paths.update(metadata.commit_metadata(active, instant).written_paths)
    return sorted(paths)


def existing(storage, paths: list[str]) -> list[bool]:
    """Whether each path exists, from one listing per directory rather than one call per file."""
    by_directory: dict[str, set[str]] = {}
    for path in paths:
        directory = path.rpartition("/")[0]
        if directory not in by_directory:
            by_directory[directory] = set(storage.list_names(directory)[0])
    return [path.rpartition("/")[2] in by_directory[path.rpartition("/")[0]] for path in paths]


def plan_check(report: ValidationReport) -> dg.AssetCheckResult:
    """The core's verdict on the plans, with the offending rows the CLI prints too."""
    if report.safe:
        return dg.AssetCheckResult(check_name="plan_is_safe", passed=True,
                                   metadata={"plans_checked": len(report.plans)})
    frame = pd.DataFrame([(v.plan_file, v.path, v.problem) for v in report.violations],
                         columns=VIOLATION_COLUMNS)
    first = report.violations[0]
    return dg.AssetCheckResult(
        check_name="plan_is_safe", passed=False, severity=dg.AssetCheckSeverity.ERROR,
        description=f"unsafe clean plan {first.plan_file}: {first.path}: {first.problem} "
                    f"({len(frame)} offending entries); nothing was deleted. Remove it with "
                    f"`hudi-assets clean PATH --discard-pending {first.instant}`",
        metadata={"offending_rows": markdown_table(frame.head(50))},
    )


@dg.asset(partitions_def=TABLES, group_name=GROUP, deps=[timeline_snapshot], kinds={"hudi", "spark"},
          check_specs=[dg.AssetCheckSpec(
              "plan_is_safe", asset="clean_plan", blocking=True,
              description="Every pending plan, and a new one before it is requested, passes the core's "
                          "safety rule: data files of the table only, inside the base path; no latest slice, "
                          "savepointed file, file read by a pending compaction/clustering, or slice a reader "
                          "at the earliest commit to retain needs; partitions deleted only when empty.")])
def clean_plan(context: dg.AssetExecutionContext, hudi: HudiTableRegistry, spark: LazyPySparkResource):
    """The clean Hudi would run now (or the pending ones it would finish first), one row per file."""
    key = context.partition_key
    table = hudi.open(key)
    config = CleanConfig.from_write_config(hudi.write_config(key, table))
    refuse_unsupported(table, config)
    pending = pending_cleans(table)
    plans = [p for p in pending if p.plan is not None]
    if plans:
        report = validate_pending(table, config, pending)
        plan, instant, source = plans[0].plan, plans[0].instant.timestamp, "pending"
    elif needs_cleaning(table, config):
        plan, _ = plan_clean(table, config, hudi.engine_for(spark))
        report = validate_new_plan(table, config, plan)
        instant, source = None, "planned"
    else:
        plan, instant, source, report = None, None, "not due", ValidationReport()
    view = FileSystemView(table)
    frame = _plan_frame(table, view, plan) if plan else pd.DataFrame(columns=PLAN_COLUMNS)
    yield plan_check(report)
    if report.safe and plan and source == "planned" and not hudi.dry_run:
        instant = request_clean(table, config, plan)
    ectr = plan.ectr_timestamp if plan else None
    by_partition = frame.groupby("partition").agg(files=("file", "size"), bytes=("size_bytes", "sum"))
    yield dg.Output(
        CleanPlanOutput(frame, instant if report.safe else None, hudi.dry_run, ectr,
                        _must_survive(table, view, ectr) if plan else []),
        metadata={
            "source": source,
            "clean_instant": instant or "",
            "dry_run": hudi.dry_run,
            "policy": config.policy,
            "earliest_commit_to_retain": ectr or "",
            "files_to_delete": len(frame),
            "bytes_to_delete": int(frame["size_bytes"].sum()) if len(frame) else 0,
            "partitions_to_delete": len(plan.partitions_to_delete) if plan else 0,
            "per_partition": markdown_table(by_partition.reset_index()),
        },
    )


@dg.asset(partitions_def=TABLES, group_name=GROUP, kinds={"hudi", "spark"},
          check_specs=[dg.AssetCheckSpec(
              "retained_files_exist", asset="clean_result", blocking=True,
              description="After the clean, every file of the latest slices and every file written at or "
                          "after the earliest commit to retain still exists.")])
def clean_result(context: dg.AssetExecutionContext, clean_plan: CleanPlanOutput, hudi: HudiTableRegistry,
                 spark: LazyPySparkResource):
    """Runs the requested clean (and any other pending one) and reports what it deleted."""
    key = context.partition_key
    table = hudi.open(key)
    started = time.monotonic()
    completed: dict[str, int] = {}
    failed = 0
    removed: set[tuple[str, str]] = set()  # (partition, file name) the cleans report deleted
    if not clean_plan.dry_run:
        config = CleanConfig.from_write_config(hudi.write_config(key, table))

        def progress(done: int, total: int) -> None:
            if done == total or done % 1000 == 0:
                context.log.info(f"deleted {done} of {total} files")

        completed = run_pending(table, config, hudi.engine_for(spark), progress).completed
        active = table.reload_timeline()
        for ts in completed:
            clean = metadata.completed_metadata(active, active.get(ts, "clean")) or {}
            for partition, stat in (clean.get("partitionMetadata") or {}).items():
                failed += len(stat.get("failedDeleteFiles") or [])
                removed.update((partition, name) for name in stat.get("successDeleteFiles") or [])
    frame = pd.DataFrame({"path": clean_plan.must_survive})
    frame["exists"] = existing(table.storage, clean_plan.must_survive)
    yield check_result("retained_files_exist", violations(SURVIVORS_SCHEMA, frame), frame,
                       "files of retained instants are missing")
    plan = clean_plan.frame
    deleted = pd.Series([(p, f) in removed for p, f in zip(plan["partition"], plan["file"], strict=True)],
                        index=plan.index, dtype=bool)
    reclaimed = plan.loc[deleted, "size_bytes"]
    yield dg.MaterializeResult(metadata={
        "dry_run": clean_plan.dry_run,
        "cleans_completed": ", ".join(completed) or "none",
        "files_deleted": sum(completed.values()),
        "files_failed": failed,
        "bytes_reclaimed": int(reclaimed.sum()),
        "duration_seconds": round(time.monotonic() - started, 3),
    })


CLEAN_ASSETS = [clean_plan, clean_result]
