"""Orphan files on Hudi 1.x tables (versions 8 and 9): log files named by the deltacommit that wrote
them, Avro commit metadata, `<t>_<c>.<action>` completed instants, and the LSM history as the archived
timeline whose rows carry the write stats of archived commits."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pytest
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets.archive import ArchiveConfig
from hudi_assets.archive.archiver_v2 import TimelineArchiverV2
from hudi_assets.clean.config import CleanConfig
from hudi_assets.exceptions import HudiInputError
from hudi_assets.fsview import LogFile
from hudi_assets.ownership import load_ownership
from hudi_assets.repair.detection import changed_since
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.history import LSMHistory
from hudi_assets.timeline.instant import State
from tests.repair.test_orphans import repair, snapshot
from tests.support.builders import TableBuilder, base_file, log_file, ts

HISTORY = ".hoodie/timeline/history"
SMALL = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3))


def archived_mor(root) -> tuple[TableBuilder, set[str]]:
    """A v9 merge-on-read table: a base file at ts(0), then one log file per deltacommit, each named
    by the deltacommit that wrote it, archived into the LSM history down to the last few; with every
    data file a completed commit wrote."""
    b = TableBuilder(root, "MERGE_ON_READ", version=9)
    b.commit(ts(0), {"p1": [base_file("g", ts(0))]})
    for i in range(1, 20):
        b.commit(ts(i), {"p1": [log_file("g", ts(i))], "p2": [base_file(f"h{i}", ts(i))]})
    TimelineArchiverV2(b.table(), SMALL).archive()
    committed = {str(p.relative_to(b.root)) for p in b.root.rglob("*")
                 if p.is_file() and ".hoodie" not in p.parts and p.name != ".hoodie_partition_metadata"}
    return b, committed


def test_the_dry_run_names_the_orphans_and_keeps_every_committed_file(tmp_path):
    b, committed = archived_mor(tmp_path / "t")
    archived = set(LSMHistory(b.table().storage, HISTORY).read().column("instantTime").to_pylist())
    assert ts(1) in archived and ts(19) not in archived  # both timelines hold committed files
    orphans = set(b.files("p1",
                          "g_1-9-9_" + ts(2) + ".parquet",        # speculative extra of an archived commit
                          log_file("g", ts(3), version=2),        # extra log file of an archived deltacommit
                          log_file("g", ts(19), version=2),       # ... of an active one
                          f".{log_file('g', ts(19), version=2)}.crc",  # its Hadoop checksum
                          base_file("failed", ts(300)),           # a failed write rolled back (delete-only)
                          log_file("g", ts(301))))                # a failed append, on neither timeline
    found = repair(b.table()).plan()
    assert {o.path for o in found.orphans} == orphans and not found.kept
    reasons = {o.path: o.reason for o in found.orphans}
    extra_log = f"p1/{log_file('g', ts(3), version=2)}"
    assert reasons[extra_log] == f"not listed by the completed deltacommit {ts(3)}"
    assert "neither timeline" in reasons[f"p1/{log_file('g', ts(301))}"]
    # the committed files the plan leaves alone include logs of an archived and of an active commit
    assert {f"p1/{log_file('g', ts(1))}", f"p1/{log_file('g', ts(19))}"} <= committed


def test_archived_write_stats_come_from_the_history_rows(tmp_path):
    """Without the LSM history's rows, files of archived commits would look like orphans."""
    b, committed = archived_mor(tmp_path / "t")
    ownership = load_ownership(b.table())
    assert committed <= set(ownership.written)
    assert ownership.written[f"p1/{log_file('g', ts(1))}"] == ts(1)  # archived, named by its writer
    assert ownership.logs_named_by_writer and ownership.appenders == ()


def test_a_pending_deltacommit_holds_only_its_own_log_files(tmp_path):
    """A later pending deltacommit writes new log files named by itself: it does not hold back an
    older instant's orphan log file, as it must on table version 6."""
    b, _ = archived_mor(tmp_path / "t")
    b.commit(ts(40), {"p1": [log_file("g", ts(40))]}, state=State.INFLIGHT)
    orphan = b.files("p1", log_file("g", ts(18), version=2))[0]
    found = repair(b.table()).plan()
    assert [o.path for o in found.orphans] == [orphan]


def test_a_deltacommit_started_during_the_run_keeps_only_its_own_files(tmp_path):
    b, _ = archived_mor(tmp_path / "t")
    older, own = b.files("p1", log_file("g", ts(18), version=2), log_file("g", ts(41)))
    table = b.table()
    ownership = load_ownership(table)
    found = repair(table).plan()
    assert {o.path for o in found.orphans} == {older, own}
    b.commit(ts(41), {"p1": [log_file("g", ts(41))]}, state=State.INFLIGHT)
    assert set(changed_since(table, ownership, found.orphans)) == {own}


def test_without_a_history_folder_the_history_is_empty_and_older_files_still_refuse(tmp_path):
    """Hudi 1.x creates the history folder at the first archival: a table never archived has none
    (the Java-written tables have none), which is no reason to refuse; a file older than every
    instant the active timeline knows still is."""
    b = TableBuilder(tmp_path / "t", version=9).commit(ts(5)).commit(ts(6))
    assert not (b.root / HISTORY).exists()
    orphan = b.files("p1", base_file("failed", ts(7)))[0]
    assert [o.path for o in repair(b.table()).plan().orphans] == [orphan]
    b.files("p1", base_file("older", ts(1)))
    with pytest.raises(HudiInputError, match="older than every instant"):
        repair(b.table()).quarantine()
    assert (b.root / orphan).exists()


def test_quarantine_then_undo_restores_the_table_byte_for_byte(tmp_path):
    b, committed = archived_mor(tmp_path / "t")
    orphans = set(b.files("p2", base_file("failed", ts(300)), log_file("h5", ts(5), version=3)))
    before = snapshot(b.root)
    done = repair(b.table()).quarantine()
    assert {o.path for o in done.orphans} == orphans and done.run
    assert all((b.root / p).exists() for p in committed) and not any((b.root / p).exists() for p in orphans)
    repair(b.table()).undo(done.run)
    assert snapshot(b.root) == before


def _hudi_rs_rows(base) -> list[dict]:
    hudi = pytest.importorskip("hudi")
    batches = hudi.HudiTable(str(base)).read()
    return sorted(pa.Table.from_batches(batches).to_pylist(), key=lambda r: r["_hoodie_record_key"])


@pytest.mark.parametrize("name", params_or_skip(
    [n for n in table_zips(9) if n.endswith("mor__avro__v9_txns_simple_meta")], "the v9 MOR table with logs"))
def test_a_java_written_v9_table_reads_the_same_rows_through_quarantine_and_undo(name, tmp_path):
    base = unzip_table(name, tmp_path)
    table = HoodieTable(str(base))
    rows = _hudi_rs_rows(base)
    assert repair(table).plan().orphans == ()  # every file a Java commit wrote is owned
    later = str(int(table.active_timeline.last().timestamp) + 1000)  # a failed write after the last commit
    logs = sorted(p for p in base.rglob(".*.log.*") if ".hoodie" not in p.parts)
    bases = sorted(p for p in base.rglob("*.parquet") if ".hoodie" not in p.parts)
    assert logs and bases
    failed_base = bases[0].with_name(bases[0].name.rsplit("_", 1)[0] + f"_{later}.parquet")
    shutil.copyfile(bases[0], failed_base)
    log = LogFile.parse(logs[0].name)
    failed_log = logs[0].with_name(f".{log.file_id}_{later}.log.1_0-1-1")
    shutil.copyfile(logs[0], failed_log)
    before = snapshot(base)
    orphans = {str(p.relative_to(base)) for p in (failed_base, failed_log)}
    planned = repair(HoodieTable(str(base))).plan()
    assert {o.path for o in planned.orphans} == orphans
    done = repair(HoodieTable(str(base))).quarantine()
    assert {o.path for o in done.orphans} == orphans
    assert _hudi_rs_rows(base) == rows
    repair(HoodieTable(str(base))).undo(done.run)
    assert snapshot(base) == before and _hudi_rs_rows(base) == rows
