"""Metadata-table record keys, file-group routing and record shapes, checked against the Java-written
metadata tables of the real v8/v9 tables (the same key and hash functions since 0.11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets.hfile import HFileReader
from hudi_assets.logformat import BlockType, HeaderKey, read_blocks
from hudi_assets.logformat.hfile_block import (
    decode_hfile_data_block,
    decode_hfile_records,
    encode_hfile_data_block,
)
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.keys import (
    bloom_filter_key,
    column_stats_key,
    file_group_id,
    file_group_index,
    files_key,
    xxhash64,
)
from hudi_assets.metadata.payloads import (
    METADATA_RECORD_SCHEMA,
    WRITER_SCHEMA,
    ColumnRange,
    bloom_filter_delete_record,
    column_stats_delete_record,
    column_stats_record,
    partition_files_record,
    partition_list_record,
    wrap,
)

WITH_MDT = [name for name in table_zips(8) if name.endswith("v8_trips_8i3u1d")] + table_zips(9)
# What Hudi 1.x added to HoodieMetadataRecord after 0.15 (0.15 readers know none of it).
_ONE_X_FIELDS = {"isTightBound", "position", "SecondaryIndexMetadata", "valueType"}
_ONE_X_WRAPPERS = {"LocalDateWrapper", "ArrayWrapper"}


def _column_stats_rows(mdt: Path) -> list[tuple[str, str, dict]]:
    """(file, key, ColumnStatsMetadata) of every column_stats record in base files and log blocks."""
    rows = []
    for path in sorted((mdt / "column_stats").iterdir()):
        if path.suffix == ".hfile":
            reader = HFileReader(path.read_bytes(), name=str(path))
            records = decode_hfile_records(reader, reader.file_info[b"schema"].decode(), where="base")
        elif ".log." in path.name:
            records = [r for block in read_blocks(path.read_bytes(), str(path))
                       if block.block_type is BlockType.HFILE_DATA for r in decode_hfile_data_block(block)]
        else:
            continue
        rows += [(path.name, key, value["ColumnStatsMetadata"]) for key, value in records]
    return rows


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT, "v8/v9 tables with a metadata table"))
def test_column_stats_keys_and_file_groups_match_java_written_records(name, tmp_path):
    base = unzip_table(name, tmp_path)
    partitions = list(MetadataTable(str(base)).files_listing.partitions)
    mdt = base / ".hoodie" / "metadata"
    file_groups = {p.name.lstrip(".").partition("_")[0] for p in (mdt / "column_stats").iterdir()
                   if p.name.startswith((".col-stats-", "col-stats-"))}
    rows = _column_stats_rows(mdt)
    assert rows
    for file_name, key, stats in rows:
        candidates = {column_stats_key(p, stats["fileName"], stats["columnName"]) for p in partitions}
        assert key in candidates, (file_name, key, stats)
        group = file_group_id("column_stats", file_group_index(key, len(file_groups)))
        assert file_name.lstrip(".").startswith(f"{group}_"), (key, file_name)


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT[:1], "the v8 table with a metadata table"))
def test_schema_is_the_java_written_one_without_what_1x_added(name, tmp_path):
    base = unzip_table(name, tmp_path)
    logs = sorted((base / ".hoodie/metadata/files").glob(".files-*.log.*"))
    header = next(b.header[HeaderKey.SCHEMA] for log in logs for b in read_blocks(log.read_bytes(), str(log))
                  if b.block_type is BlockType.HFILE_DATA)

    def strip(node):
        if isinstance(node, list):
            return [strip(n) for n in node
                    if (n.get("name") if isinstance(n, dict) else n) not in _ONE_X_WRAPPERS]
        if isinstance(node, dict):
            kept = {k: strip(v) for k, v in node.items() if k != "doc"}
            if "fields" in kept:
                kept["fields"] = [f for f in kept["fields"] if f["name"] not in _ONE_X_FIELDS]
            return kept
        return node

    assert strip(json.loads(METADATA_RECORD_SCHEMA)) == strip(json.loads(header))
    assert [f["name"] for f in json.loads(WRITER_SCHEMA)["fields"]][:2] == ["key", "type"]


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT[:1], "the v8 table with a metadata table"))
def test_encoded_block_has_the_structure_of_a_java_written_block(name, tmp_path):
    base = unzip_table(name, tmp_path)
    log = sorted((base / ".hoodie/metadata/files").glob(".files-*.log.*"))[-1]
    java = next(b for b in read_blocks(log.read_bytes(), str(log)) if b.block_type is BlockType.HFILE_DATA)
    ours = encode_hfile_data_block([(r.key, r.encode()) for r in (
        partition_files_record("city=chennai", {"a.parquet": 7}), partition_list_record(["city=chennai"]))],
        "20240101000000000", METADATA_RECORD_SCHEMA)
    assert list(ours.header) == list(java.header)
    assert ours.footer == java.footer == {}
    theirs, mine = HFileReader(java.content, name="java"), HFileReader(ours.content, name="ours")
    assert sorted(mine.file_info) == sorted(theirs.file_info)
    for attr in ("major_version", "minor_version", "comparator_class_name", "compression_codec",
                 "num_data_index_levels", "meta_index_count"):
        assert getattr(mine.trailer, attr) == getattr(theirs.trailer, attr), attr
    java_value = dict(decode_hfile_data_block(java))["__all_partitions__"]
    value = dict(decode_hfile_data_block(ours))["__all_partitions__"]
    assert value["key"] == "" == java_value["key"]
    assert [k for k in value if k.startswith("_hoodie")] == [k for k in java_value if k.startswith("_hoodie")]


def test_record_shapes_as_hoodie_metadata_payload_builds_them():
    block = encode_hfile_data_block([(r.key, r.encode()) for r in (
        partition_files_record("", {"a.parquet": 10}, ["b.parquet"]),
        partition_list_record(["2024/01/01", ""], is_deleted=True),
        column_stats_delete_record("2024/01/01", "f.parquet", "ts"),
        column_stats_record("2024/01/01", "g.parquet", ColumnRange("ts", wrap("LongWrapper", 1),
                                                                   wrap("LongWrapper", 9), 0, 3, 10, 20)),
        bloom_filter_delete_record("2024/01/01", "f.parquet", "001"))], "001", METADATA_RECORD_SCHEMA)
    records = dict(decode_hfile_data_block(block))
    assert records["."]["filesystemMetadata"] == {"a.parquet": {"size": 10, "isDeleted": False},
                                                  "b.parquet": {"size": 0, "isDeleted": True}}
    assert records["__all_partitions__"]["type"] == 1
    assert records["__all_partitions__"]["filesystemMetadata"] == {
        "2024/01/01": {"size": 0, "isDeleted": True}, ".": {"size": 0, "isDeleted": True}}
    stub = records[column_stats_key("2024/01/01", "f.parquet", "ts")]["ColumnStatsMetadata"]
    assert stub == {"fileName": "f.parquet", "columnName": "ts", "minValue": None, "maxValue": None,
                    "valueCount": -1, "nullCount": -1, "totalSize": -1, "totalUncompressedSize": -1,
                    "isDeleted": True}
    full = records[column_stats_key("2024/01/01", "g.parquet", "ts")]["ColumnStatsMetadata"]
    assert (full["minValue"], full["maxValue"], full["isDeleted"]) == ({"value": 1}, {"value": 9}, False)
    bloom = records[bloom_filter_key("2024/01/01", "f.parquet")]
    assert bloom["type"] == 4
    assert bloom["BloomFilterMetadata"] == {"type": "", "timestamp": "001", "bloomFilter": b"",
                                            "isDeleted": True}
    assert files_key("") == "."


def test_hash_ids_and_file_group_index():
    assert xxhash64(b"", 0) == 0xEF46DB3751D8E999  # the XXH64 reference vector
    assert xxhash64(b"abc", 0) == 0x44BC2CF5AD770999
    assert xxhash64(b"Nobody inspects the spammish repetition", 0) == 0xFBCEA83C8A378BF1  # > 32 bytes
    assert len(column_stats_key("p", "f.parquet", "c")) == 48
    assert len(bloom_filter_key("p", "f.parquet")) == 36
    # Java: "polygenelubricants".hashCode() == Integer.MIN_VALUE; abs stays negative, % keeps the sign.
    assert file_group_index("polygenelubricants", 10) == 8
    assert file_group_index("__all_partitions__", 1) == 0
    assert file_group_id("bloom_filters", 3) == "bloom-filters-0003-0"
    with pytest.raises(ValueError, match="record_index_x"):
        file_group_id("record_index_x", 0)
