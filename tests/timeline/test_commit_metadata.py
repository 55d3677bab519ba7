"""Commit JSON: parse real files into typed objects and write them back byte for byte."""

from __future__ import annotations

import pytest
from support.refdata import params_or_skip, table_zips

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.commit_metadata import CommitMetadata, WriteStat, json_written_paths


@pytest.mark.parametrize("name", params_or_skip(table_zips(6), "v6 tables"))
def test_real_commit_files_round_trip_byte_for_byte(real_tables, name):
    hoodie = real_tables[name] / ".hoodie"
    files = [p for p in hoodie.iterdir() if p.suffix in (".commit", ".deltacommit", ".replacecommit",
                                                        ".inflight")]
    for path in files:
        data = path.read_bytes()
        parsed = CommitMetadata.from_json(data, str(path))
        if data:
            assert parsed.to_json() == data, path
        for stat in parsed.write_stats:
            assert stat.path is None or stat.file_id in stat.path


def test_replacecommit_exposes_replaced_groups(real_tables):
    name = "sample_table__cow__v6_simplekeygen_nonhivestyle_overwritetable"
    if name not in real_tables:
        pytest.skip("../shared is absent")
    path = real_tables[name] / ".hoodie" / "20240707001303088.replacecommit"
    meta = CommitMetadata.from_json(path.read_bytes(), str(path))
    assert meta.operation_type == "INSERT_OVERWRITE_TABLE"
    assert meta.replaced_file_ids["30"] == ["d398fae1-c0e6-4098-8124-f55f7098bdba-0"]
    assert meta.partitions == ["30", "20", "10"]
    assert meta.write_stats[0].prev_commit is None and meta.write_stats[0].file_size == 441392


@pytest.mark.parametrize("data", [b"{\"partitionToWriteStats\": ", b"not json", b"[1, 2]",
                                  b"{\"partitionToWriteStats\": 5}"])
def test_bad_commit_files_name_the_file(data):
    with pytest.raises(CorruptFileError, match=r"^/t/\.hoodie/1\.commit: "):
        CommitMetadata.from_json(data, "/t/.hoodie/1.commit")
    with pytest.raises(CorruptFileError, match=r"^/t/\.hoodie/1\.commit: "):
        json_written_paths(data, "/t/.hoodie/1.commit")


@pytest.mark.parametrize("name", params_or_skip(table_zips(6) + table_zips(8), "v6 and v8 tables"))
def test_written_paths_read_straight_are_those_of_the_parsed_metadata(real_tables, name):
    """JSON (v6) read without a WriteStat per file, Avro (v8) through the layout's reader."""
    active = HoodieTable(str(real_tables[name])).active_timeline
    for instant in active.filter_completed().write_timeline():
        parsed = metadata.commit_metadata(active, instant)
        assert metadata.written_paths(active, instant) == parsed.written_paths


def test_empty_file_is_empty_metadata_and_new_stat_has_hudi_key_order():
    assert CommitMetadata.from_json(b"", "x").write_stats == []
    stat = WriteStat.new(fileId="f-0", path="p/f-0_0-1-2_001.parquet", numWrites=3, logVersion=1)
    assert list(stat.fields)[:4] == ["fileId", "path", "cdcStats", "prevCommit"]
    assert list(stat.fields)[-1] == "logVersion" and stat.prev_commit is None
