"""Metadata-table compaction pieces: the HFile base file and the record merge, checked against the
base files Hudi wrote into the metadata tables of the real v8/v9 tables."""

from __future__ import annotations

import base64
import io
import struct
from pathlib import Path

import fastavro
import pytest
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets import bloom
from hudi_assets.avro import deserialize_any
from hudi_assets.cli import main
from hudi_assets.demo import generate_table
from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.hfile import HFileReader
from hudi_assets.logformat.hfile_block import avro_schema
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.compaction import (
    base_file_bytes,
    compact,
    compaction_due,
    compaction_instant_time,
    compaction_metrics,
    merge_payloads,
    merged_records,
)
from hudi_assets.storage import Storage
from hudi_assets.timeline.commit_metadata import CommitMetadata

WITH_MDT = [name for name in table_zips(8) if name.endswith("v8_trips_8i3u1d")] + table_zips(9)


def _might_contain(serialized: bytes, key: str) -> bool:
    """Membership in a one-row DYNAMIC_V0 filter, read with its own sizing (Hudi 1.1 sizes differ)."""
    data = base64.b64decode(serialized)
    _, num_hashes, _, bits = struct.unpack_from(">iibi", data, 0)
    row = data[25 + 13:]
    return all(row[pos >> 3] >> (pos & 7) & 1 for pos in bloom._positions(key, num_hashes, bits))


def _records(data: bytes, schema_text: str) -> dict[str, dict]:
    reader = HFileReader(data)
    schema = avro_schema(schema_text, "<test>", "record")
    return {row.decode(): fastavro.schemaless_reader(io.BytesIO(value), schema, None, return_record_name=True,
                                                     return_record_name_override=True)
            for row, value in reader.entries()}


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT, "v8/v9 tables with a metadata table"))
def test_base_files_match_the_structure_and_bloom_filter_hudi_writes(name, tmp_path):
    base = unzip_table(name, tmp_path)
    metadata = MetadataTable(str(base))
    checked = 0
    for partition in ("files", "column_stats"):
        if partition not in metadata.partitions:
            continue
        for file_slice in metadata.file_slices(partition):
            if file_slice.base_file is None:
                continue
            java = HFileReader(metadata.storage.read(file_slice.path(file_slice.base_file)))
            rows = [row.decode() for row, _ in java.entries()]
            if partition == "column_stats":  # 1.x's files base files hold filters of other keys
                assert all(_might_contain(java.meta_block(b"bloomFilter"), row) for row in rows)
            records, schema_text = merged_records(metadata.storage, file_slice, metadata.block_filter)
            name = f"{file_slice.file_id}_0-1-2_99990101000000000001.hfile"
            ours = HFileReader(base_file_bytes(records, schema_text, name))
            assert ours.meta_block_names == java.meta_block_names
            assert set(ours.file_info) == set(java.file_info)
            assert ours.file_info[b"minRecordKey"] == min(records).encode()
            assert ours.file_info[b"maxRecordKey"] == max(records).encode()
            assert ours.meta_block(b"bloomFilter") == bloom.serialize(sorted(records)).encode()
            assert all(_might_contain(ours.meta_block(b"bloomFilter"), key) for key in records)
            assert ours.trailer.comparator_class_name == java.trailer.comparator_class_name
            assert _records(base_file_bytes(records, schema_text, name), schema_text) == {
                key: {**record, "key": "", "_hoodie_file_name": name} for key, record in records.items()}
            checked += 1
    assert checked > 0


def _files(key: str, kind: int, files: dict[str, tuple[int, bool]]) -> dict:
    return {"key": key, "type": kind,
            "filesystemMetadata": {n: {"size": s, "isDeleted": d} for n, (s, d) in files.items()}}


def test_files_records_merge_newer_over_older_and_keep_unmatched_tombstones():
    older = _files("p", 2, {"a": (10, False), "b": (5, False)})
    newer = _files("p", 2, {"a": (0, True), "b": (7, False), "c": (0, True)})
    assert merge_payloads(older, newer)["filesystemMetadata"] == {
        "b": {"size": 7, "isDeleted": False}, "c": {"size": 0, "isDeleted": True}}
    with pytest.raises(ValueError, match="type 1 into one of type 2"):
        merge_payloads(older, _files("p", 1, {}))


def _stats(low, high, count: int, deleted: bool = False) -> dict:
    wrap = ("org.apache.hudi.avro.model.LongWrapper", {"value": low}), (
        "org.apache.hudi.avro.model.LongWrapper", {"value": high})
    return {"key": "", "type": 3, "ColumnStatsMetadata": {
        "fileName": "f", "columnName": "c", "minValue": wrap[0] if low is not None else None,
        "maxValue": wrap[1] if high is not None else None, "valueCount": count, "nullCount": 1,
        "totalSize": 3, "totalUncompressedSize": 4, "isDeleted": deleted}}


def test_column_stats_merge_widens_the_range_and_adds_counts_unless_a_tombstone():
    merged = merge_payloads(_stats(5, 9, 2), _stats(1, 6, 3))["ColumnStatsMetadata"]
    assert (merged["minValue"][1]["value"], merged["maxValue"][1]["value"]) == (1, 9)
    counts = ("valueCount", "nullCount", "totalSize", "totalUncompressedSize")
    assert [merged[c] for c in counts] == [5, 2, 6, 8]
    assert merge_payloads(_stats(None, None, 0), _stats(4, 4, 1))["ColumnStatsMetadata"]["minValue"][1] == {
        "value": 4}
    tombstone = _stats(None, None, -1, deleted=True)
    assert merge_payloads(_stats(5, 9, 2), tombstone) == tombstone
    assert merge_payloads(tombstone, _stats(5, 9, 2)) == _stats(5, 9, 2)


def test_bloom_filter_records_take_the_newer_and_names_follow_hudi():
    older = {"key": "", "type": 4, "BloomFilterMetadata": {"timestamp": "1"}}
    newer = {"key": "", "type": 4, "BloomFilterMetadata": {"timestamp": "2"}}
    assert merge_payloads(older, newer) is newer
    assert compaction_instant_time("20240101000000123") == "20240101000000123001"
    metrics = compaction_metrics(None, [3 * 1024 * 1024, 1024])
    assert metrics == {"TOTAL_LOG_FILES": 2.0, "TOTAL_IO_READ_MB": 3.0, "TOTAL_LOG_FILES_SIZE": 3146752.0,
                       "TOTAL_IO_WRITE_MB": 120.0, "TOTAL_IO_MB": 123.0}


# ------------------------------------------------------------------------- on a demo metadata table
@pytest.fixture
def mdt_demo(tmp_path) -> Path:
    table = generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", commits=10, bloom_entries=100,
                           seed=3, metadata_table=True)
    return Path(table.base_path)


def test_compaction_is_due_as_the_writer_decides(mdt_demo):
    metadata = MetadataTable(str(mdt_demo))
    latest = metadata.timeline.filter_completed().filter_actions({"deltacommit"}).last().timestamp
    assert compaction_due(metadata) is None  # 3 deltacommits since the compaction after the 10th
    assert compaction_due(metadata, max_delta_commits=3) == latest + "001"
    # A data write still pending at or before the latest metadata deltacommit holds it back...
    earlier = metadata.data_timeline.filter_completed().timestamps[-2]
    pending = mdt_demo / ".hoodie" / f"{earlier[:-3]}999.deltacommit.requested"
    pending.write_bytes(b"")
    assert compaction_due(MetadataTable(str(mdt_demo)), max_delta_commits=3) is None
    pending.unlink()
    # ...as does a pending metadata compaction.
    plan = mdt_demo / ".hoodie" / "metadata" / ".hoodie" / f"{latest}001.compaction.requested"
    plan.write_bytes(b"")
    assert compaction_due(MetadataTable(str(mdt_demo)), max_delta_commits=3) is None


def test_a_second_compaction_merges_base_and_logs_and_changes_no_answer(mdt_demo, capsys):
    before = MetadataTable(str(mdt_demo))
    listing = before.files_listing.partitions
    records = {p: {k: v for s in before.file_slices(p)
                   for k, v in merged_records(before.storage, s, before.block_filter)[0].items()}
               for p in before.partitions}
    instant_time = compaction_due(before, max_delta_commits=3)
    assert compact(before, instant_time).timestamp == instant_time
    after = MetadataTable(str(mdt_demo))
    assert after.latest_compaction().timestamp == instant_time
    assert after.files_listing.partitions == listing
    for partition in after.partitions:
        for file_slice in after.file_slices(partition):
            assert not file_slice.log_files
            merged = merged_records(after.storage, file_slice, after.block_filter)[0]
            assert merged == {k: {**records[partition][k], "_hoodie_file_name": file_slice.base_file.name}
                              for k in merged}
        assert sum(len(merged_records(after.storage, s, after.block_filter)[0])
                   for s in after.file_slices(partition)) == len(records[partition])
    plan = after.storage.read(f".hoodie/{instant_time}.compaction.requested")
    operations = deserialize_any(plan, "plan")[1]["operations"]
    assert {op["fileId"] for op in operations} == {s.file_id for p in after.partitions
                                                  for s in before.file_slices(p) if s.log_files}
    commit = CommitMetadata.from_bytes(after.storage.read(f".hoodie/{instant_time}.commit"), "commit")
    assert commit.compacted and commit.operation_type == "COMPACT"
    assert {s.path for s in commit.write_stats} == {
        f"{p}/{s.base_file.name}" for p in after.partitions for s in after.file_slices(p) if s.base_file
        and s.base_file.instant == instant_time}
    assert main(["metadata", str(mdt_demo), "--validate"]) == 0
    with pytest.raises(HudiAssetsError, match="exists already"):
        compact(before, instant_time)
