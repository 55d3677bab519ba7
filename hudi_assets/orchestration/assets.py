"""timeline_snapshot: what the table's timeline says, and the checks that read it.

Steps here and in `clean_assets` / `archive_assets` are plain generator functions of
`(context, key, table)`; `factory` turns them into assets of one table (or of a table partition), opening
the table once per step and running a writing step's guards before it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import dagster as dg
import pandas as pd

from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.maintenance import maintenance_status
from hudi_assets.orchestration.checks import check_result, logged, refused, settings_in_force
from hudi_assets.orchestration.display import bytes_metadata, instant_epoch, instant_metadata, table_value
from hudi_assets.orchestration.invariants import TIMELINE_SCHEMA, violations
from hudi_assets.orchestration.metadata_checks import metadata_table_facts
from hudi_assets.orchestration.status_metadata import health_check, status_metadata
from hudi_assets.status import table_status
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.report import timeline_rows
from hudi_assets.timeline.savepoint import completed_savepoints

TIMELINE_COLUMNS = ["timeline", "instant", "action", "state", "completed", "operation", "partitions",
                    "files_written", "bytes_written", "files_deleted"]
STALE_PENDING_SECONDS = 24 * 3600


def timeline_frame(table: HoodieTable, details: bool = True) -> pd.DataFrame:
    frame = pd.DataFrame(timeline_rows(table, details=details)).reindex(columns=TIMELINE_COLUMNS)
    frame["completed"] = frame["state"] == "COMPLETED"
    return frame


def _age_hours(table: HoodieTable, instant: str, now: float) -> float | None:
    epoch = instant_epoch(instant, table.config.timeline_timezone)
    return None if epoch is None else round((now - epoch) / 3600, 1)


def timeline_snapshot(context: dg.AssetExecutionContext, key: str, table: HoodieTable):
    """The table's active and archived timeline: counts, pending instants and their ages; the metadata
    table's partitions, file groups, latest compaction and deltacommits since; the status report
    (each service due, blocked and why, backlog, file sizes) and the health rule over it."""
    config = table.write_config
    as_of = datetime.now(UTC)
    try:
        report = table_status(table, now=as_of)
    except HudiAssetsError as error:  # the snapshot stands without it; the health check says why
        context.log.warning(f"{key}: no status report: {error}")
        report = error
    frame = timeline_frame(table)
    active = frame[frame["timeline"] == "active"]
    pending = active[~active["completed"]]
    status = maintenance_status(table, config)
    now = time.time()
    zone = table.config.timeline_timezone
    by_action = active.groupby(["action", "state"]).size().rename("instants").reset_index()
    context.log.info(f"{key}: {len(active)} active instants ({len(pending)} pending), "
                     f"{status.commits_since_last_clean} commits since the last clean")
    yield dg.MaterializeResult(metadata={
        "active_instants": len(active),
        "archived_instants": int((frame["timeline"] == "archived").sum()),
        "pending_instants": len(pending),
        "completed_commits": status.completed_commits,
        "commits_since_last_clean": status.commits_since_last_clean,
        **bytes_metadata("bytes_written_active", int(active["bytes_written"].fillna(0).sum())),
        **instant_metadata("latest_instant", status.latest_instant, zone),
        **instant_metadata("oldest_pending", pending["instant"].min() if len(pending) else None, zone),
        "pending": table_value(pending[["instant", "action", "state"]].assign(
            age_hours=pending["instant"].map(lambda i: _age_hours(table, i, now)))),
        "active_by_action": table_value(by_action),
        # Settings in force at this snapshot: JSON, so that they are shown and never plotted.
        "retention_settings": dg.MetadataValue.json(settings_in_force(config)),
        "clean_due": status.clean_due,
        "archive_due": status.archive_due,
        **metadata_table_facts(table),
        "savepoints": table_value(savepoints_frame(table)),
        **status_metadata(report),
    })
    yield health_check(context, report, context.resources.hudi.unhealthy_after_hours, as_of)


SAVEPOINT_COLUMNS = ["instant", "savepointed_by", "savepointed_at", "comments", "files"]


def savepoints_frame(table: HoodieTable) -> pd.DataFrame:
    """The table's completed savepoints as their metadata says (what each keeps alive in bytes needs a
    clean plan per savepoint: `hudi-assets savepoint list`)."""
    rows = [[s.instant, s.savepointed_by, pd.Timestamp(s.savepointed_at, unit="ms", tz="UTC").isoformat(),
             s.comments, s.file_count] for s in completed_savepoints(table.active_timeline)]
    return pd.DataFrame(rows, columns=SAVEPOINT_COLUMNS).astype({"files": "int64"})


def timeline_is_well_formed(context: dg.AssetCheckExecutionContext, key: str) -> dg.AssetCheckResult:
    # One listing, read afresh: the check runs alone from the UI too.
    frame = timeline_frame(context.resources.hudi.open(key), details=False)
    return check_result(context.op_execution_context, "timeline_is_well_formed",
                        violations(TIMELINE_SCHEMA, frame), frame, "malformed timeline")


def timeline_guard(context: dg.OpExecutionContext, table: HoodieTable, key: str) -> bool:
    """Whether clean_plan may plan on this timeline: the well-formedness the check on timeline_snapshot
    shows, re-read by the first deleting step (no check is `blocking=True`, see `factory`), so a
    malformed timeline stops the clean and the steps after it."""
    failures = violations(TIMELINE_SCHEMA, timeline_frame(table, details=False))
    return failures.empty or refused(context, f"{key} ({table.base_path}): malformed timeline (see the check "
                                              "timeline_is_well_formed); nothing was planned or deleted")


def no_stale_pending_write(context: dg.AssetCheckExecutionContext, key: str) -> dg.AssetCheckResult:
    """WARN: the oldest pending write fences archiving (Hudi keeps everything from the commit before
    it); one left behind by a dead writer stops archiving for good until it is rolled back."""
    table = context.resources.hudi.open(key)
    oldest = table.active_timeline.write_timeline().filter_pending().first()
    age = _age_hours(table, oldest.timestamp, time.time()) if oldest else None
    metadata = instant_metadata("oldest_pending_write", oldest.timestamp if oldest else None,
                                table.config.timeline_timezone)
    stale = age is not None and age * 3600 > STALE_PENDING_SECONDS
    description = (f"{oldest.file_name} has been pending for {age} hours: archiving keeps every instant "
                   f"from the commit before it; roll it back if its writer is gone") if stale else None
    return logged(context.op_execution_context, dg.AssetCheckResult(
        check_name="no_stale_pending_write", passed=not stale, severity=dg.AssetCheckSeverity.WARN,
        description=description, metadata={**metadata, "age_hours": age if age is not None else 0.0}))

