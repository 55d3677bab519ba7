"""orphan_files: the data files no commit owns, per table, beside the maintenance graph.

A dry run unless the registry's `dry_run` is off (then the orphans move to a quarantine run that
`hudi-assets repair orphans PATH --undo RUN` restores). Its check warns when the orphans exceed
`WARN_FILES` files or `WARN_BYTES` bytes; a refusal (an unreadable archive, a file older than both
timelines, too many orphans) fails the check as an ERROR and records no materialization.
"""

from __future__ import annotations

import dagster as dg
import pandas as pd

from hudi_assets.exceptions import HudiInputError
from hudi_assets.orchestration.checks import logged, refused
from hudi_assets.orchestration.display import bytes_metadata, table_value
from hudi_assets.repair import OrphanFileRepair
from hudi_assets.table import HoodieTable

ORPHAN_CHECK = "orphan_files_within_bounds"
WARN_FILES = 1_000
WARN_BYTES = 1 << 30
ORPHAN_DESCRIPTION = (f"WARN when more than {WARN_FILES:,} orphan files or {WARN_BYTES >> 30} GiB of them "
                      "are found (data files no completed commit, active or archived, lists); ERROR when "
                      "the run is refused.")
COLUMNS = ["partition", "instant", "files", "bytes"]


def orphan_files(context: dg.AssetExecutionContext, key: str, table: HoodieTable):
    """Finds the data files no completed commit owns (as `hudi-assets repair orphans --dry-run`);
    quarantines them when the registry's dry_run is off."""
    hudi = context.resources.hudi
    service = OrphanFileRepair.for_table(table, hudi.engine_for(context.resources.spark))
    try:
        result = service.plan() if hudi.dry_run else service.quarantine()
    except HudiInputError as exc:
        yield logged(context, dg.AssetCheckResult(check_name=ORPHAN_CHECK, passed=False,
                                                  severity=dg.AssetCheckSeverity.ERROR, description=str(exc)))
        return refused(context, f"{key}: {exc}")
    rows = [(p, i, files, size) for (p, i), (files, size) in result.by_partition_instant().items()]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    over = len(result.orphans) > WARN_FILES or result.total_bytes > WARN_BYTES
    yield logged(context, dg.AssetCheckResult(
        check_name=ORPHAN_CHECK, passed=not over, severity=dg.AssetCheckSeverity.WARN,
        description=f"{len(result.orphans)} orphan files, {result.total_bytes} bytes" if over else None,
        metadata={"orphan_files": len(result.orphans), "orphan_bytes": result.total_bytes}))
    if result.run:
        context.log.info(f"{key}: {len(result.orphans)} orphan files quarantined in run {result.run}")
    yield dg.MaterializeResult(metadata={
        "dry_run": result.dry_run,
        "orphan_files": len(result.orphans),
        **bytes_metadata("orphan_bytes", result.total_bytes),
        "kept_by_guards": len(result.kept),
        "quarantine_run": result.run or "",
        "by_partition_instant": table_value(frame),
    })
