"""clean_plan -> clean_result: Hudi's cleaner as two steps over the core workflow.

Before planning, clean_plan checks that the metadata table (which it plans from) agrees with storage in
the partitions it is about to plan (`metadata_checks`). The plan is validated in memory before
`<t>.clean.requested` is written: a requested clean is one Hudi's own writers would go on to execute,
so an unsafe plan must never reach the timeline.
clean_result loads nothing from clean_plan: it executes exactly the pending plans the core re-reads
from the timeline and re-validates (`Cleaner.run_pending`), whoever requested them and whenever.
"""

from __future__ import annotations

import time

import dagster as dg
import pandas as pd

from hudi_assets.clean.cleaner import Cleaner, CleanResult
from hudi_assets.clean.config import CleanConfig
from hudi_assets.clean.plan import CleanerPlan
from hudi_assets.clean.trigger import needs_cleaning
from hudi_assets.clean.validation import ValidationReport
from hudi_assets.exceptions import DeleteFailedError
from hudi_assets.fsview import FileSystemView
from hudi_assets.listener import Listener
from hudi_assets.metrics import MetricsListener
from hudi_assets.orchestration.assets import timeline_guard
from hudi_assets.orchestration.checks import check_result, logged, refused
from hudi_assets.orchestration.display import bytes_metadata, instant_metadata, readable_bytes, table_value
from hudi_assets.orchestration.invariants import SURVIVORS_SCHEMA, violations
from hudi_assets.orchestration.metadata_checks import metadata_guard
from hudi_assets.orchestration.operations import DISCARD_JOB
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata

PLAN_COLUMNS = ["partition", "file", "path", "size_bytes"]
VIOLATION_COLUMNS = ["plan_file", "path", "problem"]
TOP_FILES = 20


def _plan_frame(cleaner: Cleaner, plans: list[CleanerPlan]) -> pd.DataFrame:
    """One row per planned file with its size (the core's `Cleaner.file_sizes`)."""
    rows = []
    for plan in plans:
        sizes = cleaner.file_sizes(plan)
        for partition, files in plan.file_paths_to_delete.items():
            for info, size in zip(files, sizes[partition], strict=True):
                rows.append({"partition": partition, "file": info.file_path.rpartition("/")[2],
                             "path": info.file_path, "size_bytes": size})
    return pd.DataFrame(rows, columns=PLAN_COLUMNS).astype({"size_bytes": "int64"})


def _plan_metadata(frame: pd.DataFrame) -> dict[str, object]:
    """Totals, the largest files and the per-partition breakdown of planned deletes."""
    by_partition = frame.groupby("partition").agg(files=("file", "size"), size_bytes=("size_bytes", "sum"))
    top = frame.nlargest(TOP_FILES, "size_bytes")[["partition", "file", "size_bytes"]]
    return {
        "files_to_delete": len(frame),
        **bytes_metadata("bytes_to_delete", int(frame["size_bytes"].sum())),
        f"largest_{TOP_FILES}_files": table_value(top.assign(size=top["size_bytes"].map(readable_bytes))),
        "per_partition": table_value(by_partition.reset_index()),
    }


def plan_check(context: dg.OpExecutionContext, table: HoodieTable, report: ValidationReport
               ) -> dg.AssetCheckResult:
    """The core's verdict on the plans, with the offending rows the CLI prints too."""
    if report.safe:
        return dg.AssetCheckResult(check_name="plan_is_safe", passed=True,
                                   metadata={"plans_checked": len(report.plans)})
    frame = pd.DataFrame([(v.plan_file, v.path, v.problem) for v in report.violations],
                         columns=VIOLATION_COLUMNS)
    first = report.violations[0]
    return logged(context, dg.AssetCheckResult(
        check_name="plan_is_safe", passed=False, severity=dg.AssetCheckSeverity.ERROR,
        description=f"unsafe clean plan {first.plan_file}: {first.path}: {first.problem} "
                    f"({len(frame)} offending entries); nothing was deleted. Remove it with the job "
                    f"{DISCARD_JOB} (table, instant {first.instant}) or `hudi-assets clean {table.base_path} "
                    f"--discard-pending {first.instant}`",
        metadata={"offending_rows": table_value(frame.head(50))},
    ))


def clean_plan(context: dg.AssetExecutionContext, key: str, table: HoodieTable):
    """The clean Hudi would run now (or the pending ones it would finish first), one row per file."""
    hudi = context.resources.hudi
    if not timeline_guard(context, table, key):
        return
    config = CleanConfig.from_write_config(table.write_config)
    cleaner = Cleaner(table, config, hudi.engine_for(context.resources.spark))
    cleaner.refuse_unsupported(dry_run=hudi.dry_run)
    if not hudi.dry_run:  # under LAZY, failed writes go first: they would pin the ECTR forever
        cleaner.roll_back_failed_writes()
    pending = cleaner.pending()
    if not (yield from metadata_guard(context, key, cleaner, pending)):
        return
    plans = [p for p in pending if p.plan is not None]
    if plans:
        report = cleaner.validate(pending)
        plan, instant, source = plans[0].plan, plans[0].instant.timestamp, "pending"
    elif needs_cleaning(table, config):
        plan = cleaner.plan(with_sizes=True)
        report = cleaner.validate_new(plan)
        instant, source = None, "planned"
    else:
        plan, instant, source, report = None, None, "not due", ValidationReport()
    frame = _plan_frame(cleaner, [plan] if plan else [])
    check = plan_check(context, table, report)
    yield check
    if not check.passed:
        refused(context, f"{key}: {check.description}")
        return
    if plan and source == "planned" and not hudi.dry_run:
        instant = cleaner.request(plan)
    ectr = plan.ectr_timestamp if plan else None
    context.log.info(f"{key}: clean {source}{' (dry run)' if hudi.dry_run else ''}: {len(frame)} files, "
                     f"{readable_bytes(int(frame['size_bytes'].sum()))}, earliest commit to retain "
                     f"{ectr or 'none'}{f', requested as {instant}' if instant else ''}")
    zone = table.config.timeline_timezone
    yield dg.MaterializeResult(metadata={
        "source": source,
        "dry_run": hudi.dry_run,
        "policy": config.policy,
        **instant_metadata("clean", instant, zone),
        **instant_metadata("earliest_commit_to_retain", ectr, zone),
        "partitions_to_delete": len(plan.partitions_to_delete) if plan else 0,
        **_plan_metadata(frame),
        # hudi_assets.cleaner.reader.window: versions superseded too recently, left out of a new plan
        "held_back_by_reader_window": (cleaner.planner.held_back.describe() if source == "planned"
                                       and cleaner.planner.held_back.files else ""),
    })


def _must_survive(table: HoodieTable, view: FileSystemView, ectr: str | None) -> list[str]:
    """Files the cleans must leave: every latest slice, and everything written at or after the ECTR."""
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


def _deleted(table: HoodieTable, instants: list[str]) -> set[tuple[str, str]]:
    """(partition, file name) the completed cleans report as deleted."""
    active = table.reload_timeline()
    removed: set[tuple[str, str]] = set()
    for ts in instants:
        clean = metadata.completed_metadata(active, active.get(ts, "clean")) or {}
        for partition, stat in (clean.get("partitionMetadata") or {}).items():
            removed.update((partition, name) for name in stat.get("successDeleteFiles") or [])
    return removed


class _LoggedProgress(Listener):
    """The deletes' progress in the run's log, every few seconds
    (hoodie.assets.clean.progress.interval.ms)."""

    def __init__(self, context: dg.AssetExecutionContext):
        self.context = context

    def progress(self, done: int, total: int) -> None:
        self.context.log.info(f"deleted {done} of {total} files")


def clean_result(context: dg.AssetExecutionContext, key: str, table: HoodieTable):
    """Executes every pending clean as the timeline holds it now, and reports what was deleted."""
    hudi = context.resources.hudi
    metrics = MetricsListener.for_table(table, _LoggedProgress(context))
    cleaner = Cleaner(table, CleanConfig.from_write_config(table.write_config),
                      hudi.engine_for(context.resources.spark), listener=metrics)
    plans = [p.plan for p in cleaner.pending() if p.plan is not None]
    view = FileSystemView(table)
    planned = _plan_frame(cleaner, plans)
    # Later plans may delete what an earlier plan kept: the last plan's ECTR is what must hold after all.
    ectr = plans[-1].ectr_timestamp if plans else None
    must_survive = _must_survive(table, view, ectr) if plans else []
    started = time.monotonic()
    result = CleanResult()
    if plans and not hudi.dry_run:
        try:
            cleaner.run_pending(result=result)
        except DeleteFailedError as error:  # the cleans completed; the next clean retries the files
            context.log.warning(str(error))
    frame = pd.DataFrame({"path": must_survive})
    frame["exists"] = existing(table.storage, must_survive)
    yield check_result(context, "retained_files_exist", violations(SURVIVORS_SCHEMA, frame), frame,
                       "files of retained instants are missing")
    failed = result.failed
    yield logged(context, dg.AssetCheckResult(
        check_name="no_failed_deletes", passed=not failed, severity=dg.AssetCheckSeverity.WARN,
        description=f"{len(failed)} file(s) could not be deleted; the next clean retries them: "
                    + ", ".join(failed[:5]) if failed else None,
        metadata={"files_failed": len(failed)}))
    removed = _deleted(table, list(result.completed))
    deleted = [(p, f) in removed for p, f in zip(planned["partition"], planned["file"], strict=True)]
    reclaimed = int(planned.loc[deleted, "size_bytes"].sum()) if len(planned) else 0
    context.log.info(f"{key}: {len(result.executed)} clean(s) executed, {result.files_deleted} files deleted "
                     f"({readable_bytes(reclaimed)}), {len(failed)} failed")
    yield dg.MaterializeResult(metadata={
        "dry_run": hudi.dry_run,
        "pending_plans": len(plans),
        "cleans_completed": table_value(pd.DataFrame(
            [(c.instant, c.files_deleted, c.partitions_deleted) for c in result.executed],
            columns=["instant", "files_deleted", "partitions_deleted"])),
        "files_deleted": result.files_deleted,
        "files_failed": len(failed),
        **bytes_metadata("bytes_reclaimed", reclaimed),
        "duration_seconds": round(time.monotonic() - started, 3),
        **metrics.gauges,  # HoodieMetrics' names: <prefix>.clean.numFilesDeleted, ...
    })

