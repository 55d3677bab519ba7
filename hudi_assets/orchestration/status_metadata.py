"""The status report (`hudi_assets.status`) as typed metadata of `timeline_snapshot`, and the check
`table_is_healthy` that shows the per-table health rule (`status.health`) on it."""

from __future__ import annotations

from datetime import datetime

import dagster as dg

from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.orchestration.checks import logged
from hudi_assets.orchestration.display import bytes_metadata
from hudi_assets.status import TableStatus
from hudi_assets.status.health import blocked_hours, unhealthy_services

HEALTH_CHECK = "table_is_healthy"
HEALTH_DESCRIPTION = ("WARN when the clean, the archive or a metadata-table service is due and has been "
                      "blocked for longer than the registry's unhealthy_after_hours (the reasons are the "
                      "words of `hudi-assets status`).")


def _key(service: str) -> str:
    return service.replace(" ", "_")


def status_metadata(status: TableStatus | HudiAssetsError) -> dict[str, dg.MetadataValue]:
    """Each service's verdict and reasons, and the report's figures, typed (numbers are plotted;
    the whole report is attached as JSON); for a report that could not be made, the error."""
    if isinstance(status, HudiAssetsError):
        return {"status_error": dg.MetadataValue.text(str(status))}
    values: dict[str, dg.MetadataValue] = {}
    for name, service in status.services().items():
        key = _key(name)
        if name not in ("clean", "archive"):  # clean_due, archive_due: the sensor's, from the trigger
            due = "unknown" if service.due is None else str(service.due)
            values[f"{key}_due"] = dg.MetadataValue.text(due)
        values[f"{key}_blocked"] = dg.MetadataValue.bool(service.blocked)
        values[f"{key}_reasons"] = dg.MetadataValue.md("\n".join(f"- {r}" for r in service.reasons))
    clean, files = status.clean.facts, status.files
    values["clean_files_to_delete"] = dg.MetadataValue.int(clean.get("files_to_delete", 0))
    values.update(bytes_metadata("clean_bytes_to_reclaim", clean.get("bytes_to_reclaim", 0)))
    archive = status.archive.facts
    values["archive_instants_to_archive"] = dg.MetadataValue.int(archive.get("instants_to_archive", 0))
    values["file_groups"] = dg.MetadataValue.int(files["file_groups"])
    values.update(bytes_metadata("base_file_size_p50", files["base_file_size"]["p50"]))
    values["small_files"] = dg.MetadataValue.int(files["small_files"])
    if status.compaction_backlog is not None:
        values["compaction_backlog_log_files"] = dg.MetadataValue.int(status.compaction_backlog["log_files"])
        values.update(bytes_metadata("compaction_backlog_log_bytes", status.compaction_backlog["log_bytes"]))
    if status.metadata_table and "data_instants_behind" in status.metadata_table:
        values["metadata_table_instants_behind"] = dg.MetadataValue.int(
            status.metadata_table["data_instants_behind"])
    values["status"] = dg.MetadataValue.json(status.to_dict())
    return values


def health_check(context: dg.OpExecutionContext, status: TableStatus | HudiAssetsError, after_hours: float,
                 now: datetime) -> dg.AssetCheckResult:
    """The health rule over the report `timeline_snapshot` made (no second listing); failed when no
    report could be made. WARN, as this face's checks that are things to look at: it guards no data."""
    if isinstance(status, HudiAssetsError):
        return logged(context, dg.AssetCheckResult(
            check_name=HEALTH_CHECK, passed=False, severity=dg.AssetCheckSeverity.WARN,
            description=f"the status could not be read: {status}"))
    unhealthy = unhealthy_services(status, after_hours, now)
    hours = {f"{_key(name)}_blocked_hours": dg.MetadataValue.float(round(h, 2))
             for name in status.services() if (h := blocked_hours(status, name, now)) is not None}
    return logged(context, dg.AssetCheckResult(
        check_name=HEALTH_CHECK, passed=not unhealthy, severity=dg.AssetCheckSeverity.WARN,
        description="; ".join(unhealthy.values()) or None,
        metadata={"unhealthy_after_hours": dg.MetadataValue.float(after_hours), **hours,
                  "unhealthy_services": dg.MetadataValue.text(", ".join(unhealthy) or "none")}))
