"""Rows describing a table's timeline, for the command line and the Dagster timeline snapshot."""

from __future__ import annotations

from typing import Any

from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import CLEAN, ROLLBACK, Instant
from hudi_assets.timeline.timeline import COMMIT_ACTIONS, ActiveTimeline


def _details(active: ActiveTimeline, instant: Instant) -> dict[str, Any]:
    """What a completed commit wrote, or a completed clean/rollback deleted (one metadata read)."""
    if instant.action in COMMIT_ACTIONS:
        commit = metadata.commit_metadata(active, instant)
        return {"operation": commit.operation_type, "partitions": len(commit.partitions),
                "files_written": len(commit.write_stats), "bytes_written": commit.total_bytes_written}
    if instant.action in (CLEAN, ROLLBACK):
        done = metadata.completed_metadata(active, instant) or {}
        return {"files_deleted": done.get("totalFilesDeleted", 0)}
    return {}


def _active_rows(table: HoodieTable, details: bool) -> list[dict[str, Any]]:
    active = table.active_timeline
    rows = []
    for instant in active:
        row: dict[str, Any] = {
            "timeline": "active",
            "instant": instant.timestamp,
            "action": instant.action,
            "state": instant.state.name,
            "completion_time": active.completion_time(instant),
            "state_file_mtime_ms": active.state_files[instant].mtime_ms,
        }
        if details and instant.is_completed:
            row.update(_details(active, instant))
        rows.append(row)
    return rows


def _archived_rows(table: HoodieTable) -> list[dict[str, Any]]:
    """One row per archived instant (its highest archived state) not also active, oldest first: an
    archive run between writing the archive and deleting the state files (or one that crashed
    there) holds an instant in both, and it is shown once, as active."""
    archived = table.timeline_layout.load_archived_instants(table.storage, table.config)
    active = {i.comparable_key for i in table.active_timeline}
    return [
        {"timeline": "archived", "instant": i.timestamp, "action": i.action, "state": i.state.name,
         "completion_time": archived.completion_time(i)}
        for i in archived if i.comparable_key not in active
    ]


def timeline_rows(table: HoodieTable, include_archived: bool = True,
                  details: bool = True) -> list[dict[str, Any]]:
    """Archived instants (oldest first), then the active timeline; `instant` is the requested time,
    `completion_time` the completion time where the layout records it (layout 2), else None;
    `details` adds what each completed commit wrote and each clean/rollback deleted (one metadata
    read per instant)."""
    archived = _archived_rows(table) if include_archived else []
    return archived + _active_rows(table, details)
