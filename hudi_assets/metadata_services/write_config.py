"""The metadata table's own write settings, derived from the data table's as Hudi 0.15's
`HoodieMetadataWriteUtils.createMetadataWriteConfig` derives them (release-0.15.0).

The metadata table is cleaned by KEEP_LATEST_COMMITS with 20 commits retained
(`HoodieMetadataConfig.DEFAULT_METADATA_CLEANER_COMMITS_RETAINED`, whatever the data table says), keeps
one more commit than the data table on archiving (keep.min + 1, keep.max + 1), fences its archive by
`hoodie.metadata.compact.max.delta.commits` as its compaction trigger, takes the data table's
failed-writes policy and never lists through a metadata table of its own; our clean's delete batch
is the data table's.
"""

from __future__ import annotations

from hudi_assets import config_options as opt
from hudi_assets.config import WriteConfig
from hudi_assets.metadata.table import METADATA_FOLDER, MetadataTable
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant_time import clock_skew_conf

METADATA_CLEANER_COMMITS_RETAINED = 20


def metadata_write_conf(data: WriteConfig) -> dict[str, str]:
    """The settings the metadata table's services run with, from the data table's merged settings."""
    return {
        opt.CLEANER_POLICY.key: "KEEP_LATEST_COMMITS",
        opt.CLEANER_COMMITS_RETAINED.key: str(METADATA_CLEANER_COMMITS_RETAINED),
        opt.FAILED_WRITES_CLEANER_POLICY.key: data.get(opt.FAILED_WRITES_CLEANER_POLICY),
        opt.KEEP_MIN_COMMITS.key: str(data.get(opt.KEEP_MIN_COMMITS) + 1),
        opt.KEEP_MAX_COMMITS.key: str(data.get(opt.KEEP_MAX_COMMITS) + 1),
        opt.INLINE_COMPACT_NUM_DELTA_COMMITS.key: str(data.get(opt.METADATA_COMPACT_MAX_DELTA_COMMITS)),
        opt.METADATA_ENABLE.key: "false",
        opt.CLEAN_DELETE_BATCH.key: str(data.get(opt.CLEAN_DELETE_BATCH)),  # how our clean deletes
        **clock_skew_conf(data.get(opt.MAX_EXPECTED_CLOCK_SKEW_MS)),
    }


def metadata_table(data_table: HoodieTable) -> HoodieTable:
    """The data table's metadata table as a table of its own (base path `.hoodie/metadata`), with the
    settings its services run with."""
    return HoodieTable(f"{data_table.base_path}/{METADATA_FOLDER}", data_table.storage.options,
                       hoodie_conf=metadata_write_conf(data_table.write_config))


def read_metadata(data_table: HoodieTable) -> MetadataTable:
    """The data table's metadata table read now, its instant and completion times allowing for the
    data table's clock skew."""
    return MetadataTable(data_table.storage, clock_skew_ms=data_table.clock_skew_ms)
