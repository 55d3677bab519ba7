"""The metadata table's initialization bulk-inserts each partition's records into HFile base files, as
Hudi 0.15's `initializeFromFilesystem` -> `bulkCommit` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.builders import TableBuilder, base_file, log_file
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets import bloom
from hudi_assets.hfile import HFileReader
from hudi_assets.logformat import BlockType, read_blocks
from hudi_assets.logformat.delete_block import decode_delete_block
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.initializer import initialize_from_filesystem
from hudi_assets.metadata.keys import file_group_index
from hudi_assets.metadata.payloads import ColumnRange, column_stats_record, wrap

T1, T2 = "20240101000000000", "20240101000001000"
JAVA_V8 = [name for name in table_zips(8) if name.endswith("v8_trips_8i3u1d")]
NAMES = [base_file("a", T1), base_file("b", T1)]


@pytest.fixture
def initialized(tmp_path) -> Path:
    b = TableBuilder(tmp_path, "MERGE_ON_READ")
    b.commit(T1, {"p1": NAMES})
    b.commit(T2, {"p1": [log_file("a", T1)]})
    seeds = [column_stats_record("p1", n, ColumnRange(c, wrap("LongWrapper", 1), wrap("LongWrapper", 2),
                                                      0, 1, 9, 9))
             for n in NAMES for c in ("id", "ts", "name")]
    assert initialize_from_filesystem(b.table(), {"column_stats": seeds, "bloom_filters": []}) == {
        "files": f"{T2}010", "column_stats": f"{T2}011", "bloom_filters": f"{T2}012"}
    return tmp_path / ".hoodie/metadata"


def _rows(path: Path) -> list[str]:
    return [row.decode() for row, _ in HFileReader(path.read_bytes()).entries()]


def test_each_file_group_holds_its_base_file_and_the_empty_log_file(initialized):
    for partition, prefix, instant, groups in [("files", "files-", "010", 1),
                                               ("column_stats", "col-stats-", "011", 2)]:
        names = sorted(p.name for p in (initialized / partition).iterdir()
                       if p.name.startswith((prefix, f".{prefix}")))
        ids = [f"{prefix}{i:04d}-0" for i in range(groups)]
        assert names == sorted([f".{i}_{T2}{instant}.log.1_0-0-0" for i in ids]
                               + [f"{i}_{n}-0-{n}_{T2}{instant}.hfile" for n, i in enumerate(ids)])
        for file_id in ids:
            (block,) = read_blocks((initialized / partition / f".{file_id}_{T2}{instant}.log.1_0-0-0")
                                   .read_bytes(), "log")
            assert block.block_type is BlockType.DELETE and decode_delete_block(block) == []
    files_rows = _rows(initialized / f"files/files-0000-0_0-0-0_{T2}010.hfile")
    assert files_rows == ["__all_partitions__", "p1"]
    stats_rows = {n: _rows(initialized / f"column_stats/col-stats-000{n}-0_{n}-0-{n}_{T2}011.hfile")
                  for n in (0, 1)}
    for n, rows in stats_rows.items():
        assert rows == sorted(rows) and rows
        assert {file_group_index(key, 2) for key in rows} == {n}
    assert len(stats_rows[0]) + len(stats_rows[1]) == 6
    # A partition initialized without records gets its log files only, as a bulk insert of nothing.
    assert not list((initialized / "bloom_filters").glob("*.hfile"))
    assert len(list((initialized / "bloom_filters").glob(".bloom-*"))) == 4
    listing = MetadataTable(str(initialized.parents[1])).files_listing.partitions["p1"]
    assert set(listing) == {*NAMES, log_file("a", T1)}


def test_the_init_deltacommit_records_a_bulk_insert(initialized):
    timeline = initialized / ".hoodie"
    assert (timeline / f"{T2}010.deltacommit.requested").read_bytes() == b""
    assert (timeline / f"{T2}010.deltacommit.inflight").read_bytes() == b""
    assert not (timeline / ".temp" / f"{T2}010").exists()
    commit = json.loads((timeline / f"{T2}011.deltacommit").read_text())
    assert commit["operationType"] == "BULK_INSERT" and commit["compacted"] is False
    assert json.loads(commit["extraMetadata"]["schema"])["name"] == "HoodieMetadataRecord"
    (partition,) = commit["partitionToWriteStats"]
    stats = commit["partitionToWriteStats"][partition]
    assert partition == "column_stats"
    assert [s["fileId"] for s in stats] == ["col-stats-0000-0", "col-stats-0001-0"]
    for stat in stats:
        path = initialized / stat["path"]
        assert stat["prevCommit"] == "null" and stat["partitionPath"] == "column_stats"
        assert stat["numWrites"] == stat["numInserts"] == len(_rows(path))
        assert stat["fileSizeInBytes"] == stat["totalWriteBytes"] == path.stat().st_size
    empty = json.loads((timeline / f"{T2}012.deltacommit").read_text())
    assert empty["partitionToWriteStats"] == {"bloom_filters": []}


@pytest.mark.parametrize("name", params_or_skip(JAVA_V8, "the Java-written v8 trips table"))
def test_base_files_have_the_structure_of_java_written_ones(name, initialized, tmp_path):
    java_mdt = unzip_table(name, tmp_path / "java") / ".hoodie/metadata"
    for partition in ("files", "column_stats"):
        (ours_path, *_) = sorted((initialized / partition).glob("*.hfile"))
        (java_path, *_) = sorted((java_mdt / partition).glob("*.hfile"))
        ours, java = HFileReader(ours_path.read_bytes()), HFileReader(java_path.read_bytes())
        assert ours.meta_block_names == java.meta_block_names == [b"bloomFilter"]
        assert set(ours.file_info) == set(java.file_info)
        for field in ("comparator_class_name", "major_version", "minor_version", "compression_codec"):
            assert getattr(ours.trailer, field) == getattr(java.trailer, field)
        rows = _rows(ours_path)
        assert ours.file_info[b"minRecordKey"] == rows[0].encode()
        assert ours.file_info[b"maxRecordKey"] == rows[-1].encode()
        assert ours.meta_block(b"bloomFilter") == bloom.serialize(rows).encode()
