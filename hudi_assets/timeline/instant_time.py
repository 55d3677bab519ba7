"""New instant times, as Hudi's `HoodieInstantTimeGenerator` makes them, and the refusal of an
instant that lies in the future.

`yyyyMMddHHmmssSSS` of the wall clock in the table's timeline time zone (`UTC`, else the process's
local zone). Hudi 0.15 loops until the clock passes the last time it handed out; 1.x also waits out
`hoodie.time.generator.max_expected_clock_skew_ms`, the most another writer's clock may run ahead. We
step past an instant within that allowance by taking it plus one millisecond (the order waiting
gives). An instant beyond it (a clock far ahead, or a name given by hand such as `99999999999999999`)
is refused before any action but rolling back or discarding it (`refuse_future_instants`); it never
drags new times past itself, where they would sort wrongly (18 digits) or repeat.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from hudi_assets.config_options import MAX_EXPECTED_CLOCK_SKEW_MS
from hudi_assets.exceptions import HudiInputError
from hudi_assets.timeline.instant import CLEAN

if TYPE_CHECKING:
    from hudi_assets.table import HoodieTable

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


def instant_epoch(instant: str, timezone: str = "LOCAL") -> float | None:
    """Seconds since the epoch of an instant time minted in the table's timeline zone (None if not a date)."""
    moment = parse_instant_time(instant)
    if moment is None:
        return None
    return (moment.replace(tzinfo=UTC) if timezone.upper() == "UTC" else moment).timestamp()


Clock = Callable[[], datetime]  # what a table service asks for the current time


def wall_clock() -> datetime:
    """The services' default clock: the current time (aware, UTC)."""
    return datetime.now(UTC)


def now_in_zone(timezone: str = "LOCAL", now: datetime | None = None) -> datetime:
    """The current time as wall-clock time in the timeline zone (naive)."""
    moment = now or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.astimezone()  # a naive `now` is local time
    if timezone.upper() == "UTC":
        return moment.astimezone(UTC).replace(tzinfo=None)
    return moment.astimezone().replace(tzinfo=None)


def clock_horizon(timezone: str = "LOCAL", max_skew_ms: int = MAX_EXPECTED_CLOCK_SKEW_MS.default) -> str:
    """The latest instant time another writer's clock may have made by now: the wall clock (never a
    `now` given for planning) plus the allowed skew."""
    return format_instant_time(now_in_zone(timezone) + timedelta(milliseconds=max_skew_ms))


def new_instant_time(existing: Iterable[str], timezone: str = "LOCAL", now: datetime | None = None,
                     max_skew_ms: int = MAX_EXPECTED_CLOCK_SKEW_MS.default) -> str:
    """A new instant time strictly greater (as a string) than every time in `existing` up to the
    clock's horizon. A time beyond it is refused before any action (`refuse_future_instants`) but
    the rollback of that instant, whose own time is then the clock's."""
    candidate = format_instant_time(now_in_zone(timezone, now))
    horizon = clock_horizon(timezone, max_skew_ms)
    latest = max((t for t in existing if t <= horizon), default="")
    if candidate > latest:
        return candidate
    parsed = parse_instant_time(latest[:17])
    if parsed is not None and len(latest) <= 17:
        bumped = format_instant_time(parsed + timedelta(milliseconds=1))
        if bumped > latest:
            return bumped
    # A time that is not a date (or an MDT suffixed time): the next 17-digit string after it.
    return str(int(latest[:17].ljust(17, "0")) + 1).zfill(17)


def clock_skew_conf(max_skew_ms: int) -> dict[str, str]:
    """The allowed clock skew as a setting, for the metadata table opened as a table of its own: its
    times allow for the data table's skew (Hudi 1.x builds the metadata table's meta client with the
    data write config's time generator settings)."""
    return {MAX_EXPECTED_CLOCK_SKEW_MS.key: str(max_skew_ms)}


def refuse_future_instants(table: HoodieTable, action: str, allowed: str | None = None) -> None:
    """Refuse `action` while the timeline holds an instant later than the clock's horizon, other than
    `allowed` (the instant being rolled back or discarded): the instant times the action would make
    sort before it, so readers and writers would see history out of order."""
    option = MAX_EXPECTED_CLOCK_SKEW_MS
    horizon = clock_horizon(table.config.timeline_timezone, table.write_config.get(option))
    timeline = table.active_timeline
    ahead = [i for i in timeline.raw_instants if i.timestamp > horizon and i.timestamp != allowed]
    if not ahead:
        return
    instant, base, t = ahead[0], table.base_path, ahead[0].timestamp
    if instant.is_completed:
        way_out = "hudi-assets does not undo a completed instant: restore the table with Hudi"
    elif instant.action == CLEAN:
        way_out = f"discard it first: hudi-assets clean {base} --discard-pending {t}"
    else:
        way_out = f"if it is a failed write, roll it back first: hudi-assets rollback {base} {t}"
    raise HudiInputError(
        f"{table.storage.uri(timeline.state_file_path(instant))}: instant {t} lies beyond this clock "
        f"({horizon} with {table.write_config.describe(option)}): a writer's clock (or, with a LOCAL "
        "timeline time zone, its zone) runs ahead, or the instant was named by hand. hudi-assets does "
        f"not {action} while it is there; {way_out}. Nothing was changed")
