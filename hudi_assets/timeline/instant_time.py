"""New instant times, as Hudi's `HoodieInstantTimeGenerator` makes them.

`yyyyMMddHHmmssSSS` of the current time in the table's timeline time zone (`UTC`, else the
process's local zone), strictly greater than every instant already on the timeline: Hudi loops
until the clock passes the last time it handed out; we also step past any instant another writer
left (for example one stamped by a clock ahead of ours) by taking that instant plus one millisecond.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

INSTANT_FORMAT = "%Y%m%d%H%M%S"


def format_instant_time(moment: datetime) -> str:
    return f"{moment:{INSTANT_FORMAT}}{moment.microsecond // 1000:03d}"


def parse_instant_time(ts: str) -> datetime | None:
    """A 17-digit (or legacy 14-digit) instant time as a naive datetime; None if not a date."""
    try:
        if len(ts) == 17:
            return datetime.strptime(ts[:14], INSTANT_FORMAT) + timedelta(milliseconds=int(ts[14:]))
        if len(ts) == 14:
            return datetime.strptime(ts, INSTANT_FORMAT)
    except ValueError:
        return None
    return None


def now_in_zone(timezone: str = "LOCAL", now: datetime | None = None) -> datetime:
    """The current time as wall-clock time in the timeline zone (naive)."""
    moment = now or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.astimezone()  # a naive `now` is local time
    if timezone.upper() == "UTC":
        return moment.astimezone(UTC).replace(tzinfo=None)
    return moment.astimezone().replace(tzinfo=None)


def new_instant_time(existing: Iterable[str], timezone: str = "LOCAL", now: datetime | None = None) -> str:
    """A new instant time strictly greater (as a string) than every time in `existing`."""
    candidate = format_instant_time(now_in_zone(timezone, now))
    latest = max(existing, default="")
    if candidate > latest:
        return candidate
    parsed = parse_instant_time(latest[:17])
    if parsed is not None and len(latest) <= 17:
        bumped = format_instant_time(parsed + timedelta(milliseconds=1))
        if bumped > latest:
            return bumped
    # A time that is not a date (or an MDT suffixed time): the next 17-digit string after it.
    return str(int(latest[:17].ljust(17, "0")) + 1).zfill(17)
