"""The per-table health rule: a table is unhealthy when its clean, its archive or a metadata-table
service is due and has been blocked for longer than a limit. One rule, here, for every face: the
Dagster check on `timeline_snapshot` shows it; the status report carries what it reads."""

from __future__ import annotations

from datetime import datetime

from hudi_assets.status.report import TableStatus
from hudi_assets.timeline.instant_time import instant_epoch

DEFAULT_UNHEALTHY_AFTER_HOURS = 24.0


def blocked_hours(status: TableStatus, name: str, now: datetime) -> float | None:
    """How long service `name` (as `TableStatus.services` names it) has been blocked; None: it is
    not blocked, or the blocking instant's time does not parse as a date."""
    service = status.services()[name]
    if not service.blocked_since:
        return None
    epoch = instant_epoch(service.blocked_since, status.table["timeline_timezone"])
    return None if epoch is None else max(0.0, (now.timestamp() - epoch) / 3600)


def unhealthy_services(status: TableStatus, after_hours: float, now: datetime) -> dict[str, str]:
    """The services due and blocked for longer than `after_hours`, each with the sentence saying
    how long and why (the status report's own reasons)."""
    found = {}
    for name, service in status.services().items():
        hours = blocked_hours(status, name, now)
        if service.due and hours is not None and hours > after_hours:
            found[name] = (f"{name} due and blocked for {hours:.1f} h (more than {after_hours:g} h): "
                           + "; ".join(service.reasons))
    return found
