"""Archive settings (HoodieArchivalConfig and the clean/compaction keys the archiver reads) and the
min/max actually used, which Hudi derives from the cleaner's earliest commit to retain
(`ArchivalUtils.getMinAndMaxInstantsToKeep`, HUDI-6370; table-services.md section 5.1).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from hudi_assets.config import WriteConfig
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.timeline.instant import Instant
from hudi_assets.timeline.timeline import Timeline

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
CLEANER_POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_BY_HOURS, KEEP_LATEST_FILE_VERSIONS)
COMPACTION_TRIGGERS = ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED", "NUM_AND_TIME",
                       "NUM_OR_TIME")

MIN_COMMITS = "hoodie.keep.min.commits"
MAX_COMMITS = "hoodie.keep.max.commits"
_COMMITS_RETAINED = ("hoodie.cleaner.commits.retained", ("hoodie.clean.commits.retained",))
_HOURS_RETAINED = ("hoodie.cleaner.hours.retained", ("hoodie.clean.hours.retained",))
_VERSIONS_RETAINED = ("hoodie.cleaner.fileversions.retained", ("hoodie.clean.fileversions.retained",))
_POLICY = ("hoodie.cleaner.policy", ("hoodie.clean.policy",))


@dataclass(frozen=True)
class ArchiveConfig:
    """Every setting the archiver reads, with Apache Hudi 0.15's defaults."""

    min_commits: int = 20
    max_commits: int = 30
    archival_batch: int = 10
    archive_beyond_savepoint: bool = False
    merge_enable: bool = False
    merge_small_file_limit_bytes: int = 20 * 1024 * 1024
    merge_files_batch_size: int = 10
    max_delta_commits: int = 5
    compaction_trigger: str = "NUM_COMMITS"
    fail_on_timeline_archiving: bool = True
    cleaner_policy: str = KEEP_LATEST_COMMITS
    commits_retained: int = 10
    hours_retained: int = 24

    @classmethod
    def from_write_config(cls, config: WriteConfig) -> ArchiveConfig:
        """Read and validate the settings (HoodieWriteConfig.validate for the keep.* pair)."""
        policy = _cleaner_policy(config)
        archive = cls(
            min_commits=config.get_int(MIN_COMMITS, 20),
            max_commits=config.get_int(MAX_COMMITS, 30),
            archival_batch=config.get_int("hoodie.commits.archival.batch", 10, minimum=1),
            archive_beyond_savepoint=config.get_bool("hoodie.archive.beyond.savepoint", False),
            merge_enable=config.get_bool("hoodie.archive.merge.enable", False),
            merge_small_file_limit_bytes=config.get_int("hoodie.archive.merge.small.file.limit.bytes",
                                                        20 * 1024 * 1024, minimum=0),
            merge_files_batch_size=config.get_int("hoodie.archive.merge.files.batch.size", 10, minimum=1),
            max_delta_commits=config.get_int("hoodie.compact.inline.max.delta.commits", 5),
            compaction_trigger=config.get_enum("hoodie.compact.inline.trigger.strategy", "NUM_COMMITS",
                                               COMPACTION_TRIGGERS),
            fail_on_timeline_archiving=config.get_bool("hoodie.fail.on.timeline.archiving", True),
            cleaner_policy=policy,
            commits_retained=config.get_int(_COMMITS_RETAINED[0], 10, _COMMITS_RETAINED[1]),
            hours_retained=config.get_int(_HOURS_RETAINED[0], 24, _HOURS_RETAINED[1]),
        )
        if archive.cleaner_policy == KEEP_LATEST_COMMITS and archive.max_commits <= archive.min_commits:
            raise InvalidConfigError(
                f"Increase {MAX_COMMITS}={archive.max_commits} to be greater than "
                f"{MIN_COMMITS}={archive.min_commits}.")
        return archive


def _cleaner_policy(config: WriteConfig) -> str:
    """hoodie.cleaner.policy, or inferred: exactly one retained-key set explicitly names the policy."""
    if config.is_set(_POLICY[0], _POLICY[1]):
        return config.get_enum(_POLICY[0], KEEP_LATEST_COMMITS, CLEANER_POLICIES, _POLICY[1])
    explicit = [policy for policy, (key, alts) in ((KEEP_LATEST_COMMITS, _COMMITS_RETAINED),
                                                   (KEEP_LATEST_BY_HOURS, _HOURS_RETAINED),
                                                   (KEEP_LATEST_FILE_VERSIONS, _VERSIONS_RETAINED))
                if config.is_set(key, alts)]
    return explicit[0] if len(explicit) == 1 else KEEP_LATEST_COMMITS


# --------------------------------------------------------------------------------------- min / max
@dataclass(frozen=True)
class KeepRange:
    """The min/max instants to keep that the archiver uses, and why they differ from the configured ones."""

    min_commits: int
    max_commits: int
    configured_min: int
    configured_max: int
    earliest_commit_to_retain: str | None
    reason: str

    @property
    def adjusted(self) -> bool:
        return (self.min_commits, self.max_commits) != (self.configured_min, self.configured_max)


def parse_instant_time(ts: str) -> datetime | None:
    """Hudi's `parseDateFromInstantTime` (local time), None where Java throws ParseException.

    14 digits get `999` millis appended, longer than 17 are cut to 17 (metadata-table suffixes);
    anything else must be `yyyyMMddHHmmssSSS` with valid fields (so `00000008` or `1015` fail).
    """
    if len(ts) == 14:
        ts += "999"
    elif len(ts) > 17:
        ts = ts[:17]
    if len(ts) != 17 or not ts.isdigit():
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


def format_instant_time(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"


def _minus_hours_local(moment: datetime, hours: int) -> datetime:
    """`ZonedDateTime(latest, zone).minusHours(h)` formatted in the JVM zone: exact instant arithmetic."""
    epoch = time.mktime(moment.timetuple()) + moment.microsecond / 1e6 - hours * 3600
    return datetime.fromtimestamp(epoch).replace(microsecond=moment.microsecond)


def earliest_commit_to_retain(commits: Timeline, policy: str, commits_retained: int, hours_retained: int,
                              latest: datetime) -> Instant | None:
    """CleanerUtils.getEarliestCommitToRetain on the given commits timeline (any state)."""
    completed = commits.filter_completed().instants
    n = len(completed)
    if policy == KEEP_LATEST_COMMITS and n > commits_retained:
        if commits_retained <= 0:
            return None  # nthInstant(n) is out of range
        candidate = completed[n - commits_retained]
        pending = commits.filter_pending().first()
        if pending is None or candidate.sort_key <= pending.sort_key:
            return candidate
        before = [i for i in completed if i.timestamp < pending.timestamp]
        return before[-1] if before else None
    if policy == KEEP_LATEST_BY_HOURS:
        cutoff = format_instant_time(_minus_hours_local(latest, hours_retained))
        return next((i for i in completed if i.timestamp >= cutoff), None)
    return None


def keep_range(config: ArchiveConfig, commits_timeline: Timeline, table_commits: Timeline) -> KeepRange:
    """min/max to keep: `commits_timeline` is COMMITS(all), `table_commits` TABLE-COMMITS (section 5.1)."""
    cfg_min, cfg_max = config.min_commits, config.max_commits
    latest = table_commits.last()
    if latest is None:
        now = datetime.now()
    else:
        parsed = parse_instant_time(latest.timestamp)
        if parsed is None:
            return KeepRange(cfg_min, cfg_max, cfg_min, cfg_max, None,
                             f"latest commit time {latest.timestamp} does not parse as a date: "
                             "no cleaner-derived adjustment")
        now = parsed
    ectr = earliest_commit_to_retain(commits_timeline, config.cleaner_policy, config.commits_retained,
                                     config.hours_retained, now)
    if ectr is None:
        return KeepRange(cfg_min, cfg_max, cfg_min, cfg_max, None,
                         f"cleaner ({config.cleaner_policy}) has no earliest commit to retain: "
                         "configured values")
    need = sum(1 for i in table_commits if i.timestamp > ectr.timestamp) + 2
    if cfg_min < need:
        return KeepRange(need, need + cfg_max - cfg_min, cfg_min, cfg_max, ectr.timestamp,
                         f"{MIN_COMMITS}={cfg_min} is more aggressive than the cleaner "
                         f"({config.cleaner_policy}, "
                         f"earliest commit to retain {ectr.timestamp}): adjusted to min={need}, "
                         f"max={need + cfg_max - cfg_min}")
    return KeepRange(cfg_min, cfg_max, cfg_min, cfg_max, ectr.timestamp,
                     f"cleaner's earliest commit to retain {ectr.timestamp} needs min {need}: "
                     "configured values")
