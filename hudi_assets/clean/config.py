"""`CleanConfig`: the cleaning settings of Hudi's `HoodieCleanConfig`, read through the registry in
`hudi_assets.config_options` (keys, 1.x alternatives, defaults, inference and bounds live there).
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_assets import config_options as opt
from hudi_assets.config import WriteConfig
from hudi_assets.config_options import CleaningPolicy

__all__ = ["CleanConfig", "CleaningPolicy"]


@dataclass(frozen=True)
class CleanConfig:
    """The cleaner's settings; build it with `from_write_config`, which validates them."""

    policy: str = opt.CLEANER_POLICY.default
    commits_retained: int = opt.CLEANER_COMMITS_RETAINED.default
    hours_retained: int = opt.CLEANER_HOURS_RETAINED.default
    file_versions_retained: int = opt.CLEANER_FILE_VERSIONS_RETAINED.default
    max_commits: int = opt.CLEAN_MAX_COMMITS.default
    incremental: bool = opt.CLEANER_INCREMENTAL_MODE.default
    failed_writes_policy: str = opt.FAILED_WRITES_CLEANER_POLICY.default
    parallelism: int = opt.CLEANER_PARALLELISM.default
    allow_multiple: bool = opt.ALLOW_MULTIPLE_CLEANS.default
    delete_bootstrap_base_file: bool = opt.CLEANER_BOOTSTRAP_BASE_FILE.default
    metadata_enabled: bool = opt.METADATA_ENABLE.default
    delete_batch: int = opt.CLEAN_DELETE_BATCH.default
    progress_interval_ms: int = opt.CLEAN_PROGRESS_INTERVAL_MS.default
    reader_window_s: int = opt.CLEANER_READER_WINDOW.default  # 0: off

    @classmethod
    def from_write_config(cls, config: WriteConfig) -> CleanConfig:
        """Validate the settings (`config_options.validate`) and read the cleaner's; one
        `InvalidConfigError` for the first bad value."""
        opt.validate(config)
        return cls(
            policy=config.get(opt.CLEANER_POLICY),
            commits_retained=config.get(opt.CLEANER_COMMITS_RETAINED),
            hours_retained=config.get(opt.CLEANER_HOURS_RETAINED),
            file_versions_retained=config.get(opt.CLEANER_FILE_VERSIONS_RETAINED),
            max_commits=config.get(opt.CLEAN_MAX_COMMITS),
            incremental=config.get(opt.CLEANER_INCREMENTAL_MODE),
            failed_writes_policy=config.get(opt.FAILED_WRITES_CLEANER_POLICY),
            parallelism=config.get(opt.CLEANER_PARALLELISM),
            allow_multiple=config.get(opt.ALLOW_MULTIPLE_CLEANS),
            delete_bootstrap_base_file=config.get(opt.CLEANER_BOOTSTRAP_BASE_FILE),
            metadata_enabled=config.get(opt.METADATA_ENABLE),
            delete_batch=config.get(opt.CLEAN_DELETE_BATCH),
            progress_interval_ms=config.get(opt.CLEAN_PROGRESS_INTERVAL_MS),
            reader_window_s=config.get(opt.CLEANER_READER_WINDOW),
        )
