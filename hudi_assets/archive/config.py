"""Archive settings (HoodieArchivalConfig and the clean/compaction keys the archiver reads) and the
min/max actually used, which Hudi derives from the cleaner's earliest commit to retain
(`ArchivalUtils.getMinAndMaxInstantsToKeep`, HUDI-6370; table-services.md section 5.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from hudi_assets import config_options as opt
from hudi_assets.clean.config import CleanConfig
from hudi_assets.config import WriteConfig
from hudi_assets.retention import earliest_commit_to_retain
from hudi_assets.timeline.instant_time import parse_instant_time
from hudi_assets.timeline.timeline import Timeline


@dataclass(frozen=True)
class ArchiveConfig:
    """Every setting the archiver reads, with Apache Hudi 0.15's defaults.

    Build it with `from_write_config`: it validates the settings and reads `cleaner` from the same
    `WriteConfig`, so the cleaner-derived keep.min/max (`keep_range`) sees the cleaner that runs.
    `cleaner` has no default on purpose: a default one would silently raise keep.min to its needs.
    """

    min_commits: int = opt.KEEP_MIN_COMMITS.default
    max_commits: int = opt.KEEP_MAX_COMMITS.default
    archival_batch: int = opt.COMMITS_ARCHIVAL_BATCH.default
    archive_beyond_savepoint: bool = opt.ARCHIVE_BEYOND_SAVEPOINT.default
    merge_enable: bool = opt.ARCHIVE_MERGE_ENABLE.default
    merge_small_file_limit_bytes: int = opt.ARCHIVE_MERGE_SMALL_FILE_LIMIT_BYTES.default
    merge_files_batch_size: int = opt.ARCHIVE_MERGE_FILES_BATCH_SIZE.default
    max_delta_commits: int = opt.INLINE_COMPACT_NUM_DELTA_COMMITS.default
    compaction_trigger: str = opt.INLINE_COMPACT_TRIGGER_STRATEGY.default
    fail_on_timeline_archiving: bool = opt.FAIL_ON_TIMELINE_ARCHIVING.default
    timeline_compaction_batch_size: int = opt.TIMELINE_COMPACTION_BATCH_SIZE.default
    cleaner: CleanConfig = field(kw_only=True)

    @classmethod
    def from_write_config(cls, config: WriteConfig) -> ArchiveConfig:
        """Validate and read the settings, the cleaner's from the same config."""
        cleaner = CleanConfig.from_write_config(config)
        return cls(
            min_commits=config.get(opt.KEEP_MIN_COMMITS),
            max_commits=config.get(opt.KEEP_MAX_COMMITS),
            archival_batch=config.get(opt.COMMITS_ARCHIVAL_BATCH),
            archive_beyond_savepoint=config.get(opt.ARCHIVE_BEYOND_SAVEPOINT),
            merge_enable=config.get(opt.ARCHIVE_MERGE_ENABLE),
            merge_small_file_limit_bytes=config.get(opt.ARCHIVE_MERGE_SMALL_FILE_LIMIT_BYTES),
            merge_files_batch_size=config.get(opt.ARCHIVE_MERGE_FILES_BATCH_SIZE),
            max_delta_commits=config.get(opt.INLINE_COMPACT_NUM_DELTA_COMMITS),
            compaction_trigger=config.get(opt.INLINE_COMPACT_TRIGGER_STRATEGY),
            fail_on_timeline_archiving=config.get(opt.FAIL_ON_TIMELINE_ARCHIVING),
            timeline_compaction_batch_size=config.get(opt.TIMELINE_COMPACTION_BATCH_SIZE),
            cleaner=cleaner,
        )


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
    ectr = earliest_commit_to_retain(commits_timeline, config.cleaner, now)
    if ectr is None:
        return KeepRange(cfg_min, cfg_max, cfg_min, cfg_max, None,
                         f"cleaner ({config.cleaner.policy}) has no earliest commit to retain: "
                         "configured values")
    need = sum(1 for i in table_commits if i.timestamp > ectr.timestamp) + 2
    if cfg_min < need:
        return KeepRange(need, need + cfg_max - cfg_min, cfg_min, cfg_max, ectr.timestamp,
                         f"{opt.KEEP_MIN_COMMITS.key}={cfg_min} is more aggressive than the cleaner "
                         f"({config.cleaner.policy}, "
                         f"earliest commit to retain {ectr.timestamp}): adjusted to min={need}, "
                         f"max={need + cfg_max - cfg_min}")
    return KeepRange(cfg_min, cfg_max, cfg_min, cfg_max, ectr.timestamp,
                     f"cleaner's earliest commit to retain {ectr.timestamp} needs min {need}: "
                     "configured values")
