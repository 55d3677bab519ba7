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
from hudi_assets.clean.executor import CleanActionExecutor, refuse_metadata_table, request_clean
from hudi_assets.clean.plan import CleanerPlan
from hudi_assets.clean.planner import CleanPlanner
from hudi_assets.clean.trigger import needs_cleaning
from hudi_assets.exceptions import PathOutsideTableError
from hudi_assets.fsview import FileSystemView, LogFile, parse_base_file_name
from hudi_assets.orchestration.assets import GROUP, TABLES, check_result, markdown_table, timeline_snapshot
from hudi_assets.orchestration.invariants import PLAN_SCHEMA, SURVIVORS_SCHEMA, violations
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import State

PLAN_COLUMNS = ["partition", "file", "path", "file_id", "slice_instant", "size_bytes",
                "is_bootstrap_base_file", "inside_base_path", "in_latest_slice", "savepointed",
                "read_by_pending_plan", "before_ectr"]


@dataclass
class CleanPlanOutput:
    """What clean_result needs: the plan, its instant (None: not requested), and what must survive."""

    frame: pd.DataFrame
    instant: str | None
    dry_run: bool
    ectr: str | None
    must_survive: list[str] = field(default_factory=list)


def _file_facts(table: HoodieTable, view: FileSystemView, plan: CleanerPlan) -> pd.DataFrame:
    """One row per planned file, with every fact the plan invariants look at."""
    rows = []
    ectr = plan.ectr_timestamp
    for partition, files in plan.file_paths_to_delete.items():
        latest = {n for s in view.latest_file_slices(partition) for n in s.file_names}
        sizes = view.file_sizes(partition)
        for info in files:
            try:
                path, inside = table.storage.relativize(info.file_path), True
            except PathOutsideTableError:
                path, inside = info.file_path, False
            name = path.rpartition("/")[2]
            log = LogFile.parse(name)
            base = parse_base_file_name(name)
            if log is not None:
                file_id, instant = log.file_id, log.base_instant
            else:
                file_id, instant = (base[0], base[2]) if base else ("", "")
            rows.append({
                "partition": partition, "file": name, "path": path, "file_id": file_id,
                "slice_instant": instant,
                "size_bytes": sizes.get(name, 0), "is_bootstrap_base_file": info.is_bootstrap_base_file,
                "inside_base_path": inside and not path.startswith(".hoodie"),
                "in_latest_slice": name in latest and (partition, file_id) not in view.replaced_file_groups,
                "savepointed": name in view.savepointed_files,
                "read_by_pending_plan": name in view.pending_plan_files,
                "before_ectr": ectr is None or instant < ectr,
            })
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


def _pending_plan(executor: CleanActionExecutor) -> tuple[CleanerPlan, str] | None:
    """The plan of the oldest pending clean with one: Hudi finishes it before planning anew."""
    for instant in executor.pending_cleans():
        requested = instant.with_state(State.REQUESTED)  # an inflight file may be empty (1.x writers)
        if not executor.table.active_timeline.has_state_file(requested):
            continue
        pending = executor.pending_plan(requested)
        if pending is not None:
            return pending[0], instant.timestamp
    return None


@dg.asset(partitions_def=TABLES, group_name=GROUP, deps=[timeline_snapshot], kinds={"hudi", "spark"},
          check_specs=[dg.AssetCheckSpec(
              "plan_is_safe", asset="clean_plan", blocking=True,
              description="Every planned path is inside the base path; no file of a latest slice, of a "
                          "savepoint or read by a pending compaction/clustering; nothing at or after the "
                          "earliest commit to retain.")])
def clean_plan(context: dg.AssetExecutionContext, hudi: HudiTableRegistry, spark: LazyPySparkResource):
    """The clean Hudi would run now (or the pending one it would finish first), one row per file."""
    key = context.partition_key
    table = hudi.open(key)
    refuse_metadata_table(table)
    config = CleanConfig.from_write_config(hudi.write_config(key, table))
    engine = hudi.engine_for(spark)
    executor = CleanActionExecutor(table, config, engine)
    pending = _pending_plan(executor)
    if pending is not None:
        plan, instant, source = *pending, "pending"
    elif needs_cleaning(table, config):
        plan, instant, source = CleanPlanner(table, config, engine).plan(), None, "planned"
    else:
        plan, instant, source = None, None, "not due"
    view = FileSystemView(table)
    frame = _file_facts(table, view, plan) if plan else pd.DataFrame(columns=PLAN_COLUMNS)
    failures = violations(PLAN_SCHEMA, frame)
    safe = failures.empty
    yield check_result("plan_is_safe", failures, frame, "unsafe clean plan")
    if safe and plan and source == "planned" and not hudi.dry_run:
        instant = request_clean(table, plan)
    ectr = plan.ectr_timestamp if plan else None
    by_partition = frame.groupby("partition").agg(files=("file", "size"), bytes=("size_bytes", "sum"))
    yield dg.Output(
        CleanPlanOutput(frame, instant if safe else None, hudi.dry_run, ectr,
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

        executor = CleanActionExecutor(table, config, hudi.engine_for(spark), progress)
        completed = executor.run_pending().completed
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
