"""The metadata table a Spark 0.14/0.15 writer keeps for a demo table with `files`, `column_stats` and
`bloom_filters` enabled (`hoodie.metadata.index.column.stats.enable`, `...bloom.filter.enable`).

The writer initializes the metadata table when the table is first written (from the empty table:
instants `00000000000000010`, `...011`, `...012`), runs the metadata table's compaction before each
data write when it is due, and records each data commit as a metadata deltacommit with the same
instant time before the data commit completes: the files written per partition, the column ranges
of every indexed column of every file (all schema fields, meta fields included, as
`hoodie.metadata.index.column.stats.column.list` is empty), and the bloom filter of every base file.

At table version 9 the metadata table is Hudi 1.1's (`metadata.initializer`, the 1.x path of
`MetadataTableWriter.commit`): initialized at `00000000000000000`, `...001`, `...002`, a new log file
per file group and deltacommit, column ranges with their `valueType`. Hudi-assets does not compact
1.x metadata tables yet, so a version-9 demo table keeps its metadata table under the compaction
trigger (`max_commits_without_compaction`). Completion times follow the demo's own clock.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hudi_assets.demo.formats import META_FIELDS, TableSchema
from hudi_assets.java_collections import in_java_hashmap_order
from hudi_assets.metadata.column_stats import (
    columns_to_index,
    footer_bloom_filter,
    parquet_column_ranges,
    read_parquet_footer,
    record_column_ranges,
)
from hudi_assets.metadata.compaction import DEFAULT_MAX_DELTA_COMMITS, compact, compaction_due
from hudi_assets.metadata.initializer import initialize_from_filesystem
from hudi_assets.metadata.keys import BLOOM_FILTERS, COLUMN_STATS
from hudi_assets.metadata.payloads import (
    ColumnRange,
    MetadataRecord,
    bloom_filter_record,
    column_stats_record,
    partition_files_record,
    partition_list_record,
    primitive_value_type,
)
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.metadata.writer import MetadataTableWriter
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.commit_metadata import WriteStat

_INDEXES = (COLUMN_STATS, BLOOM_FILTERS)


def max_commits_without_compaction() -> int:
    """The most data commits (and one failed write) a demo table's metadata table takes before its
    compaction is due: the writer checks before each write, after the `files` and index partitions'
    initial deltacommits."""
    return DEFAULT_MAX_DELTA_COMMITS - 1 - (1 + len(_INDEXES))


class DemoMetadataWriter:
    """The metadata-table side of one demo table's writer (`hudi_1x`: table version 9)."""

    def __init__(self, storage: Storage, schema: TableSchema, seed: int, hudi_1x: bool = False):
        self.storage = storage
        self.hudi_1x = hudi_1x
        # hoodie.metadata.compact.max.delta.commits, as the writer's settings give it
        self.max_delta_commits = DEFAULT_MAX_DELTA_COMMITS
        self.columns = {name: "string" for name in META_FIELDS} | dict(schema.fields)
        self.indexed = columns_to_index([], list(self.columns))
        # Its own random stream: the data table's names stay those of a table without one.
        self.rng = random.Random(f"{seed}/metadata")

    def initialize(self, completion_times: Iterable[str] | None = None) -> None:
        """`initializeFromFilesystem` on the empty table: every partition, no index record yet;
        `completion_times`: of its deltacommits, in order (version 9; None: the clock's)."""
        times = iter(completion_times) if completion_times is not None else None
        initialize_from_filesystem(HoodieTable(self.storage), dict.fromkeys(_INDEXES, ()),
                                   completed_at=None if times is None else lambda _: next(times))

    def run_table_services(self) -> None:
        """`performTableServices` before a data write: the metadata compaction, when due."""
        metadata = MetadataTable(self.storage)
        instant_time = compaction_due(metadata, self.max_delta_commits)
        if instant_time is None:
            return
        stage = self.rng.randint(100, 999)
        attempt = self.rng.randint(1000, 9999)
        compact(metadata, instant_time, lambda task: f"{task}-{stage}-{attempt + task}")

    def log_file_ranges(self, rows: Iterable[Mapping[str, Any]]) -> list[ColumnRange]:
        """What an append handle collects over the records it wrote into a log file."""
        return record_column_ranges(rows, {c: self.columns[c] for c in self.indexed})

    def commit(self, instant_time: str, stats: Mapping[str, list[WriteStat]],
               log_ranges: Mapping[str, list[ColumnRange]], completion_time: str | None = None) -> None:
        """Record a data commit (partition -> its write stats) as metadata deltacommit `instant_time`
        (completing at `completion_time`, version 9; None: the clock's); `log_ranges`: the ranges the
        commit's appends collected, by log file path."""
        records: list[MetadataRecord] = [partition_list_record(list(stats))]
        for partition, partition_stats in stats.items():
            added = {s.path.rsplit("/", 1)[-1]: s.file_size for s in partition_stats}
            records.append(partition_files_record(partition, added))
            for stat in partition_stats:
                records.extend(self._index_records(instant_time, partition, stat, log_ranges))
        completed_at = None if completion_time is None else lambda _: completion_time
        writer = MetadataTableWriter(HoodieTable(self.storage), completed_at=completed_at)
        writer.commit(instant_time, records)

    def _index_records(self, instant_time: str, partition: str, stat: WriteStat,
                       log_ranges: Mapping[str, list[ColumnRange]]) -> list[MetadataRecord]:
        file_name = stat.path.rsplit("/", 1)[-1]
        if file_name.startswith("."):  # a log file
            return [self._column_stats(partition, file_name, r) for r in log_ranges[stat.path]]
        footer = read_parquet_footer(self.storage.read(stat.path), self.storage.uri(stat.path))
        bloom = footer_bloom_filter(footer, self.storage.uri(stat.path))
        ranges = parquet_column_ranges(footer, self.indexed)
        return [*(self._column_stats(partition, file_name, r) for r in ranges),
                bloom_filter_record(partition, file_name, instant_time, bloom.type_code, bloom.payload)]


    def _column_stats(self, partition: str, file_name: str, column_range: ColumnRange) -> MetadataRecord:
        value_type = primitive_value_type(self.columns[column_range.column]) if self.hudi_1x else None
        return column_stats_record(partition, file_name, column_range, value_type=value_type)


def records_stats(path: str, ranges: Sequence[ColumnRange]) -> dict[str, Any]:
    """A delta write stat's `recordsStats` (Jackson's view of `Option<Map<column,
    HoodieColumnRangeMetadata>>`): the ranges by column, in the Java HashMap's order."""
    by_column = {r.column: {
        "filePath": path, "columnName": r.column,
        "minValue": r.min_value[1]["value"] if r.min_value else None,
        "maxValue": r.max_value[1]["value"] if r.max_value else None,
        "nullCount": r.null_count, "valueCount": r.value_count,
        "totalSize": r.total_size, "totalUncompressedSize": r.total_uncompressed_size,
    } for r in ranges}
    return {"val": in_java_hashmap_order(by_column)}
