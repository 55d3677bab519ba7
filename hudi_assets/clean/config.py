"""`CleanConfig`: the cleaning keys of Hudi's `HoodieCleanConfig`, with Hudi's names, defaults and
inference, and the 1.x `hoodie.clean.*` names accepted as alternatives.

Values come from a `WriteConfig` (table's `hoodie.properties` < `--props` < `--hoodie-conf`).
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_assets.config import WriteConfig
from hudi_assets.exceptions import InvalidConfigError


class CleaningPolicy:
    KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
    KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
    KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
    ALL = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)


POLICY = "hoodie.cleaner.policy"
COMMITS_RETAINED = "hoodie.cleaner.commits.retained"
HOURS_RETAINED = "hoodie.cleaner.hours.retained"
FILE_VERSIONS_RETAINED = "hoodie.cleaner.fileversions.retained"
TRIGGER_STRATEGY = "hoodie.clean.trigger.strategy"
MAX_COMMITS = "hoodie.clean.max.commits"
INCREMENTAL_MODE = "hoodie.cleaner.incremental.mode"
FAILED_WRITES_POLICY = "hoodie.cleaner.policy.failed.writes"
PARALLELISM = "hoodie.cleaner.parallelism"
ALLOW_MULTIPLE = "hoodie.clean.allow.multiple"
DELETE_BOOTSTRAP_BASE_FILE = "hoodie.cleaner.delete.bootstrap.base.file"
AUTOMATIC = "hoodie.clean.automatic"
ASYNC = "hoodie.clean.async"
KEEP_MIN_COMMITS = "hoodie.keep.min.commits"
KEEP_MAX_COMMITS = "hoodie.keep.max.commits"
CONCURRENCY_MODE = "hoodie.write.concurrency.mode"

# 1.x names (Hudi keeps the 0.x names as alternatives; we accept both ways round).
ALTERNATIVES: dict[str, tuple[str, ...]] = {
    POLICY: ("hoodie.clean.policy",),
    COMMITS_RETAINED: ("hoodie.clean.commits.retained",),
    HOURS_RETAINED: ("hoodie.clean.hours.retained",),
    FILE_VERSIONS_RETAINED: ("hoodie.clean.fileversions.retained",),
    MAX_COMMITS: ("hoodie.clean.trigger.max.commits",),
    INCREMENTAL_MODE: ("hoodie.clean.incremental.enabled",),
    FAILED_WRITES_POLICY: ("hoodie.clean.failed.writes.policy",),
    PARALLELISM: ("hoodie.clean.parallelism",),
    ALLOW_MULTIPLE: ("hoodie.clean.multiple.enabled",),
    DELETE_BOOTSTRAP_BASE_FILE: ("hoodie.clean.delete.bootstrap.base.file",),
    KEEP_MIN_COMMITS: ("hoodie.archive.min.commits",),
    KEEP_MAX_COMMITS: ("hoodie.archive.max.commits",),
}


def _alt(key: str) -> tuple[str, ...]:
    return ALTERNATIVES.get(key, ())


@dataclass(frozen=True)
class CleanConfig:
    policy: str = CleaningPolicy.KEEP_LATEST_COMMITS
    commits_retained: int = 10
    hours_retained: int = 24
    file_versions_retained: int = 3
    trigger_strategy: str = "NUM_COMMITS"
    max_commits: int = 1
    incremental: bool = True
    failed_writes_policy: str = "EAGER"
    parallelism: int = 200
    allow_multiple: bool = False  # 0.15 default (HUDI-7616); 0.14 had true
    delete_bootstrap_base_file: bool = False
    automatic: bool = True
    run_async: bool = False

    @classmethod
    def from_write_config(cls, config: WriteConfig) -> CleanConfig:
        """Read and validate every cleaning key; one `InvalidConfigError` for the first bad value."""
        policy = config.get_enum(POLICY, "", CleaningPolicy.ALL, _alt(POLICY)) or infer_policy(config)
        commits = config.get_int(COMMITS_RETAINED, 10, _alt(COMMITS_RETAINED))
        hours = config.get_int(HOURS_RETAINED, 24, _alt(HOURS_RETAINED))
        versions = config.get_int(FILE_VERSIONS_RETAINED, 3, _alt(FILE_VERSIONS_RETAINED))
        trigger = config.get_enum(TRIGGER_STRATEGY, "NUM_COMMITS", ("NUM_COMMITS",))
        concurrency = config.get_str(CONCURRENCY_MODE, "SINGLE_WRITER").strip().upper()
        occ = concurrency == "OPTIMISTIC_CONCURRENCY_CONTROL"
        failed = config.get_enum(FAILED_WRITES_POLICY, "LAZY" if occ else "EAGER", ("EAGER", "LAZY", "NEVER"),
                                 _alt(FAILED_WRITES_POLICY))
        if occ and failed == "EAGER":
            name = config.find(FAILED_WRITES_POLICY, _alt(FAILED_WRITES_POLICY))
            raise InvalidConfigError(
                f"{name[0] if name else FAILED_WRITES_POLICY}=EAGER cannot be used with "
                f"{CONCURRENCY_MODE}=OPTIMISTIC_CONCURRENCY_CONTROL: use LAZY")
        result = cls(
            policy=policy,
            commits_retained=commits,
            hours_retained=hours,
            file_versions_retained=versions,
            trigger_strategy=trigger,
            max_commits=config.get_int(MAX_COMMITS, 1, _alt(MAX_COMMITS)),
            incremental=config.get_bool(INCREMENTAL_MODE, True, _alt(INCREMENTAL_MODE)),
            failed_writes_policy=failed,
            parallelism=config.get_int(PARALLELISM, 200, _alt(PARALLELISM), minimum=1),
            allow_multiple=config.get_bool(ALLOW_MULTIPLE, False, _alt(ALLOW_MULTIPLE)),
            delete_bootstrap_base_file=config.get_bool(DELETE_BOOTSTRAP_BASE_FILE, False,
                                                       _alt(DELETE_BOOTSTRAP_BASE_FILE)),
            automatic=config.get_bool(AUTOMATIC, True),
            run_async=config.get_bool(ASYNC, False),
        )
        if policy == CleaningPolicy.KEEP_LATEST_COMMITS:
            # HoodieWriteConfig.validate: the archival bounds are checked with this policy only.
            low = config.get_int(KEEP_MIN_COMMITS, 20, _alt(KEEP_MIN_COMMITS))
            high = config.get_int(KEEP_MAX_COMMITS, 30, _alt(KEEP_MAX_COMMITS))
            if high <= low:
                raise InvalidConfigError(
                    f"Increase {KEEP_MAX_COMMITS}={high} to be greater than {KEEP_MIN_COMMITS}={low}.")
        return result

    @property
    def by_commits(self) -> bool:
        return self.policy in (CleaningPolicy.KEEP_LATEST_COMMITS, CleaningPolicy.KEEP_LATEST_BY_HOURS)


def infer_policy(config: WriteConfig) -> str:
    """Hudi's inference: exactly one of the three retained keys set explicitly picks its policy."""
    commits = config.is_set(COMMITS_RETAINED, _alt(COMMITS_RETAINED))
    hours = config.is_set(HOURS_RETAINED, _alt(HOURS_RETAINED))
    versions = config.is_set(FILE_VERSIONS_RETAINED, _alt(FILE_VERSIONS_RETAINED))
    if hours and not commits and not versions:
        return CleaningPolicy.KEEP_LATEST_BY_HOURS
    if versions and not commits and not hours:
        return CleaningPolicy.KEEP_LATEST_FILE_VERSIONS
    return CleaningPolicy.KEEP_LATEST_COMMITS
