"""The guards of an orphan-file run: how old a file must be, and how many orphans a run may take.

`min_age` keeps every file younger than it, whatever the timeline says: a writer's files exist before
its commit lists them. It may not be shorter than the writers' heartbeat expiry (a live writer's
files would look dead) nor, under KEEP_LATEST_BY_HOURS, than the hours the cleaner retains.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from hudi_assets import config_options as opt
from hudi_assets.config import WriteConfig, duration_seconds
from hudi_assets.config_options import CleaningPolicy
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.heartbeat import HeartbeatConfig

DEFAULT_MIN_AGE = timedelta(days=7)
DEFAULT_MAX_ORPHANS = 100_000


def parse_duration(text: str, what: str = "duration") -> timedelta:
    """`36h`, `7d`, `90m`, `2w`, `30s` -> timedelta; anything else is refused naming `what`."""
    seconds = duration_seconds(text)
    if seconds is None:
        raise InvalidConfigError(f"{what} {text!r}: expected a number and a unit (s, m, h, d, w), e.g. 7d")
    return timedelta(seconds=seconds)


@dataclass(frozen=True, slots=True)
class OrphanConfig:
    min_age: timedelta = DEFAULT_MIN_AGE
    max_orphans: int = DEFAULT_MAX_ORPHANS

    @classmethod
    def from_write_config(cls, config: WriteConfig, min_age: timedelta | None = None,
                          max_orphans: int | None = None) -> OrphanConfig:
        """The guards, refused (exit 2) below the heartbeat expiry or the cleaner's retained hours."""
        min_age = DEFAULT_MIN_AGE if min_age is None else min_age
        max_orphans = DEFAULT_MAX_ORPHANS if max_orphans is None else max_orphans
        if max_orphans < 0:
            raise InvalidConfigError(f"max orphans {max_orphans}: must not be negative")
        heartbeat = timedelta(milliseconds=HeartbeatConfig.from_write_config(config).max_allowed_ms)
        if min_age < heartbeat:
            raise InvalidConfigError(
                f"min age {min_age} is shorter than the writers' heartbeat expiry {heartbeat} "
                f"({config.describe(opt.HEARTBEAT_INTERVAL_MS)} x "
                f"{config.describe(opt.HEARTBEAT_TOLERABLE_MISSES)}): a live writer's files would be taken")
        if config.get(opt.CLEANER_POLICY) == CleaningPolicy.KEEP_LATEST_BY_HOURS:
            retained = timedelta(hours=config.get(opt.CLEANER_HOURS_RETAINED))
            if min_age < retained:
                raise InvalidConfigError(
                    f"min age {min_age} is shorter than {config.describe(opt.CLEANER_HOURS_RETAINED)} "
                    f"({retained}) under KEEP_LATEST_BY_HOURS")
        return cls(min_age, max_orphans)
