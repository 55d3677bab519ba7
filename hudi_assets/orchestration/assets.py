"""The maintenance lineage graph of one Hudi table (a partition of every asset is one table)."""

import time

import dagster as dg
import pandas as pd

from hudi_assets.maintenance import maintenance_status
from hudi_assets.orchestration.invariants import (
    CONFIG_SCHEMA,
    TIMELINE_SCHEMA,
    config_frame,
    describe,
    violations,
)
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.report import timeline_rows

TABLES = dg.DynamicPartitionsDefinition(name="hudi_tables")
GROUP = "hudi_maintenance"
TIMELINE_COLUMNS = ["timeline", "instant", "action", "state", "completed", "operation", "partitions",
                    "files_written", "bytes_written", "files_deleted"]


def _age_seconds(instant: str) -> float | None:
    """Age of an instant time (process time zone, as Hudi mints them); None when not a date."""
    try:
        minted = time.mktime(time.strptime(instant[:14], "%Y%m%d%H%M%S"))
    except ValueError:
        return None
    return round(time.time() - minted, 1)


def timeline_frame(table: HoodieTable, details: bool = True) -> pd.DataFrame:
    frame = pd.DataFrame(timeline_rows(table, details=details)).reindex(columns=TIMELINE_COLUMNS)
    frame["completed"] = frame["state"] == "COMPLETED"
    return frame


@dg.asset(partitions_def=TABLES, group_name=GROUP, kinds={"hudi"})
def timeline_snapshot(context: dg.AssetExecutionContext, hudi: HudiTableRegistry) -> dg.Output[pd.DataFrame]:
    """The table's active and archived timeline, one row per instant."""
    table = hudi.open(context.partition_key)
    frame = timeline_frame(table)
    active = frame[frame["timeline"] == "active"]
    pending = active[~active["completed"]]
    status = maintenance_status(table, hudi.write_config(context.partition_key, table))
    by_action_state = active.groupby(["action", "state"]).size()
    return dg.Output(frame, metadata={
        "base_path": table.base_path,
        "table_type": table.config.table_type,
        "active_instants": len(active),
        "archived_instants": int((frame["timeline"] == "archived").sum()),
        "pending_instants": len(pending),
        "completed_commits": status.completed_commits,
        "keep_max_commits": status.keep_max_commits,
        "commits_since_last_clean": status.commits_since_last_clean,
        "oldest_pending_instant": pending["instant"].min() if len(pending) else "",
        "active_by_action_state": dg.MetadataValue.json(
            {f"{a}/{s}": int(n) for (a, s), n in by_action_state.items()}),
        "pending": markdown_table(pending[["instant", "action", "state"]].assign(
            age_seconds=pending["instant"].map(_age_seconds))),
    })


def markdown_table(frame: pd.DataFrame) -> dg.MetadataValue:
    """A small DataFrame as a Markdown table for the Dagster UI ("none" when empty)."""
    if frame.empty:
        return dg.MetadataValue.md("none")
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)]
    return dg.MetadataValue.md("\n".join(lines))


def check_result(name: str, failures: pd.DataFrame, frame: pd.DataFrame, what: str) -> dg.AssetCheckResult:
    """The result of check `name` from pandera's failure cases, with the offending rows shown."""
    if failures.empty:
        return dg.AssetCheckResult(check_name=name, passed=True, metadata={"rows_checked": len(frame)})
    sentences = describe(failures, frame)
    index = failures["index"].dropna().astype(int).unique()
    return dg.AssetCheckResult(
        check_name=name,
        passed=False,
        description=f"{what}: " + "; ".join(sentences),
        metadata={"violations": dg.MetadataValue.md("\n".join(f"- {s}" for s in sentences)),
                  "offending_rows": markdown_table(frame.loc[index] if len(index) else failures)},
    )


@dg.asset_check(asset=timeline_snapshot, blocking=True,
                description="Retention settings are consistent before anything is planned or deleted: "
                            "commits.retained < keep.min < keep.max commits, values > 0, policy known.")
def retention_settings_are_safe(context: dg.AssetCheckExecutionContext,
                                hudi: HudiTableRegistry) -> dg.AssetCheckResult:
    key = context.op_execution_context.partition_key
    frame = config_frame(hudi.write_config(key, hudi.open(key)))
    return check_result("retention_settings_are_safe", violations(CONFIG_SCHEMA, frame), frame,
                        "unsafe retention settings")


@dg.asset_check(asset=timeline_snapshot, blocking=True,
                description="Every instant time is well formed and no two instants share time and action.")
def timeline_is_well_formed(context: dg.AssetCheckExecutionContext,
                            hudi: HudiTableRegistry) -> dg.AssetCheckResult:
    # Read afresh (one listing) rather than load the asset: Dagster hands an unpartitioned check
    # every materialized partition of a partitioned asset.
    frame = timeline_frame(hudi.open(context.op_execution_context.partition_key), details=False)
    return check_result("timeline_is_well_formed", violations(TIMELINE_SCHEMA, frame), frame,
                        "malformed timeline")


ASSETS = [timeline_snapshot]
CHECKS = [retention_settings_are_safe, timeline_is_well_formed]
