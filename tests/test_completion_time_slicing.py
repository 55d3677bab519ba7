"""File slices of table versions 8 and 9 (issue 23 item 4): log files named by their deltacommit join
the slice of the greatest base instant at or before its completion time; checked against hudi-rs
(the `hudi` package) on every Java-written v8/v9 table, and on out-of-order completions by hand."""

from __future__ import annotations

import io
import json
import pickle

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.refdata import more_table_zips, params_or_skip, table_zips, unzip_table

from hudi_assets.avro import serialize_metadata
from hudi_assets.exceptions import CorruptFileError, UnsupportedTableError
from hudi_assets.fsview import CompletionTimeSlicing, FileSystemView, file_slicing
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config

V8_V9 = [n for n in table_zips(8) + table_zips(9) + more_table_zips() if "lance" not in n]


def _ours(view: FileSystemView, as_of: str | None = None) -> list[tuple]:
    rows = []
    for partition in view.partitions:
        for group in view.all_file_groups(partition):
            replaced = view.replaced_file_groups.get((partition, group.file_id))
            if replaced is not None and (as_of is None or replaced <= as_of):
                continue
            slices = [s for s in group.sorted_slices() if as_of is None or s.base_instant <= as_of]
            if slices:
                s = slices[0]
                rows.append((partition, s.file_id, s.base_instant, s.base_file or "",
                             tuple(sorted(log.name for log in s.log_files))))
    return sorted(rows)


def _theirs(base, as_of: str | None = None) -> list[tuple]:
    hudi = pytest.importorskip("hudi")
    table = hudi.HudiTableBuilder.from_base_uri(str(base)).build()
    options = hudi.HudiReadOptions().with_as_of_timestamp(as_of) if as_of else None
    return sorted((s.partition_path, s.file_id, s.creation_instant_time, s.base_file_name or "",
                   tuple(sorted(s.log_file_names))) for s in table.get_file_slices(options))


@pytest.mark.parametrize("name", params_or_skip(V8_V9, "v8/v9 tables"))
def test_latest_file_slices_equal_hudi_rs(name, tmp_path):
    base = unzip_table(name, tmp_path)
    view = FileSystemView(HoodieTable(str(base)))
    assert isinstance(view.slicing, CompletionTimeSlicing)
    assert _ours(view) == _theirs(base)
    assert [(s.partition, s.file_id, s.base_instant) for p in view.partitions
            for s in view.latest_file_slices(p)] != [] or "empty" in name


@pytest.mark.parametrize("name", params_or_skip(V8_V9, "v8/v9 tables"))
def test_file_slices_as_of_every_completed_instant_equal_hudi_rs(name, tmp_path):
    """hudi-rs's as-of view: each file group's latest slice whose base instant is at or before the
    instant's requested time (its logs as the table slices them now)."""
    base = unzip_table(name, tmp_path)
    table = HoodieTable(str(base))
    view = FileSystemView(table)
    for instant in table.active_timeline.filter_completed():
        assert _ours(view, instant.timestamp) == _theirs(base, instant.timestamp), instant


# ------------------------------------------------------------------ out-of-order completions by hand
V9 = {"hoodie.table.name": "t", "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": "9",
      "hoodie.timeline.layout.version": "2", "hoodie.timeline.path": "timeline",
      "hoodie.timeline.history.path": "history", "hoodie.table.partition.fields": ""}
T = ".hoodie/timeline"


def _table(tmp_path, completed: dict[str, tuple[str, str]], pending: dict[str, str],
           files: list[str]) -> HoodieTable:
    """`completed`: requested -> (action, completion); `pending`: requested -> action; data files in
    the one (non-partitioned) partition."""
    storage = Storage(str(tmp_path))
    write_table_config(storage, V9)
    storage.write(".hoodie_partition_metadata", b"")
    for requested, (action, completion) in completed.items():
        storage.write(f"{T}/{requested}_{completion}.{action}", b"")
    for requested, action in pending.items():
        plan = b""
        if action == "compaction":
            plan = serialize_metadata("HoodieCompactionPlan", {"operations": [
                {"fileId": "f1", "partitionPath": "", "baseInstantTime": "100"}], "version": 2})
        storage.write(f"{T}/{requested}.{action}.requested", plan)
    for name in files:
        storage.write(name, b"x")
    return HoodieTable(storage)


def _slices(table: HoodieTable) -> dict[str, list[str]]:
    view = FileSystemView(table)
    group = {g.file_id: g for g in view.all_file_groups("")}["f1"]
    return {i: s.file_names for i, s in sorted(group.slices.items())}


def test_a_log_completing_after_a_compaction_joins_the_compacted_slice(tmp_path):
    """Deltacommit 150 starts before compaction 200 and completes after it: its log belongs with the
    compacted base file; deltacommit 160 completes before the compaction: with the old base."""
    table = _table(tmp_path, {"100": ("deltacommit", "105"), "150": ("deltacommit", "250"),
                              "160": ("deltacommit", "190"), "200": ("commit", "210")}, {},
                   ["f1_0-1-1_100.parquet", ".f1_150.log.1_0-1-1", ".f1_160.log.1_0-1-1",
                    "f1_0-2-1_200.parquet"])
    assert _slices(table) == {"100": ["f1_0-1-1_100.parquet", ".f1_160.log.1_0-1-1"],
                              "200": ["f1_0-2-1_200.parquet", ".f1_150.log.1_0-1-1"]}


def test_a_pending_compaction_opens_a_slice_and_uncommitted_logs_are_left_out(tmp_path):
    table = _table(tmp_path, {"100": ("deltacommit", "105"), "350": ("deltacommit", "450"),
                              "120": ("deltacommit", "130")},
                   {"400": "compaction", "500": "deltacommit"},
                   ["f1_0-1-1_100.parquet", ".f1_120.log.1_0-1-1", ".f1_350.log.1_0-1-1",
                    ".f1_500.log.1_0-1-1"])
    view = FileSystemView(table)
    group = view.all_file_groups("")[0]
    assert {i: s.file_names for i, s in group.slices.items()} == {
        "100": ["f1_0-1-1_100.parquet", ".f1_120.log.1_0-1-1"], "400": [".f1_350.log.1_0-1-1"]}
    assert view.uncommitted_files("") == [".f1_500.log.1_0-1-1"]
    assert view.slicing.slice_keys(["f1_0-1-1_100.parquet", ".f1_350.log.1_0-1-1", "x.txt"]) == [
        ("f1", "100"), ("f1", "400"), None]


def test_a_log_only_group_is_sliced_by_its_first_deltacommit(tmp_path):
    table = _table(tmp_path, {"100": ("deltacommit", "105"), "110": ("deltacommit", "115")}, {},
                   [".f1_100.log.1_0-1-1", ".f1_110.log.1_0-1-1"])
    assert _slices(table) == {"100": [".f1_110.log.1_0-1-1", ".f1_100.log.1_0-1-1"]}


@pytest.mark.parametrize(("history", "slice_of_050"), [(True, "040"), (False, "100")])
def test_archived_instants_count_as_completed(tmp_path, history, slice_of_050):
    """Deltacommit 050 is archived: its log stays in the view, sliced by the completion time the LSM
    history gives it; without one (history gone) it joins the latest slice, as Java's getCompletionTime
    answers nothing and addLogFile takes the latest slice."""
    table = _table(tmp_path, {"100": ("commit", "105")}, {},
                   ["f1_0-1-1_040.parquet", ".f1_050.log.1_0-1-1", "f1_0-1-1_100.parquet"])
    if history:
        rows = pa.table({"instantTime": ["040", "050"], "completionTime": ["045", "060"],
                         "action": ["commit", "deltacommit"]})
        out = io.BytesIO()
        pq.write_table(rows, out)
        table.storage.write(f"{T}/history/040_050_0.parquet", out.getvalue())
        table.storage.write(f"{T}/history/manifest_1", json.dumps(
            {"files": [{"fileName": "040_050_0.parquet", "fileLen": len(out.getvalue())}]}).encode())
        table.storage.write(f"{T}/history/_version_", b"1")
    slices = _slices(table)
    assert ".f1_050.log.1_0-1-1" in slices[slice_of_050]
    assert sorted(slices) == ["040", "100"]


def _unreadable_history(table: HoodieTable) -> None:
    """A snapshot whose one data file, of instants 040 to 050, is not parquet."""
    table.storage.write(f"{T}/history/040_050_0.parquet", b"not parquet")
    table.storage.write(f"{T}/history/manifest_1", json.dumps(
        {"files": [{"fileName": "040_050_0.parquet", "fileLen": 11}]}).encode())
    table.storage.write(f"{T}/history/_version_", b"1")


def test_the_history_is_read_only_for_a_log_of_an_archived_deltacommit(tmp_path):
    """As CompletionTimeQueryViewV2 loads the archive lazily: logs of active deltacommits (and of
    pending ones, newer than every archived file) never read a history file; a log of archived 050
    does (here: the unreadable file is refused, naming it)."""
    table = _table(tmp_path, {"100": ("commit", "105"), "150": ("deltacommit", "155")},
                   {"200": "deltacommit"},
                   ["f1_0-1-1_100.parquet", ".f1_150.log.1_0-1-1", ".f1_200.log.1_0-1-1"])
    _unreadable_history(table)
    assert _slices(table) == {"100": ["f1_0-1-1_100.parquet", ".f1_150.log.1_0-1-1"]}
    table.storage.write(".f1_050.log.1_0-1-1", b"x")
    with pytest.raises(CorruptFileError, match=r"040_050_0\.parquet"):
        _slices(table)


def test_old_and_new_log_naming_in_one_file_group_is_refused(tmp_path):
    """A half-done 6 -> 8 upgrade: a log named by its base instant beside one named by its deltacommit."""
    table = _table(tmp_path, {"100": ("commit", "105"), "150": ("deltacommit", "155")}, {},
                   ["f1_0-1-1_100.parquet", ".f1_100.log.1_0-1-1", ".f1_150.log.1_0-1-1"])
    with pytest.raises(UnsupportedTableError, match=r"f1: log files named by their base instant"):
        FileSystemView(table).all_file_groups("")


def test_the_rule_follows_the_table_version_and_pickles(tmp_path):
    table = _table(tmp_path, {"100": ("commit", "105")}, {}, ["f1_0-1-1_100.parquet"])
    slicing = file_slicing(table.config, table.active_timeline)
    assert isinstance(slicing, CompletionTimeSlicing)
    assert pickle.loads(pickle.dumps(slicing)) == slicing
