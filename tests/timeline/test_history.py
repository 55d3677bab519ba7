"""The LSM-tree history of Hudi 1.x tables (issue 23 item 3), read from a history written by hand in
the documented format: `_version_`, `manifest_N` (Jackson's pretty JSON of HoodieLSMTimelineManifest),
`<min>_<max>_<layer>.parquet` files of HoodieLSMTimelineInstant rows."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_assets.cli import main
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline.history import ArchivedCompletionTimes, LSMHistory

HISTORY = ".hoodie/timeline/history"
# HoodieLSMTimelineInstant.avsc as Hudi's parquet writer lays it out (every field optional but version).
SCHEMA = pa.schema([("instantTime", pa.string()), ("completionTime", pa.string()), ("action", pa.string()),
                    ("metadata", pa.binary()), ("plan", pa.binary()),
                    pa.field("version", pa.int32(), nullable=False)])


def _rows(*instants: tuple[str, str, str]) -> list[dict]:
    return [{"instantTime": t, "completionTime": c, "action": a, "metadata": f"meta {t}".encode(),
             "plan": None, "version": 1} for t, c, a in instants]


def _parquet(rows: list[dict]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, SCHEMA), out)
    return out.getvalue()


def _manifest(storage: Storage, version: int, names: list[str]) -> None:
    files = [{"fileName": n, "fileLen": storage.status(f"{HISTORY}/{n}").size} for n in names]
    storage.write(f"{HISTORY}/manifest_{version}", json.dumps({"files": files}, indent=2).encode())


L0_A = _rows(("100", "105", "commit"), ("110", "115", "clean"))
L0_B = _rows(("120", "125", "deltacommit"), ("130", "136", "commit"))  # 130: a compaction, archived as commit
L0_C = _rows(("140", "141", "rollback"), ("150", "158", "replacecommit"))


def _history(storage: Storage, with_version_file: bool = True) -> None:
    """Three snapshots: L0 A; L0 A + B; A and B compacted into one layer-1 file, plus L0 C. The
    replaced L0 files stay on storage (the cleaning of old snapshots had not run) with a stray row."""
    storage.write(f"{HISTORY}/100_115_0.parquet", _parquet(L0_A + _rows(("111", "112", "commit"))))
    _manifest(storage, 1, ["100_115_0.parquet"])
    storage.write(f"{HISTORY}/120_136_0.parquet", _parquet(L0_B))
    _manifest(storage, 2, ["100_115_0.parquet", "120_136_0.parquet"])
    storage.write(f"{HISTORY}/100_136_1.parquet", _parquet(L0_A + L0_B))
    storage.write(f"{HISTORY}/140_158_0.parquet", _parquet(L0_C))
    _manifest(storage, 3, ["100_136_1.parquet", "140_158_0.parquet"])
    if with_version_file:
        storage.write(f"{HISTORY}/_version_", b"3")


@pytest.fixture
def storage(tmp_path) -> Storage:
    storage = Storage(str(tmp_path))
    write_table_config(storage, {"hoodie.table.name": "t", "hoodie.table.type": "MERGE_ON_READ",
                                 "hoodie.table.version": "8", "hoodie.timeline.layout.version": "2",
                                 "hoodie.timeline.path": "timeline",
                                 "hoodie.timeline.history.path": "history"})
    storage.write(".hoodie/timeline/200.deltacommit.requested", b"")
    storage.write(".hoodie/timeline/200_201.deltacommit", b"")
    return storage


EXPECTED = [("100", "commit", "105"), ("110", "clean", "115"), ("120", "deltacommit", "125"),
            ("130", "commit", "136"), ("140", "rollback", "141"), ("150", "replacecommit", "158")]


@pytest.mark.parametrize("with_version_file", [True, False])
def test_every_row_of_the_latest_snapshot_reads_back(storage, with_version_file):
    """Without `_version_` (a writer between deleting and rewriting it) the highest manifest is read."""
    _history(storage, with_version_file)
    history = LSMHistory(storage, HISTORY)
    assert history.latest_version() == 3
    table = HoodieTable(storage)
    timeline = table.timeline_layout.load_archived_instants(storage, table.config)
    assert [(i.timestamp, i.action, timeline.completion_times[i.timestamp]) for i in timeline] == EXPECTED
    assert all(i.is_completed for i in timeline)


def test_files_outside_the_asked_range_are_not_read(storage):
    _history(storage)
    storage.write(f"{HISTORY}/140_158_0.parquet", b"garbage: must not be opened")
    history = LSMHistory(storage, HISTORY)
    assert history.read(end="136").column("instantTime").to_pylist() == ["100", "110", "120", "130"]
    with pytest.raises(CorruptFileError, match=r"140_158_0\.parquet"):
        history.read(start="137")


def test_no_history_is_an_empty_archived_timeline(storage):
    assert list(LSMHistory(storage, HISTORY).timeline()) == []


@pytest.mark.parametrize(("name", "data", "match"), [
    ("_version_", b"three", "not a version number"),
    ("manifest_3", b"{}", "not a HoodieLSMTimelineManifest"),
    ("manifest_3", b'{"files":[{"fileName":"x.parquet","fileLen":1}]}', "not a <min>_<max>_<layer>.parquet"),
])
def test_a_broken_history_is_named(storage, name, data, match):
    _history(storage)
    storage.write(f"{HISTORY}/{name}", data)
    with pytest.raises(CorruptFileError, match=match):
        LSMHistory(storage, HISTORY).timeline()


def test_the_timeline_command_shows_archived_completion_times(storage, capsys):
    _history(storage)
    assert main(["timeline", storage.base_uri, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["instants"]
    assert [(r["timeline"], r["instant"], r["completion_time"]) for r in rows] == [
        *(("archived", t, c) for t, _, c in EXPECTED), ("active", "200", "201")]


def test_an_instant_archived_without_completion_time_completed_at_its_own_time(storage):
    rows = [*_rows(("100", "105", "commit")), {**_rows(("110", "x", "commit"))[0], "completionTime": None}]
    storage.write(f"{HISTORY}/100_110_0.parquet", _parquet(rows))
    _manifest(storage, 1, ["100_110_0.parquet"])
    assert LSMHistory(storage, HISTORY).timeline().completion_times == {"100": "105", "110": "110"}


def test_the_archived_timeline_counts_without_making_instants(storage):
    """`len` and truth come from the rows; the instants and completion times are made on first use."""
    _history(storage)
    timeline = LSMHistory(storage, HISTORY).timeline()
    assert len(timeline) == 6 and timeline
    assert "instants" not in vars(timeline) and "completion_times" not in vars(timeline)
    assert [(i.timestamp, i.action, timeline.completion_times[i.timestamp]) for i in timeline] == EXPECTED
    assert timeline.last().timestamp == "150" and len(timeline.filter_actions({"commit"})) == 2


def test_rows_out_of_order_read_back_in_hudis_order(storage):
    """Files listed newest first (a compacted layer after a newer L0 file), rows out of order within a
    file and one time under two actions: sorted by time, then action, as Hudi's order."""
    compacted = _rows(*[(t, c, a) for t, a, c in reversed(EXPECTED[:4])])
    storage.write(f"{HISTORY}/100_136_1.parquet", _parquet(compacted))
    storage.write(f"{HISTORY}/140_158_0.parquet", _parquet(_rows(("150", "158", "replacecommit"),
                                                                 ("140", "141", "rollback"),
                                                                 ("140", "142", "clean"))))
    _manifest(storage, 1, ["140_158_0.parquet", "100_136_1.parquet"])
    history = LSMHistory(storage, HISTORY)
    times = ["100", "110", "120", "130", "140", "140", "150"]
    assert history.read().column("instantTime").to_pylist() == times
    assert [(i.timestamp, i.action) for i in history.timeline()] == [
        *((t, a) for t, a, _ in EXPECTED[:4]), ("140", "clean"), ("140", "rollback"),
        ("150", "replacecommit")]


def test_a_history_file_without_a_column_is_named(storage):
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(L0_A, SCHEMA).drop_columns(["action"]), out)
    storage.write(f"{HISTORY}/100_115_0.parquet", out.getvalue())
    _manifest(storage, 1, ["100_115_0.parquet"])
    with pytest.raises(CorruptFileError, match=r"100_115_0\.parquet.*has no column action"):
        LSMHistory(storage, HISTORY).timeline()


@pytest.mark.parametrize("order", ["commit first", "savepoint first", "two files"])
def test_a_time_archived_twice_keeps_its_first_completion_in_hudis_order(storage, order):
    """A savepoint shares its commit's requested time and completes later (no Hudi archiver writes
    one, but a history may hold both rows). The lookup puts if absent in timeline order, as Hudi's
    CompletionTimeQueryViewV2, whatever the rows' order in or across files: the commit's time, never
    the savepoint's; the timeline keeps both instants."""
    commit, savepoint = ("120", "125", "commit"), ("120", "190", "savepoint")
    if order == "two files":
        storage.write(f"{HISTORY}/120_120_0.parquet", _parquet(_rows(savepoint)))
        storage.write(f"{HISTORY}/100_120_0.parquet", _parquet(_rows(("100", "105", "commit"), commit)))
        _manifest(storage, 1, ["120_120_0.parquet", "100_120_0.parquet"])
    else:
        pair = [commit, savepoint] if order == "commit first" else [savepoint, commit]
        storage.write(f"{HISTORY}/100_120_0.parquet", _parquet(_rows(("100", "105", "commit"), *pair)))
        _manifest(storage, 1, ["100_120_0.parquet"])
    history = LSMHistory(storage, HISTORY)
    timeline = history.timeline()
    assert [(i.timestamp, i.action) for i in timeline] == [("100", "commit"), ("120", "commit"),
                                                         ("120", "savepoint")]
    assert timeline.completion_times == {"100": "105", "120": "125"}
    assert [timeline.completion_time(i) for i in timeline] == ["105", "125", "190"]  # each its own
    assert ArchivedCompletionTimes(history).get("120") == "125"
