"""metadata_services: the metadata table's compaction, clean and archive after the data table's clean
(`MetadataServices`, Hudi 0.15's order), and what blocks them.

A writer runs these services inline after its commits, so this step acts only under a Hudi lock
provider shared with the writers (`hoodie.write.lock.provider`); without one it reports what is due
and what blocks it, changes nothing, and says why in its metadata (not a failure: it is how the table
is set up). The WARN check tells when the compaction is held back while more deltacommits wait than
`hoodie.metadata.compact.max.delta.commits`: log files pile up in `.hoodie/metadata` until the
blocker (named, with the command that removes it) goes.
"""

from __future__ import annotations

import dagster as dg
import pandas as pd

from hudi_assets.metadata_services import ActiveWriterError, MetadataServices, MetadataServicesStatus
from hudi_assets.metadata_services.services import check_no_other_writer
from hudi_assets.metrics import MetricsListener
from hudi_assets.orchestration.checks import logged
from hudi_assets.orchestration.display import bytes_metadata, table_value
from hudi_assets.table import HoodieTable

BLOCKED_CHECK = "mdt_compaction_not_blocked"
BLOCKED_DESCRIPTION = ("WARN when the metadata table's compaction is blocked while more deltacommits "
                       "than hoodie.metadata.compact.max.delta.commits wait since the last one.")


def blocked_check(context: dg.OpExecutionContext, status: MetadataServicesStatus) -> dg.AssetCheckResult:
    """Failed (WARN) when the compaction is blocked with more than max.delta.commits deltacommits
    since the last compaction; the blockers' reasons name the way out."""
    blockers = status.compaction.blocked_by
    since, limit = status.deltacommits_since_compaction, status.max_delta_commits
    metadata = {"deltacommits_since_compaction": since, "max_delta_commits": limit}
    if not blockers or since <= limit:
        return dg.AssetCheckResult(check_name=BLOCKED_CHECK, passed=True, severity=dg.AssetCheckSeverity.WARN,
                                   metadata=metadata)
    return logged(context, dg.AssetCheckResult(
        check_name=BLOCKED_CHECK, passed=False, severity=dg.AssetCheckSeverity.WARN,
        description=f"metadata table compaction blocked with {since} deltacommits since the last one "
                    f"(due at {limit}): " + "; ".join(b.reason for b in blockers),
        metadata=metadata))


def _blockers(status: MetadataServicesStatus) -> pd.DataFrame:
    return pd.DataFrame([(name, b.instant, b.action, b.reason) for name in ("compaction", "clean", "archive")
                         for b in getattr(status, name).blocked_by],
                        columns=["service", "instant", "action", "reason"])


def metadata_services(context: dg.AssetExecutionContext, key: str, table: HoodieTable):
    """Compacts, cleans and archives the metadata table as its writer would (under the writers' lock
    provider), reporting deltacommits since compaction, log files and bytes before and after, and
    what blocked each service."""
    hudi = context.resources.hudi
    if not table.config.has_metadata_table:
        yield dg.AssetCheckResult(check_name=BLOCKED_CHECK, passed=True, severity=dg.AssetCheckSeverity.WARN,
                                  metadata={"metadata_table": False})
        context.log.info(f"{key}: no metadata table")
        yield dg.MaterializeResult(metadata={"metadata_table": False})
        return
    metrics = MetricsListener.for_table(table)
    services = MetadataServices(table, listener=metrics)
    not_run = "dry run" if hudi.dry_run else ""
    if not not_run:
        try:
            check_no_other_writer(table, no_active_writer=False)
        except ActiveWriterError as error:
            not_run = str(error)
            context.log.warning(f"{key}: metadata table services not run: {not_run}")
    result = services.run(dry_run=bool(not_run))
    before, after = result.before, result.after or result.before
    yield blocked_check(context, after)
    context.log.info(f"{key}: compacted {result.compacted or 'nothing'}, cleaned "
                     f"{result.cleaned or 'nothing'} ({result.files_cleaned} files), archived "
                     f"{result.archived} instants")
    yield dg.MaterializeResult(metadata={
        "metadata_table": True,
        "ran": not not_run,
        "not_run_because": not_run,
        "deltacommits_since_compaction_before": before.deltacommits_since_compaction,
        "deltacommits_since_compaction": after.deltacommits_since_compaction,
        "log_files_before": before.log_files,
        "log_files": after.log_files,
        **bytes_metadata("log_bytes_before", before.log_bytes),
        **bytes_metadata("log_bytes", after.log_bytes),
        "compacted": ", ".join(result.compacted),
        "cleaned": ", ".join(result.cleaned),
        "files_cleaned": result.files_cleaned,
        "instants_archived": result.archived,
        "blocked_by": table_value(_blockers(before)),
        **metrics.gauges,  # HoodieMetrics' names: <prefix>_metadata.compaction.duration, ...
    })
