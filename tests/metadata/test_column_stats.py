"""Column ranges and bloom filters from parquet footers, checked against the column_stats records
Hudi itself wrote into the metadata tables of the real v8/v9 tables."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets import bloom
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.column_stats import (
    columns_to_index,
    footer_bloom_filter,
    parquet_column_ranges,
    read_parquet_footer,
    record_column_ranges,
)
from hudi_assets.metadata.compaction import merged_records
from hudi_assets.metadata.payloads import ColumnRange, wrap

WITH_COLUMN_STATS = [name for name in table_zips(8) if name.endswith("v8_trips_8i3u1d")] + table_zips(9)


def _logical_type(footer: pq.FileMetaData, column: str) -> str:
    row_group = footer.row_group(0)
    chunk = next(row_group.column(i) for i in range(row_group.num_columns)
                 if row_group.column(i).path_in_schema == column)
    return chunk.statistics.logical_type.type


def _unwrap(wrapped):
    return None if wrapped is None else wrapped[1]["value"]


@pytest.mark.parametrize("name", params_or_skip(WITH_COLUMN_STATS, "v8/v9 tables with a metadata table"))
def test_base_file_ranges_match_the_records_hudi_wrote(name, tmp_path):
    base = unzip_table(name, tmp_path)
    metadata = MetadataTable(str(base))
    if "column_stats" not in metadata.partitions:
        pytest.skip(f"{name} has no column_stats partition")
    on_storage = {p.name: p for p in base.rglob("*.parquet") if ".hoodie" not in p.parts}
    checked = 0
    for file_slice in metadata.file_slices("column_stats"):
        records, _ = merged_records(metadata.storage, file_slice, metadata.block_filter)
        for record in records.values():
            stats = record["ColumnStatsMetadata"]
            path = on_storage.get(stats["fileName"])
            if path is None or stats["isDeleted"]:
                continue
            footer = read_parquet_footer(path.read_bytes(), str(path))
            ranges = parquet_column_ranges(footer, [stats["columnName"]])
            if not ranges:  # dates, decimals, timestamps: not indexed yet
                assert _logical_type(footer, stats["columnName"]) not in ("NONE", "STRING")
                continue
            (found,) = ranges
            expected = (_unwrap(stats["minValue"]), _unwrap(stats["maxValue"]), stats["nullCount"],
                        stats["valueCount"], stats["totalSize"], stats["totalUncompressedSize"])
            found_values = (_unwrap(found.min_value), _unwrap(found.max_value), found.null_count,
                            found.value_count, found.total_size, found.total_uncompressed_size)
            assert found_values == expected, (path.name, stats["columnName"])
            if stats["minValue"] is not None:
                assert found.min_value[0] == stats["minValue"][0]
            checked += 1
    assert checked > 0


def _parquet(tmp_path, tables: list[pa.Table], metadata: dict[str, str] | None = None) -> bytes:
    path = tmp_path / "f.parquet"
    with pq.ParquetWriter(path, tables[0].schema) as writer:
        for table in tables:
            writer.write_table(table)
        if metadata:
            writer.add_key_value_metadata(metadata)
    return path.read_bytes()


def test_row_groups_combine_and_unindexed_columns_are_left_out(tmp_path):
    first = pa.table({"name": ["b", None, "c"], "n": pa.array([5, 7, None], pa.int64()),
                      "x": [1.0, 2.0, 3.0]})
    second = pa.table({"name": ["a", "d"], "n": pa.array([9, 1], pa.int64()), "x": [0.5, 9.0]})
    footer = read_parquet_footer(_parquet(tmp_path, [first, second]), "f.parquet")
    name, n = parquet_column_ranges(footer, ["name", "n"])
    assert (name.min_value, name.max_value, name.null_count, name.value_count) == (
        wrap("StringWrapper", "a"), wrap("StringWrapper", "d"), 1, 5)
    assert (n.min_value, n.max_value, n.null_count, n.value_count) == (
        wrap("LongWrapper", 1), wrap("LongWrapper", 9), 1, 5)
    chunks = [footer.row_group(g).column(1) for g in range(2)]
    assert n.total_size == sum(c.total_compressed_size for c in chunks)
    assert n.total_uncompressed_size == sum(c.total_uncompressed_size for c in chunks)


def test_log_records_ranges_count_nulls_apart_and_carry_no_sizes():
    rows = [{"id": "k2", "fare": 3.5, "ts": None}, {"id": "k1", "fare": None, "ts": 7}]
    ranges = record_column_ranges(rows, {"id": "string", "fare": "double", "ts": "long", "n": "int"})
    assert ranges == [
        ColumnRange("id", wrap("StringWrapper", "k1"), wrap("StringWrapper", "k2"), 0, 2, 0, 0),
        ColumnRange("fare", wrap("DoubleWrapper", 3.5), wrap("DoubleWrapper", 3.5), 1, 1, 0, 0),
        ColumnRange("ts", wrap("LongWrapper", 7), wrap("LongWrapper", 7), 1, 1, 0, 0),
        ColumnRange("n", None, None, 2, 0, 0, 0),
    ]
    with pytest.raises(ValueError, match="Avro types"):
        record_column_ranges(rows, {"id": "record"})


def test_columns_to_index_default_to_every_schema_field():
    assert columns_to_index([], ["_hoodie_commit_time", "id"]) == ["_hoodie_commit_time", "id"]
    assert columns_to_index(["id"], ["_hoodie_commit_time", "id"]) == ["id"]


def test_footer_bloom_filter_and_bad_files(tmp_path):
    serialized = bloom.serialize(["k1", "k2"], num_entries=10)
    data = _parquet(tmp_path, [pa.table({"id": ["k1", "k2"]})],
                    {"org.apache.hudi.bloomfilter": serialized,
                     "hoodie_bloom_filter_type_code": "DYNAMIC_V0"})
    found = footer_bloom_filter(read_parquet_footer(data, "f.parquet"), "f.parquet")
    assert (found.type_code, found.payload) == ("DYNAMIC_V0", serialized.encode())
    plain = read_parquet_footer(_parquet(tmp_path, [pa.table({"id": ["k1"]})]), "g.parquet")
    with pytest.raises(CorruptFileError, match=r"g\.parquet.*org\.apache\.hudi\.bloomfilter"):
        footer_bloom_filter(plain, "g.parquet")
    with pytest.raises(CorruptFileError, match=r"h\.parquet.*not a readable parquet file"):
        read_parquet_footer(b"not parquet", "h.parquet")
