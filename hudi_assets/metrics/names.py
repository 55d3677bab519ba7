"""The metrics Hudi's `HoodieMetrics` (0.15) reports for each table service, by the names it gives them.

`getMetricsName(action, metric)` is `<prefix>.<action>.<metric>` (`<action>.<metric>` without a prefix);
the prefix is `hoodie.metrics.reporter.metricsname.prefix`, inferred from the table name, its dots made
`_`; a metadata table's write client gets the data table's prefix plus `_metadata`. What each run
reports, as Hudi's write client does when the action completes:

- clean: `clean.duration`, `clean.numFilesDeleted` (the clean metadata's `totalFilesDeleted`);
- rollback: `rollback.duration`, `rollback.numFilesDeleted`;
- archive: `archive.duration`, `archive.numInstantsArchived` (also 0 when nothing was archived; a merge of
  small archive files is part of Hudi's archive run and has no metric of its own);
- a metadata table's compaction and deltacommit: `updateCommitMetrics` under `compaction` and
  `deltacommit`: `commitTime`, `duration` and the totals of the commit's write stats.

A clean, an archive and a rollback also stop a Dropwizard timer of their own (`getCleanCtx`,
`getArchiveCtx`, `getRollbackCtx`), `<prefix>.timer.<action>`: in a short process, as in Hudi's one-shot
utilities, it holds the one run (count 1, every quantile its duration in seconds). The timers of
commits and compactions (`timer.commit`, `timer.deltacommit`) are a writer's and are left out.
"""

from __future__ import annotations

import re

from hudi_assets.config import WriteConfig
from hudi_assets.config_options import METRICS_REPORTER_PREFIX
from hudi_assets.listener import ServiceRun
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.instant_time import instant_epoch

DURATION = "duration"
DELETE_FILES_NUM = "numFilesDeleted"
DELETE_INSTANTS_NUM = "numInstantsArchived"
COMMIT_TIME = "commitTime"
TIMER_ACTION = "timer"
TIMED_ACTIONS = frozenset({"clean", "archive", "rollback"})  # HoodieMetrics' get<Action>Ctx
METADATA_TABLE_SUFFIX = "_metadata"  # HoodieMetadataWriteUtils: the metadata table's metrics prefix

# HoodieMetrics' commit metrics: name -> the write-stat field summed (HoodieCommitMetadata's fetch*).
_SUMMED = {
    "totalRecordsWritten": "numWrites",
    "totalUpdateRecordsWritten": "numUpdateWrites",
    "totalBytesWritten": "totalWriteBytes",
    "totalCompactedRecordsUpdated": "totalUpdatedRecordsCompacted",
    "totalLogFilesCompacted": "totalLogFilesCompacted",
    "totalLogFilesSize": "totalLogSizeCompacted",
    "totalRecordsDeleted": "numDeletes",
}
_RUNTIME = {"totalScanTime": "totalScanTime", "totalCreateTime": "totalCreateTime",
            "totalUpsertTime": "totalUpsertTime"}
# DropwizardExports: Collector.sanitizeMetricName (simpleclient 0.x, which Hudi's reporters use).
_FIRST = re.compile(r"^[^a-zA-Z_:]")
_BODY = re.compile(r"[^a-zA-Z0-9_:]")


def metrics_prefix(config: WriteConfig) -> str:
    """The data table's prefix (`getMetricReporterMetricsNamePrefix`)."""
    return config.get(METRICS_REPORTER_PREFIX).replace(".", "_")


def metrics_name(prefix: str, action: str, metric: str) -> str:
    """HoodieMetrics.getMetricsName."""
    return f"{prefix}.{action}.{metric}" if prefix else f"{action}.{metric}"


def exported_name(name: str) -> str:
    """The Prometheus name Hudi's reporters export a metric under: DropwizardExports sanitizes it, each
    character outside `[a-zA-Z0-9_:]` (the dots) becoming `_`."""
    return _BODY.sub("_", _FIRST.sub("_", name, count=1))


def commit_metrics(commit: CommitMetadata) -> dict[str, int]:
    """`updateCommitMetrics`' totals of one commit (HoodieCommitMetadata's fetch* methods)."""
    stats = commit.write_stats
    inserted = [s for s in stats if (s.fields.get("prevCommit") or "").lower() == "null"]
    totals = {
        "totalPartitionsWritten": len(commit.partition_to_write_stats),
        "totalFilesInsert": len(inserted),
        "totalFilesUpdate": sum(1 for s in stats if s.fields.get("prevCommit") is not None) - len(inserted),
        "totalInsertRecordsWritten": sum(s.fields.get("numInserts") or 0 for s in stats
                                         if s.fields.get("prevCommit") is not None),
    }
    totals.update({name: sum(s.fields.get(field) or 0 for s in stats) for name, field in _SUMMED.items()})
    totals.update({name: sum((s.fields.get("runtimeStats") or {}).get(field) or 0 for s in stats)
                   for name, field in _RUNTIME.items()})
    return totals


def service_metrics(prefix: str, run: ServiceRun, timezone: str = "LOCAL") -> dict[str, int]:
    """The metrics HoodieMetrics reports for `run`, by full name (`prefix`: the data table's; `timezone`:
    the timeline's, UTC or LOCAL, for `commitTime`)."""
    prefix = _run_prefix(prefix, run)
    values: dict[str, int] = {DURATION: run.duration_ms}
    if run.files_deleted is not None:
        values[DELETE_FILES_NUM] = run.files_deleted
    if run.instants_archived is not None:
        values[DELETE_INSTANTS_NUM] = run.instants_archived
    if run.commit is not None:
        values.update(commit_metrics(run.commit))
        epoch = instant_epoch(run.instant or "", timezone)
        if epoch is not None:
            values[COMMIT_TIME] = int(epoch * 1000)
    return {metrics_name(prefix, run.action, metric): value for metric, value in values.items()}


def service_timers(prefix: str, run: ServiceRun) -> dict[str, float]:
    """The timer HoodieMetrics stops for `run` (clean, archive, rollback), by full name: the run's
    duration in seconds; none for other actions."""
    if run.action not in TIMED_ACTIONS:
        return {}
    return {metrics_name(_run_prefix(prefix, run), TIMER_ACTION, run.action): run.duration_ms / 1000}


def _run_prefix(prefix: str, run: ServiceRun) -> str:
    """A metadata table's write client reports under the data table's prefix + `_metadata`."""
    return prefix + METADATA_TABLE_SUFFIX if run.metadata_table and prefix else prefix
