"""The metadata table in the graph: whether it agrees with storage, and its facts for timeline_snapshot.

A clean plans from the metadata table's `files` partition (then re-validates the plan against
storage before any delete). So before clean_plan plans, the partitions it is about to plan are
compared with storage: a check, and nothing is planned when they disagree. The other partitions are
compared by the on-demand job `hudi_metadata_audit` (`operations`), never in a maintenance run: a full
listing per run would undo what planning from the metadata table saves. A table without a metadata
table passes both, saying so.
"""

from __future__ import annotations

from collections.abc import Collection

import dagster as dg
import pandas as pd

from hudi_assets.clean.cleaner import Cleaner, PendingClean
from hudi_assets.metadata.keys import FILES
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.metadata.validate import validate_files
from hudi_assets.orchestration.checks import logged, refused
from hudi_assets.orchestration.display import instant_metadata, table_value
from hudi_assets.table import HoodieTable

AGREES = "metadata_table_agrees_with_storage"
AGREES_DESCRIPTION = ("The metadata table lists exactly the data files on storage in the partitions the "
                      "clean is about to plan (or the pending plans touch); nothing is planned otherwise. "
                      "Passes for a table without a metadata table.")
DIFFERENCE_COLUMNS = ["partition", "file", "problem"]


def has_files_partition(table: HoodieTable) -> bool:
    return FILES in table.config.metadata_partitions


def agreement_check(context: dg.OpExecutionContext, table: HoodieTable, name: str,
                    severity: dg.AssetCheckSeverity, *, partitions: Collection[str] | None = None,
                    exclude: Collection[str] = ()) -> dg.AssetCheckResult:
    """`validate_files` over `partitions` (all when None) but `exclude`, as a check result."""
    if not has_files_partition(table):
        return dg.AssetCheckResult(check_name=name, passed=True, severity=severity,
                                   description="no metadata table",
                                   metadata={"metadata_table": False, "differences": 0})
    differences = validate_files(MetadataTable(table.storage), partitions, exclude)
    scope = {"partitions_checked": len(partitions)} if partitions is not None else {
        "partitions_left_out": len(exclude)}
    frame = pd.DataFrame([(d.partition, d.file, d.problem) for d in differences], columns=DIFFERENCE_COLUMNS)
    description = None
    if differences:
        shown = "; ".join(str(d) for d in differences[:5])
        description = (f"the metadata table and storage disagree about {len(differences)} file(s): {shown}"
                       f"{'; ...' if len(differences) > 5 else ''}. Check with `hudi-assets metadata "
                       f"{table.base_path} --validate`")
    return logged(context, dg.AssetCheckResult(
        check_name=name, passed=not differences, severity=severity, description=description,
        metadata={"metadata_table": True, "differences": len(differences), **scope,
                  "offending_rows": table_value(frame.head(50))}))


def metadata_guard(context: dg.OpExecutionContext, key: str, cleaner: Cleaner, pending: list[PendingClean]):
    """Yields the agreement check of the partitions `cleaner` is about to clean; returns whether
    clean_plan may plan (when not, nothing is planned or deleted)."""
    table = cleaner.table
    partitions = cleaner.partitions_to_clean(pending) if has_files_partition(table) else []
    result = agreement_check(context, table, AGREES, dg.AssetCheckSeverity.ERROR, partitions=partitions)
    yield result
    return result.passed or refused(context, f"{key}: {result.description}; nothing was planned or deleted")


def metadata_table_facts(table: HoodieTable) -> dict[str, object]:
    """The metadata table's partitions and file groups, its latest compaction and the deltacommits
    since (MDT compaction stays with the table's writer); the same fields, empty, without one."""
    rows, compaction, since = [], None, 0
    present = has_files_partition(table)
    if present:
        metadata = MetadataTable(table.storage)
        rows = [(p, len(metadata.file_slices(p))) for p in metadata.partitions]
        latest = metadata.latest_compaction()
        compaction = latest.timestamp if latest else None
        since = len(metadata.deltacommits_since(latest))
    frame = pd.DataFrame(rows, columns=["partition", "file_groups"])
    return {
        "metadata_table": present,
        "metadata_partitions": table_value(frame),
        "metadata_file_groups": int(frame["file_groups"].sum()),
        **instant_metadata("metadata_latest_compaction", compaction, table.config.timeline_timezone),
        "metadata_deltacommits_since_compaction": since,
    }
