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
    """Hudi's `parseDateFromInstantTime` (local time), None where Java throws ParseException.

    14 digits get `999` millis appended, longer than 17 are cut to 17 (metadata-table suffixes);
    anything else must be `yyyyMMddHHmmssSSS` with valid fields (so `00000008` or `1015` fail).
    """
    if len(ts) == 14:
        ts += "999"
    elif len(ts) > 17:
        ts = ts[:17]
    if len(ts) != 17 or not (ts.isascii() and ts.isdigit()):  # Java parses ASCII digits only
        return None
    try:
        base = datetime(int(ts[0:4]), int(ts[4:6]), 1, int(ts[8:10]), int(ts[10:12]), int(ts[12:14]),
                        int(ts[14:17]) * 1000)
    except ValueError:
        return None
    day = int(ts[6:8])
    if not 1 <= day <= 31:
        return None
    # ResolverStyle.SMART clamps a day past the month's end to its last day.
    next_month = (base.replace(day=28) + timedelta(days=4)).replace(day=1)
    return base.replace(day=min(day, (next_month - timedelta(days=1)).day))


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
