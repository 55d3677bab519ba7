"""`MetadataTable`: a data table's metadata table (`.hoodie/metadata`), read-only, on table versions
6, 8 and 9, read as Hudi's `HoodieBackedTableMetadata` reads it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from hudi_assets.exceptions import CorruptFileError, MetadataTableNotFoundError
from hudi_assets.metadata.file_group import (
    BlockFilter,
    MetadataFileSlice,
    latest_file_slices,
    read_files_records,
)
from hudi_assets.metadata.instants import valid_instant_timestamps
from hudi_assets.metadata.records import ALL_PARTITIONS_KEY, FILES_PARTITION, FilesRecord, data_partition
from hudi_assets.storage import Storage
from hudi_assets.table_config import PROPERTIES_FILE, TableConfig, load_table_config
from hudi_assets.timeline.instant import COMMIT, DELTA_COMMIT, Instant
from hudi_assets.timeline.layout2 import LayoutTwoTimeline, load_active_timeline
from hudi_assets.timeline.timeline import ActiveTimeline

METADATA_FOLDER = ".hoodie/metadata"


@dataclass(frozen=True)
class FilesListing:
    """What the `files` partition says: data partition ("" when non-partitioned) -> file -> size."""

    partitions: dict[str, dict[str, int]]

    @property
    def total_files(self) -> int:
        return sum(len(files) for files in self.partitions.values())


class MetadataTable:
    """The metadata table of the data table at `base_path`; refuses a table without one.

    Both timelines are read once, when the object is made, so every answer comes from one snapshot.
    """

    def __init__(self, base_path: str | Storage, storage_options: Mapping[str, str] | None = None):
        self.data_storage = (base_path if isinstance(base_path, Storage)
                             else Storage(base_path, storage_options))
        self.data_config: TableConfig = load_table_config(self.data_storage)
        self.data_config.check_readable(self.data_storage.uri(PROPERTIES_FILE))
        mdt_properties = f"{METADATA_FOLDER}/{PROPERTIES_FILE}"
        if not self.data_config.has_metadata_table or not self.data_storage.exists(mdt_properties):
            raise MetadataTableNotFoundError(
                f"{self.data_storage.base_uri}: the table has no metadata table "
                f"(hoodie.table.metadata.partitions is empty or {mdt_properties} is missing)")
        if FILES_PARTITION not in self.data_config.metadata_partitions:
            raise MetadataTableNotFoundError(
                f"{self.data_storage.uri(PROPERTIES_FILE)}: the metadata table's files partition is not "
                "initialized (not in hoodie.table.metadata.partitions)")
        self.storage = Storage(f"{self.data_storage.base_uri}/{METADATA_FOLDER}", self.data_storage.options)
        self.config: TableConfig = load_table_config(self.storage)
        self.config.check_readable(self.storage.uri(PROPERTIES_FILE))
        self.data_timeline: ActiveTimeline = load_active_timeline(self.data_storage, self.data_config)
        self.timeline: ActiveTimeline = load_active_timeline(self.storage, self.config)

    @property
    def partitions(self) -> list[str]:
        """The metadata partitions the data table lists as built (`hoodie.table.metadata.partitions`)."""
        return sorted(self.data_config.metadata_partitions)

    @cached_property
    def block_filter(self) -> BlockFilter:
        valid = valid_instant_timestamps(self.data_timeline, self.timeline)
        return BlockFilter.of(self.timeline.commits_timeline(), valid)

    def file_slices(self, partition: str) -> list[MetadataFileSlice]:
        """The latest merged file slice of every file group of one metadata partition."""
        completion = self.timeline.completion_times if isinstance(self.timeline, LayoutTwoTimeline) else None
        return latest_file_slices(partition, self.storage.list(partition), self.block_filter.is_committed,
                                  completion)

    @cached_property
    def files_listing(self) -> FilesListing:
        """Every data partition and its files, as the `files` partition lists them."""
        records: dict[str, FilesRecord] = {}
        for file_slice in self.file_slices(FILES_PARTITION):
            records.update(read_files_records(self.storage, file_slice, self.block_filter))
        all_partitions = records.get(ALL_PARTITIONS_KEY)
        if all_partitions is None:
            raise CorruptFileError(self.storage.uri(FILES_PARTITION),
                                   f"the files partition has no {ALL_PARTITIONS_KEY} record")
        listing = {}
        for name in sorted(all_partitions.listed()):
            record = records.get(name)
            listing[data_partition(name)] = dict(sorted(record.listed().items())) if record else {}
        return FilesListing(listing)

    def latest_compaction(self) -> Instant | None:
        """The last completed compaction of the metadata table (a completed `commit`)."""
        return self.timeline.filter_completed().filter_actions({COMMIT}).last()

    def deltacommits_since(self, instant: Instant | None) -> list[Instant]:
        """Completed metadata deltacommits after `instant` (all when None): by completion time on
        timeline layout 2, where a deltacommit requested before a compaction can complete after it."""
        completed = self.timeline.filter_completed().filter_actions({DELTA_COMMIT})
        if instant is None:
            return list(completed)
        finished = (self.timeline.completion_times if isinstance(self.timeline, LayoutTwoTimeline)
                    else {i.timestamp: i.timestamp for i in completed})
        after = finished.get(instant.timestamp, instant.timestamp)
        return [i for i in completed if finished.get(i.timestamp, i.timestamp) > after]
