"""Archive settings (HoodieArchivalConfig and the clean/compaction keys the archiver reads) and the
min/max actually used, which Hudi derives from the cleaner's earliest commit to retain
(`ArchivalUtils.getMinAndMaxInstantsToKeep`, HUDI-6370; table-services.md section 5.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from hudi_assets.clean.config import CleanConfig
from hudi_assets.clean.planner import earliest_commit_to_retain
from hudi_assets.config import WriteConfig
from hudi_assets.timeline.instant_time import parse_instant_time
from hudi_assets.timeline.timeline import Timeline

COMPACTION_TRIGGERS = ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED", "NUM_AND_TIME",
                       "NUM_OR_TIME")

MIN_COMMITS = "hoodie.keep.min.commits"
MAX_COMMITS = "hoodie.keep.max.commits"



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
    cleaner: CleanConfig = field(default_factory=CleanConfig)

    @classmethod
    def from_write_config(cls, config: WriteConfig) -> ArchiveConfig:
        """Read and validate the settings, with the cleaner's (which validate the keep.* pair too)."""
        return cls(
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
            cleaner=CleanConfig.from_write_config(config),
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
                         f"{MIN_COMMITS}={cfg_min} is more aggressive than the cleaner "
                         f"({config.cleaner.policy}, "
                         f"earliest commit to retain {ectr.timestamp}): adjusted to min={need}, "
                         f"max={need + cfg_max - cfg_min}")
    return KeepRange(cfg_min, cfg_max, cfg_min, cfg_max, ectr.timestamp,
                     f"cleaner's earliest commit to retain {ectr.timestamp} needs min {need}: "
                     "configured values")
