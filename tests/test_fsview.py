"""The file-system view against hudi-rs on real tables, and its rules on hand-made layouts."""

from __future__ import annotations

import pytest
from hudi import HudiTable
from support.builders import TableBuilder
from support.refdata import params_or_skip, table_zips

from hudi_assets.avro import serialize_metadata
from hudi_assets.demo import generate_table
from hudi_assets.engine import LocalEngine
from hudi_assets.fsview import (
    FileSystemView,
    NameSearch,
    build_file_groups,
    data_file_key,
    file_group_instants,
    parse_base_file_name,
)
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable


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


def test_uncommitted_slices_and_nested_partitions(tmp_path):
    table = TableBuilder(tmp_path, "MERGE_ON_READ").write({
        "a/b/.hoodie_partition_metadata": b"", "a/b/f1-0_0-1-1_001.parquet": b"",
        "a/b/f1-0_0-1-1_004.parquet": b"",       # failed write at 004: invisible
        "a/b/c/ignored-0_0-1-1_001.parquet": b"",  # below a partition: Hudi does not look
        "x/.hoodie_partition_metadata": b"", "x/.g1-0_001.log.1_0-1-1": b"",
    }).state_files("001.deltacommit", "004.deltacommit.requested", "004.deltacommit.inflight").table()
    view = FileSystemView(table)
    assert view.partitions == ["a/b", "x"]
    assert [s.base_instant for s in view.latest_file_slices("a/b")] == ["001"]
    assert view.uncommitted_files("a/b") == ["a/b/f1-0_0-1-1_004.parquet"]
    assert [s.log_files[0].name for s in view.latest_file_slices("x")] == [".g1-0_001.log.1_0-1-1"]


def test_slices_older_than_the_active_timeline_count_as_committed(tmp_path):
    table = TableBuilder(tmp_path, "MERGE_ON_READ").write({
        "p/.hoodie_partition_metadata": b"", "p/f-0_0-1-1_000.parquet": b"", "p/f-0_0-1-1_005.parquet": b"",
    }).state_files("003.deltacommit", "004.deltacommit").table()
    view = FileSystemView(table)
    assert view.is_committed("000") and not view.is_committed("005")
    assert [s.base_instant for s in view.latest_file_slices("p")] == ["000"]


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def demo(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("fsview_demo")
    return generate_table(Storage(str(root / "t")), request.param, partitions=3, commits=10, seed=7)


def test_view_of_generated_tables_matches_what_was_written(demo):
    view = FileSystemView(HoodieTable(demo.base_path))
    assert view.partitions == sorted(demo.partitions)
    compaction = demo.pending_compaction
    latest = set()
    for partition in view.partitions:
        for file_slice in view.latest_file_slices(partition):
            if compaction and file_slice.base_instant == compaction:
                # Hudi opens an empty slice at a pending compaction for every group in its plan.
                assert file_slice.is_empty and file_slice.file_id in demo.compaction_file_ids
                continue
            latest.add((partition, file_slice.file_id, file_slice.base_instant, file_slice.base_file,
                        tuple(lf.name for lf in file_slice.log_files)))
    expected = {(s.partition, s.file_id, s.base_instant, s.base_file, s.log_files)
                for s in demo.latest_file_slices if s.file_id not in demo.compaction_file_ids}
    assert latest == expected
    replaced = {(p, f): ts for ts, by_partition in demo.replaced_file_ids.items()
                for p, ids in by_partition.items() for f in ids}
    assert view.replaced_file_groups == replaced and replaced
    assert view.savepointed_files == {n for names in demo.savepointed_files.values() for n in names}
    assert set(view.pending_compaction_operations) == (
        {(p, f) for p in view.partitions for f in demo.compaction_file_ids
         if any(g.file_id == f for g in view.all_file_groups(p))} if compaction else set())
    if compaction:  # the plan reads each group's slice before the compaction instant
        read = {name for partition in view.partitions for group in view.all_file_groups(partition)
                if group.file_id in demo.compaction_file_ids
                for name in group.sorted_slices()[1].file_names}
        assert view.pending_plan_files == read and read
    uncommitted = {p for partition in view.partitions for p in view.uncommitted_files(partition)}
    # The failed write's new base files are invisible; a MOR log block it appended to a committed
    # slice belongs to that slice (readers skip the block), as in Hudi's view.
    assert uncommitted == {p for p in demo.failed_files if not p.rsplit("/", 1)[-1].startswith(".")}
    assert uncommitted


def test_pending_clustering_groups_come_from_the_requested_plan(tmp_path):
    table = TableBuilder(tmp_path, "MERGE_ON_READ").write({
        "p/.hoodie_partition_metadata": b"", "p/f1-0_0-1-1_001.parquet": b"", "p/f2-0_0-1-1_001.parquet": b"",
    }).state_files("001.deltacommit").table()
    plan = {"operationType": "CLUSTER", "version": 1, "clusteringPlan": {
        "inputGroups": [{"slices": [{"dataFilePath": "p/f1-0_0-1-1_001.parquet", "deltaFilePaths": [],
                                     "fileId": "f1-0", "partitionPath": "p", "bootstrapFilePath": "",
                                     "version": 1}], "metrics": {}, "numOutputFileGroups": 1,
                         "extraMetadata": None, "version": 1}],
        "strategy": {"strategyClassName": "x", "strategyParams": {}, "version": 1},
        "extraMetadata": {}, "version": 1, "preserveHoodieMetadata": True}}
    table.storage.write(".hoodie/002.replacecommit.requested",
                        serialize_metadata("HoodieRequestedReplaceMetadata", plan))
    view = FileSystemView(HoodieTable(table.base_path))
    assert view.pending_clustering_file_groups == {("p", "f1-0"): "002"}
    assert view.pending_plan_files == {"f1-0_0-1-1_001.parquet"}


# The clean's re-validation groups listed names with `data_file_key` / `file_group_instants` (no
# object per slice); the planner with `build_file_groups`. Both must take the same names as data
# files, or a plan and its check would see different slices.
MIXED_NAMES = [
    "f1_0-1-0_20240101000000000.parquet", "f1_0-1-0_20240102000000000.parquet",
    ".f1_20240102000000000.log.1_0-1-0", ".f1_20240102000000000.log.2_1-0-1",
    ".f2_20240103000000000.log.1_0-1-0",  # a group of log files only
    ".f1_0-1-0_20240101000000000.parquet.crc",  # Hadoop checksum
    ".f3_20240103000000000.cdc.1_0-1-0",  # a log-shaped name of another extension
    "f4_0-1-0_20240101000000000.orc",  # another base format
    "nounderscore.parquet", "f5_0-1-0_.parquet",  # base-shaped names without an instant
    ".hoodie_partition_metadata", ".hidden", "README",
]


def test_data_file_keys_group_as_build_file_groups_does():
    grouped = build_file_groups("p", MIXED_NAMES, ".parquet")
    keys = [data_file_key(name, ".parquet") for name in MIXED_NAMES]
    assert file_group_instants(keys) == {fid: set(g.slices) for fid, g in grouped.items()}
    assert file_group_instants(keys) == {"f1": {"20240101000000000", "20240102000000000"},
                                         "f2": {"20240103000000000"}}


def test_name_search_answers_as_a_loop_over_the_names():
    names = [".hoodie_partition_metadata.parquet", "a.parquet", ".a.parquet.crc"]
    search = NameSearch(names)
    for text in (".hoodie_partition_metadata", "a.", ".a", "b", "parquet", ""):
        assert search.any_starts_with(text) == any(n.startswith(text) for n in names)
    for text in (".crc", ".parquet", "crc.", "a", ".log", ""):
        assert search.any_ends_with(text) == any(n.endswith(text) for n in names)
    assert not NameSearch([]).any_ends_with(".crc")
