"""The file-system view against hudi-rs on real tables, and its rules on hand-made layouts."""

from __future__ import annotations

import pytest
from hudi import HudiTable
from refdata import params_or_skip, table_zips

from hudi_assets.engine import LocalEngine
from hudi_assets.fsview import FileSystemView, build_file_groups, parse_base_file_name
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config


def _ours(view: FileSystemView) -> set[tuple]:
    return {
        (s.partition, s.file_id, s.base_instant, s.base_file, tuple(sorted(lf.name for lf in s.log_files)))
        for p in view.partitions
        for s in view.latest_file_slices(p)
    }


@pytest.mark.parametrize("name", params_or_skip(table_zips(6), "v6 tables"))
def test_latest_file_slices_equal_hudi_rs(real_tables, name):
    base = str(real_tables[name])
    view = FileSystemView(HoodieTable(base), LocalEngine(4))
    theirs = {
        (s.partition_path, s.file_id, s.creation_instant_time, s.base_file_name or None,
         tuple(sorted(s.log_file_names)))
        for s in HudiTable(base).get_file_slices()
    }
    assert _ours(view) == theirs
    assert bool(theirs) == ("empty" not in name)


def test_replaced_groups_are_hidden_and_known(real_tables):
    name = "sample_table__cow__v6_simplekeygen_nonhivestyle_overwritetable"
    if name not in real_tables:
        pytest.skip("../shared is absent")
    view = FileSystemView(HoodieTable(str(real_tables[name])))
    assert view.replaced_file_groups[("10", "4f2685a3-614f-49ca-9b2b-e1cb9fb61f27-0")] == "20240707001303088"
    assert [s.file_id for s in view.latest_file_slices("10")] == []
    groups = view.all_file_groups("10")
    assert [len(g.slices) for g in groups] == [2]  # the replaced group keeps both committed slices


def test_names_parse_like_hudi():
    name = "a079bdb3-731c-4894-b855-abfcd6921007-0_0-203-274_20240418173551906.parquet"
    assert parse_base_file_name(name) == ("a079bdb3-731c-4894-b855-abfcd6921007-0", "0-203-274",
                                          "20240418173551906")
    groups = build_file_groups("p", [
        "f1-0_0-1-1_001.parquet", "f1-0_0-2-2_003.parquet", ".f1-0_003.log.1_0-3-3", ".f1-0_003.log.2_0-4-4",
        ".f2-0_002.log.1_0-1-1", ".hoodie_partition_metadata", "f1-0_0-1-1_001.parquet.marker.CREATE",
        ".f1-0_0-1-1_001.parquet.crc", "notes.txt",
    ], ".parquet")
    assert sorted(groups) == ["f1-0", "f2-0"]
    latest = groups["f1-0"].sorted_slices()[0]
    assert latest.base_instant == "003" and latest.base_file == "f1-0_0-2-2_003.parquet"
    assert [lf.version for lf in latest.log_files] == [2, 1]
    assert groups["f2-0"].slices["002"].base_file is None  # a log-only slice


def _table(tmp_path, files: dict[str, bytes], timeline: list[str]) -> HoodieTable:
    storage = Storage(str(tmp_path))
    write_table_config(storage, {"hoodie.table.name": "t", "hoodie.table.type": "MERGE_ON_READ",
                                 "hoodie.table.version": "6", "hoodie.table.partition.fields": "dt"})
    for name in timeline:
        storage.write(f".hoodie/{name}", b"")
    for path, data in files.items():
        storage.write(path, data)
    return HoodieTable(str(tmp_path))


def test_uncommitted_slices_and_nested_partitions(tmp_path):
    table = _table(tmp_path, {
        "a/b/.hoodie_partition_metadata": b"", "a/b/f1-0_0-1-1_001.parquet": b"",
        "a/b/f1-0_0-1-1_004.parquet": b"",       # failed write at 004: invisible
        "a/b/c/ignored-0_0-1-1_001.parquet": b"",  # below a partition: Hudi does not look
        "x/.hoodie_partition_metadata": b"", "x/.g1-0_001.log.1_0-1-1": b"",
    }, ["001.deltacommit", "004.deltacommit.requested", "004.deltacommit.inflight"])
    view = FileSystemView(table)
    assert view.partitions == ["a/b", "x"]
    assert [s.base_instant for s in view.latest_file_slices("a/b")] == ["001"]
    assert view.uncommitted_files("a/b") == ["a/b/f1-0_0-1-1_004.parquet"]
    assert [s.log_files[0].name for s in view.latest_file_slices("x")] == [".g1-0_001.log.1_0-1-1"]


def test_slices_older_than_the_active_timeline_count_as_committed(tmp_path):
    table = _table(tmp_path, {"p/.hoodie_partition_metadata": b"", "p/f-0_0-1-1_000.parquet": b"",
                              "p/f-0_0-1-1_005.parquet": b""},
                   ["003.deltacommit", "004.deltacommit"])
    view = FileSystemView(table)
    assert view.is_committed("000") and not view.is_committed("005")
    assert [s.base_instant for s in view.latest_file_slices("p")] == ["000"]
