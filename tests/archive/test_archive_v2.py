"""TimelineArchiverV2 (Hudi 1.x tables, versions 8 and 9): selection, rows, deletes, the LSM history
over many archivals, crash safety and the command line."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from support.builders import TableBuilder, completion_time, ts
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets.archive import ArchiveConfig, HoodieTimelineArchiver
from hudi_assets.archive.archiver_v2 import TimelineArchiverV2
from hudi_assets.clean.config import CleanConfig
from hudi_assets.cli import main
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.history import LSMHistory, lsm_instant_schema, manifest_text
from hudi_assets.timeline.instant import Instant, State
from hudi_assets.timeline.report import timeline_rows

HISTORY = ".hoodie/timeline/history"
SMALL = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3),
                      timeline_compaction_batch_size=2)
CONF = ["--hoodie-conf", "hoodie.keep.min.commits=5", "--hoodie-conf", "hoodie.keep.max.commits=8",
        "--hoodie-conf", "hoodie.cleaner.commits.retained=3",
        "--hoodie-conf", "hoodie.timeline.compaction.batch.size=2"]


def half(n: int) -> str:
    """An instant time half a second after ts(n) (17 digits, before ts(n + 1))."""
    return ts(n)[:-3] + "500"


def _archiver(root: Path, config: ArchiveConfig = SMALL) -> TimelineArchiverV2:
    return TimelineArchiverV2(HoodieTable(str(root)), config)


def _rows(root: Path) -> list[dict]:
    history = LSMHistory(HoodieTable(str(root)).storage, HISTORY)
    return history.read(columns=lsm_instant_schema().names).to_pylist()


def _counts(root: Path) -> Counter:
    """(time, comparable action) of every completed instant, active or archived, raw rows counted."""
    table = HoodieTable(str(root))
    active = Counter(i.comparable_key for i in table.reload_timeline().filter_completed())
    archived = Counter(Instant(r["instantTime"], r["action"]).comparable_key
                       for r in _rows(root))
    return active + archived


def _seen(root: Path) -> Counter:
    """(time, comparable action) of the completed instants our timeline report shows."""
    rows = timeline_rows(HoodieTable(str(root)), details=False)
    return Counter(Instant(r["instant"], r["action"]).comparable_key for r in rows
                   if r["state"] == "COMPLETED")


def _originals(root: Path) -> dict[tuple[str, str, State], bytes]:
    timeline = HoodieTable(str(root)).reload_timeline()
    return {(i.timestamp, i.action, i.state): timeline.read_details(i) for i in timeline.raw_instants}


def test_for_table_picks_the_archiver_of_the_layout(tmp_path):
    assert type(HoodieTimelineArchiver.for_table(TableBuilder(tmp_path / "a", version=9).table())) is \
        TimelineArchiverV2
    assert type(HoodieTimelineArchiver.for_table(TableBuilder(tmp_path / "b").table())) is \
        HoodieTimelineArchiver


def test_nothing_is_archived_until_commits_exceed_keep_max(tmp_path):
    b = TableBuilder(tmp_path, version=9)
    for i in range(8):
        b.commit(ts(i))
    for i in range(20):  # 0.15 would archive cleans beyond keep.max on their own; 1.x does not
        b.clean(ts(100 + i), ts(5))
    selection = _archiver(tmp_path).plan()
    assert not selection and "8 completed commits <= max 8" in selection.notes[0]


def test_cleans_and_rollbacks_go_with_the_commits_before_them(tmp_path):
    b = TableBuilder(tmp_path, version=9)
    for i in range(20):
        b.commit(ts(10 * i))
        if i in (3, 14):
            b.clean(ts(10 * i + 1), ts(10 * i - 10))
        if i == 4:
            b.rollback(ts(10 * i + 2), ts(10 * i + 5))
    selection = _archiver(tmp_path).plan()
    assert [i.timestamp for i in selection.commits] == [ts(10 * i) for i in range(15)]
    assert [(i.timestamp, i.action) for i in selection.clean_rollback] == [(ts(31), "clean"),
                                                                            (ts(42), "rollback")]
    assert selection.instants == sorted(selection.instants, key=lambda i: i.sort_key)


def test_the_earliest_fence_by_requested_time_limits_the_commits(tmp_path):
    b = TableBuilder(tmp_path, version=9)
    for i in range(20):
        b.commit(ts(i))
    b.commit(half(7), state=State.INFLIGHT)  # a pending write between ts(7) and ts(8)
    b.savepoint(ts(12))
    # A cleaner without an earliest commit to retain: keep.min stays 5 (the pending write caps
    # KEEP_LATEST_COMMITS's and would raise it).
    config = replace(SMALL, cleaner=CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS"))
    selection = _archiver(tmp_path, config).plan()
    fences = {f.name: f.instant for f in selection.fences}
    assert fences["oldest pending write"] == ts(7) and fences["savepoint"] == ts(12)
    assert [i.timestamp for i in selection.commits] == [ts(i) for i in range(7)]
    beyond = replace(config, archive_beyond_savepoint=True)
    (tmp_path / ".hoodie/timeline" / f"{half(7)}.inflight").unlink()
    (tmp_path / ".hoodie/timeline" / f"{half(7)}.commit.requested").unlink()
    assert [i.timestamp for i in _archiver(tmp_path, beyond).plan().commits] == \
        [ts(i) for i in range(16) if i != 12]


def test_the_metadata_table_fence_goes_by_completion_time(tmp_path):
    """The metadata table compacted at ts(9)+15s: commits requested before it but completed after it
    (30 s after their request) stay."""
    b = TableBuilder(tmp_path, version=9, props={"hoodie.table.metadata.partitions": "files"})
    for i in range(20):
        b.commit(ts(i))
    mdt = TableBuilder(tmp_path / ".hoodie/metadata", "MERGE_ON_READ", partitioned=False, version=9,
                       props={"hoodie.table.name": "t_metadata"})
    mdt.compaction(ts(9)[:-5] + "15000", state=State.COMPLETED)
    selection = _archiver(tmp_path).plan()
    fence = next(f for f in selection.fences if f.name == "metadata table")
    assert fence.instant == ts(9) and completion_time(ts(9)) > ts(9)[:-5] + "15000"
    assert [i.timestamp for i in selection.commits] == [ts(i) for i in range(9)]
    compacted = ts(9)[:-5] + "15000"
    mdt_timeline = tmp_path / ".hoodie/metadata/.hoodie/timeline"
    (mdt_timeline / f"{compacted}_{completion_time(compacted)}.commit").unlink()
    fence = next(f for f in _archiver(tmp_path).plan().fences if f.name == "metadata table")
    assert fence.instant == "" and "no completed compaction" in fence.reason


def test_one_row_per_instant_with_the_state_files_bytes(tmp_path):
    b = TableBuilder(tmp_path, "MERGE_ON_READ", version=9)
    for i in range(12):
        b.commit(ts(i))
    b.compaction(half(2), state=State.COMPLETED)
    b.clean(half(3), ts(5))
    b.clustering(half(4), state=State.COMPLETED)
    (tmp_path / ".hoodie/.temp" / ts(0)).mkdir(parents=True)
    originals = _originals(tmp_path)
    config = replace(SMALL, max_delta_commits=1)
    result = _archiver(tmp_path, config).archive()
    assert result.markers_removed == 1 and not (tmp_path / ".hoodie/.temp" / ts(0)).exists()
    rows = {r["instantTime"]: r for r in _rows(tmp_path)}
    assert list(rows) == sorted(rows) and len(rows) == result.records_written
    for t, row in rows.items():
        completed = next(k for k in originals if k[0] == t and k[2] is State.COMPLETED)
        assert row["action"] == completed[1] and row["version"] == 1
        assert row["completionTime"] == completion_time(t)
        assert row["metadata"] == originals[completed]
    assert rows[half(2)]["action"] == "commit"  # a compaction completes as a commit
    assert rows[half(2)]["plan"] == originals[(half(2), "compaction", State.REQUESTED)]
    assert rows[half(3)]["plan"] == originals[(half(3), "clean", State.REQUESTED)]
    assert rows[half(4)]["plan"] == originals[(half(4), "replacecommit", State.REQUESTED)]
    assert rows[ts(0)]["plan"] is None
    assert not any(k[0] in rows for k in _originals(tmp_path))


def test_pending_states_are_deleted_first_then_completed_ones_ascending(tmp_path, monkeypatch):
    b = TableBuilder(tmp_path, version=9)
    for i in range(12):
        b.commit(ts(i))
        if i == 2:
            b.clean(half(2), ts(1))
    archiver = _archiver(tmp_path)
    deleted: list[str] = []
    real = archiver.storage.delete_many

    def recording(paths):
        paths = list(paths)
        deleted.extend(p for p in paths if "/timeline/" in p and "/history/" not in p)
        return real(paths)

    monkeypatch.setattr(archiver.storage, "delete_many", recording)
    archiver.archive()
    names = [p.rpartition("/")[2] for p in deleted]
    pending = [n for n in names if n.endswith((".requested", ".inflight"))]
    assert names[:len(pending)] == pending and len(pending) == 2 * 8
    completed = names[len(pending):]
    assert completed == sorted(completed) and len(completed) == 8


def test_thirty_archivals_compact_up_to_layer_two_and_keep_every_instant_once(tmp_path):
    """The done-when run (fast lane): 30 archivals with batch.size=2, every completed instant once in
    active + history (raw rows), rows' bytes equal the state files', every manifest the Jackson text of
    its list, every compacted file's rows the rows of the files it replaced."""
    b = TableBuilder(tmp_path, version=9)
    originals: dict[tuple[str, str, State], bytes] = {}
    layers_seen: set[int] = set()
    n = 0
    history = LSMHistory(HoodieTable(str(tmp_path)).storage, HISTORY)
    for _ in range(30):
        for _ in range(4):
            b.commit(ts(n))
            n += 1
        if n % 8 == 0:
            b.clean(half(n - 1), ts(n - 6))
        originals.update(_originals(tmp_path))
        result = _archiver(tmp_path).archive()
        # The sources of this run's compactions are listed by snapshots the cleaning keeps.
        for name, sources in (result.compaction.merged if result.compaction else {}).items():
            assert history.read_file(name).to_pylist() == \
                [r for s in sources for r in history.read_file(s).to_pylist()]
        layers_seen |= {f.layer for f in history.files()}
        for version in history.snapshot_versions():
            text = (tmp_path / HISTORY / f"manifest_{version}").read_text()
            assert text == manifest_text(history.manifest(version))
        counts = _counts(tmp_path)
        assert set(counts.values()) == {1}
    assert {0, 1, 2} <= layers_seen
    every = {Instant(t, a).comparable_key for t, a, s in originals if s is State.COMPLETED}
    assert set(_counts(tmp_path)) == every
    for row in _rows(tmp_path):
        completed = next(k for k in originals if k[0] == row["instantTime"] and k[2] is State.COMPLETED)
        assert row["metadata"] == originals[completed]
        if row["action"] == "clean":
            assert row["plan"] == originals[(row["instantTime"], "clean", State.REQUESTED)]


def test_an_instant_a_crashed_run_archived_is_deleted_not_written_again(tmp_path):
    b = TableBuilder(tmp_path, version=9)
    for i in range(12):
        b.commit(ts(i))
    first = _archiver(tmp_path).plan()
    keep = {f.name: f.read_bytes() for f in (tmp_path / ".hoodie/timeline").iterdir() if f.is_file()}
    _archiver(tmp_path).archive(selection=first)
    for name, data in keep.items():  # as if the run had crashed before its deletes
        (tmp_path / ".hoodie/timeline" / name).write_bytes(data)
    for i in range(12, 16):
        b.commit(ts(i))
    result = _archiver(tmp_path).archive()
    assert result.archived_before == 7 and result.records_written == 4
    assert set(_counts(tmp_path).values()) == {1}


@pytest.mark.parametrize("step", ["LSM_FILE_WRITTEN", "LSM_MANIFEST_WRITTEN", "LSM_VERSION_DELETED",
                                  "ARCHIVE_DELETING_COMPLETED", "LSM_COMPACTED_FILE_WRITTEN", "LSM_CLEANING"])
def test_sigkill_then_next_run_completes(tmp_path, step):
    b = TableBuilder(tmp_path, version=9)
    n = 0
    for _ in range(5):  # a history with files to compact and snapshots to clean
        for _ in range(4):
            b.commit(ts(n))
            n += 1
        _archiver(tmp_path).archive()
    for _ in range(4):
        b.commit(ts(n))
        n += 1
    everything = set(_counts(tmp_path))
    assert set(_seen(tmp_path)) == everything
    kill = [sys.executable, str(Path(__file__).parents[1] / "support/kill_archive.py"), str(tmp_path), step,
            *(pair for pair in CONF if pair != "--hoodie-conf")]
    proc = subprocess.run(kill, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert set(_counts(tmp_path)) == everything, "an instant was lost"
    seen = _seen(tmp_path)
    assert set(seen) == everything and set(seen.values()) == {1}
    assert set(Counter(r["instantTime"] for r in _rows(tmp_path)).values()) == {1}
    assert main(["archive", str(tmp_path), *CONF]) == 0
    counts = _counts(tmp_path)
    assert set(counts) == everything and set(counts.values()) == {1}
    assert len(HoodieTable(str(tmp_path)).reload_timeline().filter_completed()) == 5


def test_cli_dry_run_shows_layers_fences_and_a_blocked_compaction(tmp_path, capsys, monkeypatch):
    b = TableBuilder(tmp_path, version=9)
    for i in range(12):
        b.commit(ts(i))
    assert main(["archive", str(tmp_path), *CONF]) == 0
    for i in range(12, 16):
        b.commit(ts(i))
    capsys.readouterr()
    assert main(["archive", str(tmp_path), "--dry-run", *CONF]) == 0
    out = capsys.readouterr().out
    assert "history layer 0: 1 files, 7 instants" in out and "fence oldest pending write: none" in out
    assert "archive " + ts(7) in out
    from hudi_assets.archive import archiver_v2
    real = archiver_v2.layer_summaries
    monkeypatch.setattr(archiver_v2, "layer_summaries",
                        lambda history, batch, target: real(history, 1, 10))
    assert main(["archive", str(tmp_path), "--dry-run", *CONF]) == 0
    out = capsys.readouterr().out
    name = f"{ts(0)}_{ts(6)}_0.parquet"
    assert f"compaction of layer 0 is blocked: {name} is its oldest file" in out and "#17784" in out


def test_two_runs_started_together_archive_each_instant_once(tmp_path):
    """As the v6 lock test: the maintenance lock lets one run work; the other is refused or finds
    nothing left; no instant is lost or archived twice."""
    b = TableBuilder(tmp_path, version=9)
    for i in range(20):
        b.commit(ts(i))
    everything = set(_counts(tmp_path))
    cli = [sys.executable, "-m", "hudi_assets.cli", "archive", str(tmp_path), *CONF]
    procs = [subprocess.Popen(cli, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [p.communicate(timeout=120) for p in procs]
    results = [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs, strict=True)]
    assert sorted(rc for rc, _, _ in results) in ([0, 0], [0, 1]), results
    for rc, _, err in results:
        assert rc == 0 or ("busy" in err and "archive by pid" in err), err
    counts = _counts(tmp_path)
    assert set(counts) == everything and set(counts.values()) == {1}
    assert len(HoodieTable(str(tmp_path)).reload_timeline().filter_completed()) == 5


V9_WITH_MDT = ["sample_table__cow__v9_txns_simple_meta", "sample_table__mor__avro__v9_txns_simple_meta"]


@pytest.mark.parametrize("name", params_or_skip([n for n in table_zips(9) if n in V9_WITH_MDT], "v9 tables"))
def test_hudi_rs_reads_every_commit_from_the_ectr_the_same_after_archiving(tmp_path, name):
    """The time-travel oracle on Java-written v9 tables: hudi-rs reads the table as of every
    completed commit from the cleaner's earliest commit to retain on, before and after archiving.
    (hudi-rs reads no LSM history itself: this shows the archive took nothing those reads need.)"""
    from hudi import HudiReadOptions, HudiTable

    base = unzip_table(name, tmp_path)
    conf = {"hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "5",
            "hoodie.cleaner.commits.retained": "3", "hoodie.compact.inline.max.delta.commits": "1"}
    table = HoodieTable(str(base), hoodie_conf=conf)
    archiver = HoodieTimelineArchiver.for_table(table)
    ectr = archiver.plan().keep.earliest_commit_to_retain
    commits = [i.timestamp for i in table.active_timeline.completed_commits_timeline(table.is_mor)
               if i.timestamp >= ectr]
    assert len(commits) >= 3

    def read_all() -> dict[str, list]:
        hudi = HudiTable(str(base))
        rows = {}
        for t in commits:
            batches = hudi.read(HudiReadOptions().with_as_of_timestamp(t))
            rows[t] = sorted((r["_hoodie_record_key"], r["_hoodie_commit_time"])
                             for b in batches for r in b.to_pylist())
        return rows

    before = read_all()
    result = archiver.archive()
    assert result.records_written > 0 and _counts(base)
    assert read_all() == before


@pytest.mark.large
def test_ten_thousand_commits_in_twenty_archivals(tmp_path):
    """The done-when run of the full lane: 10,000 commits archived 500 at a time with batch.size=2;
    every completed instant once in active + history (raw rows), each row's bytes the state file's,
    every manifest the Jackson text of its list."""
    b = TableBuilder(tmp_path, version=9)
    timeline = tmp_path / ".hoodie/timeline"
    timeline.mkdir()
    meta = b._commit_bytes(CommitMetadata({}, operation_type="UPSERT"))
    config = replace(SMALL, min_commits=20, max_commits=30, cleaner=CleanConfig(commits_retained=10))
    history = LSMHistory(HoodieTable(str(tmp_path)).storage, HISTORY)
    for batch in range(20):
        for i in range(500 * batch, 500 * (batch + 1)):
            t = f"2024{i:013d}"
            (timeline / f"{t}.commit.requested").write_bytes(b"")
            (timeline / f"{t}.inflight").write_bytes(meta)
            (timeline / f"{t}_{t[:-1]}5.commit").write_bytes(meta)
        result = _archiver(tmp_path, config).archive()
        for name, sources in result.compaction.merged.items():
            assert history.read_file(name).to_pylist() == \
                [r for s in sources for r in history.read_file(s).to_pylist()]
    counts = _counts(tmp_path)
    assert len(counts) == 10_000 and set(counts.values()) == {1}
    rows = _rows(tmp_path)
    assert len(rows) == 10_000 - 20 and {r["metadata"] for r in rows} == {meta}
    assert all(r["completionTime"] == r["instantTime"][:-1] + "5" for r in rows)
    assert max(f.layer for f in history.files()) >= 2
    for version in history.snapshot_versions():
        assert (tmp_path / HISTORY / f"manifest_{version}").read_text() == \
            manifest_text(history.manifest(version))


def test_a_metadata_tables_archive_stops_at_its_data_tables_earliest_commit(tmp_path):
    data = TableBuilder(tmp_path, version=9)
    for i in range(5, 25):
        data.commit(ts(i))
    mdt = TableBuilder(tmp_path / ".hoodie/metadata", "MERGE_ON_READ", partitioned=False, version=9,
                       props={"hoodie.table.name": "t_metadata"})
    for i in range(20):
        mdt.commit(ts(i), {}, operation="UPSERT_PREPPED")
    mdt.compaction(half(10), state=State.COMPLETED)
    selection = _archiver(tmp_path / ".hoodie/metadata").plan()
    fence = next(f for f in selection.fences if f.name == "data table")
    assert fence.instant == ts(5) and "earliest commit" in fence.reason
    assert [i.timestamp for i in selection.commits] == [ts(i) for i in range(5)]
