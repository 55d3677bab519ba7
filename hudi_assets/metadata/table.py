"""`MetadataTable`: a data table's metadata table (`.hoodie/metadata`), read-only, on table versions
6, 8 and 9, read as Hudi's `HoodieBackedTableMetadata` reads it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from hudi_assets.config_options import MAX_EXPECTED_CLOCK_SKEW_MS
from hudi_assets.exceptions import CorruptFileError, MetadataTableNotFoundError
from hudi_assets.java_collections import java_hashmap_order, java_hashmap_orders
from hudi_assets.metadata.file_group import (
    BlockFilter,
    MetadataFileSlice,
    latest_file_slices,
    read_files_records,
)
from hudi_assets.metadata.instants import valid_instant_timestamps
from hudi_assets.metadata.keys import ALL_PARTITIONS_KEY, FILES, files_key
from hudi_assets.metadata.lookup import FilesPartitionLookup
from hudi_assets.metadata.records import (
    FilesRecord,
    data_partition,
)
from hudi_assets.storage import Storage
from hudi_assets.table_config import PROPERTIES_FILE, TableConfig, load_table_config
from hudi_assets.timeline.instant import COMMIT, DELTA_COMMIT, Instant
from hudi_assets.timeline.layout import load_active_timeline
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
    `clock_skew_ms`: the data table's allowed clock skew, which the metadata table's instant and
    completion times allow for (Hudi 1.x's metadata writer takes the data write config's time generator
    settings).
    """

    def __init__(self, base_path: str | Storage, storage_options: Mapping[str, str] | None = None, *,
                 clock_skew_ms: int = MAX_EXPECTED_CLOCK_SKEW_MS.default):
        self.data_storage = (base_path if isinstance(base_path, Storage)
                             else Storage(base_path, storage_options))
        self.data_config: TableConfig = load_table_config(self.data_storage)
        self.data_config.check_supported(self.data_storage.uri(PROPERTIES_FILE))
        mdt_properties = f"{METADATA_FOLDER}/{PROPERTIES_FILE}"
        if not self.data_config.has_metadata_table or not self.data_storage.exists(mdt_properties):
            raise MetadataTableNotFoundError(
                f"{self.data_storage.base_uri}: the table has no metadata table "
                f"(hoodie.table.metadata.partitions is empty or {mdt_properties} is missing)")
        if FILES not in self.data_config.metadata_partitions:
            raise MetadataTableNotFoundError(
                f"{self.data_storage.uri(PROPERTIES_FILE)}: the metadata table's files partition is not "
                "initialized (not in hoodie.table.metadata.partitions)")
        self.storage = Storage(f"{self.data_storage.base_uri}/{METADATA_FOLDER}", self.data_storage.options)
        self.config: TableConfig = load_table_config(self.storage)
        self.config.check_supported(self.storage.uri(PROPERTIES_FILE))
        self.data_timeline: ActiveTimeline = load_active_timeline(self.data_storage, self.data_config)
        self.timeline: ActiveTimeline = load_active_timeline(self.storage, self.config)
        self.timeline.clock_skew_ms = clock_skew_ms

    @property
    def clock_skew_ms(self) -> int:
        return self.timeline.clock_skew_ms

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
        return latest_file_slices(partition, self.storage.list(partition), self.block_filter.is_committed,
                                  self.timeline.completion_times)

    @cached_property
    def files_listing(self) -> FilesListing:
        """Every data partition and its files, as the `files` partition lists them."""
        records: dict[str, FilesRecord] = {}
        for file_slice in self.file_slices(FILES):
            records.update(read_files_records(self.storage, file_slice, self.block_filter))
        listing = {}
        for name in sorted(self._all_partitions_of(records).listed()):
            record = records.get(name)
            listing[data_partition(name)] = dict(sorted(record.listed().items())) if record else {}
        return FilesListing(listing)

    @cached_property
    def _files_lookup(self) -> FilesPartitionLookup:
        return FilesPartitionLookup(self.storage, self.file_slices(FILES), self.block_filter)

    @cached_property
    def _all_partitions(self) -> FilesRecord:
        """The `__all_partitions__` record, which the files partition always holds (written when it is
        initialized): without it, the partition cannot be read, and a lookup must not take every
        partition for empty. Looked up once (the snapshot does not change)."""
        return self._all_partitions_of(self._files_lookup.records([ALL_PARTITIONS_KEY]))

    def _all_partitions_of(self, records: Mapping[str, FilesRecord]) -> FilesRecord:
        """The `__all_partitions__` record among `records` read from the files partition."""
        record = records.get(ALL_PARTITIONS_KEY)
        if record is None:
            raise CorruptFileError(self.storage.uri(FILES),
                                   f"the files partition has no {ALL_PARTITIONS_KEY} record")
        return record

    def open_files_partition(self) -> None:
        """Read the `files` partition's latest file slices now (base files whole, valid log blocks)
        and check it is readable: workers forked after this share them instead of each reading them
        again."""
        self._all_partitions  # noqa: B018 (a cached property, read for its effect)

    def _files_records(self, keys: Iterable[str]) -> dict[str, FilesRecord]:
        """The records of `keys` that exist, from a files partition that can be read."""
        self.open_files_partition()
        return self._files_lookup.records(keys)

    def partition_paths(self) -> list[str]:
        """Every data partition (Hudi's `fetchAllPartitionPaths`): the `__all_partitions__` record
        alone, in the order of the HashMap Hudi reads it into."""
        return [data_partition(name) for name in java_hashmap_order(self._all_partitions.listed())]

    def files_in_partitions(self, partitions: Iterable[str]) -> dict[str, dict[str, int]]:
        """Data partition -> file name -> size for `partitions` only (Hudi's
        `fetchAllFilesInPartitionPaths`), each partition's files in `listed_in_partitions`' order."""
        partitions = list(dict.fromkeys(partitions))
        return {partition: {name: sizes[name] for name in names}
                for partition, (names, sizes) in zip(partitions, self.listed_in_partitions(partitions),
                                                     strict=True)}

    def listed_in_partitions(self, partitions: Sequence[str]) -> list[tuple[list[str], dict[str, int]]]:
        """Each partition's file names and their sizes (by name): one keyed lookup of their records; a
        partition without a record has no files. Names come in the order of the HashMap Hudi reads the
        record into: the view builds its file groups in that order, which decides the cleaner's order
        of file ids that share a bucket of its HashSet."""
        keys = [files_key(partition) for partition in partitions]
        records = self._files_records(keys)
        sizes = [records[key].listed() if key in records else {} for key in keys]
        return list(zip(java_hashmap_orders(sizes), sizes, strict=True))

    def latest_compaction(self) -> Instant | None:
        """The last completed compaction of the metadata table (a completed `commit`)."""
        return self.timeline.filter_completed().filter_actions({COMMIT}).last()

    def deltacommits_since(self, instant: Instant | None) -> list[Instant]:
        """Completed metadata deltacommits after `instant` (all when None): by completion time where
        the layout records it (layout 2, where a deltacommit requested before a compaction can
        complete after it), else by requested time."""
        completed = self.timeline.filter_completed().filter_actions({DELTA_COMMIT})
        if instant is None:
            return list(completed)
        finished = self.timeline.completion_times
        after = finished.get(instant.timestamp, instant.timestamp)
        return [i for i in completed if finished.get(i.timestamp, i.timestamp) > after]


def listing_metadata_table(storage: Storage, config: TableConfig, enabled: bool) -> MetadataTable | None:
    """The metadata table a file-system view lists through, as Hudi's `HoodieTableMetadata.create`
    picks it: with `hoodie.metadata.enable` when the table's files partition is built
    (`isMetadataTableAvailable`); None: list storage (`FileSystemBackedTableMetadata`). A metadata table
    the table says it has but that cannot be read is an error, never a silent fallback to listing."""
    if not enabled or FILES not in config.metadata_partitions:
        return None
    return MetadataTable(storage)
