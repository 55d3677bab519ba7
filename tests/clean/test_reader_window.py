"""The reader-safety window (`hudi_assets.cleaner.reader.window`): a file version superseded less than the
window ago (its superseding commit's completion: on table version 6 the completed state file's
modification time) is left out of a new plan, counted by the dry run, and refuses a pending plan that
holds it, before any delete. Off by default, as in Hudi."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime, timedelta

import pytest
from support.builders import TableBuilder, base_file, pending_clean, ts

from hudi_assets.clean import Cleaner, CleanPlanner
from hudi_assets.clean.reader_window import ReaderWindow
from hudi_assets.cli import main
from hudi_assets.exceptions import InvalidConfigError, UnsafePlanError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline.instant import Instant, State
from hudi_assets.timeline.instant_time import format_instant_time, new_instant_time
from hudi_assets.timeline.layout2 import layout2_file_name

VERSIONS = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
HOUR = 3600


def _table(tmp_path):
    """One file group rewritten by three commits: the slice of ts(1) was superseded by ts(2) one hour
    ago, the slice of ts(0) by ts(1) ten hours ago; fileversions.retained=1 plans both."""
    b = TableBuilder(tmp_path / "t")
    for n in range(3):
        b.commit(ts(n), {"p1": [base_file("fg", ts(n))]})
    now = time.time()
    for n, age in ((1, 10 * HOUR), (2, HOUR)):
        os.utime(b.root / ".hoodie" / f"{ts(n)}.commit", (now - age, now - age))
    return b, now


def _cleaner(b: TableBuilder, window: str | None) -> Cleaner:
    conf = {**VERSIONS, **({"hudi_assets.cleaner.reader.window": window} if window else {})}
    return Cleaner.for_table(HoodieTable(str(b.root), hoodie_conf=conf))


def _planned(result) -> list[str]:
    files = result.plan.file_paths_to_delete.values()
    return sorted(f.file_path.rpartition("/")[2] for infos in files for f in infos)


def test_a_version_superseded_an_hour_ago_is_held_under_two_hours_and_cleaned_under_thirty_minutes(tmp_path):
    b, now = _table(tmp_path)
    held = _cleaner(b, "2h").dry_run()
    assert _planned(held) == [base_file("fg", ts(0))]
    assert held.held_back.files == 1
    assert held.held_back.until == pytest.approx(now - HOUR + 2 * HOUR, abs=2)

    result = _cleaner(b, "2h").clean()
    assert result.files_deleted == 1
    assert not (b.root / "p1" / base_file("fg", ts(0))).exists()
    assert (b.root / "p1" / base_file("fg", ts(1))).exists()

    b.commit(ts(3), {"p1": [base_file("other", ts(3))]})  # a clean is due again after a commit
    result = _cleaner(b, "30m").clean()
    assert result.files_deleted == 1 and result.held_back.files == 0
    assert not (b.root / "p1" / base_file("fg", ts(1))).exists()
    assert (b.root / "p1" / base_file("fg", ts(2))).exists()  # the latest version stays


def test_off_by_default_as_in_hudi(tmp_path):
    b, _ = _table(tmp_path)
    result = _cleaner(b, None).dry_run()
    assert _planned(result) == [base_file("fg", ts(0)), base_file("fg", ts(1))]
    assert result.held_back.files == 0


@pytest.mark.parametrize("inflight", [False, True])
def test_a_pending_plan_holding_a_version_within_the_window_is_refused_whole(tmp_path, inflight):
    """The plan Hudi's rules write (what a Java writer would request) is refused before any delete."""
    b, _ = _table(tmp_path)
    table = HoodieTable(str(b.root), hoodie_conf=VERSIONS)
    plan = CleanPlanner(table, Cleaner.for_table(table).config).plan()
    assert plan.total_files == 2
    pending_clean(table, plan, inflight)
    before = sorted(p.name for p in (b.root / "p1").iterdir())
    with pytest.raises(UnsafePlanError) as refused:
        _cleaner(b, "2h").clean()
    assert base_file("fg", ts(1)) in str(refused.value)
    assert "reader window (2h)" in str(refused.value)
    assert sorted(p.name for p in (b.root / "p1").iterdir()) == before  # not even the older file

    assert _cleaner(b, "30m").clean().files_deleted == 2


def test_the_dry_run_says_how_many_and_until_when(tmp_path, capsys):
    b, now = _table(tmp_path)
    args = ["clean", str(b.root), "--engine", "local", "--dry-run", "--hoodie-conf",
            "hudi_assets.cleaner.reader.window=2h", *(f"--hoodie-conf={k}={v}" for k, v in VERSIONS.items())]
    assert main(args) == 0
    out = capsys.readouterr().out
    until = time.strftime("%Y-%m-%d %H:%M", time.gmtime(now + HOUR))
    assert "1 file(s) held back by the reader window, the last until " + until in out
    assert main([*args, "--json"]) == 0
    held = json.loads(capsys.readouterr().out)["held_back_by_reader_window"]
    assert held["files"] == 1 and held["until"].startswith(until.replace(" ", "T"))
    assert main([a for a in args if a != "--dry-run"]) == 0  # the clean itself says so too
    out = capsys.readouterr().out
    assert "1 files deleted" in out and "1 file(s) held back by the reader window" in out


def test_a_window_that_is_not_a_duration_is_refused(tmp_path):
    b, _ = _table(tmp_path)
    with pytest.raises(InvalidConfigError, match=re.escape("hudi_assets.cleaner.reader.window='2 hours'")):
        _cleaner(b, "2 hours")


def test_on_table_versions_8_and_9_the_completion_time_counts_not_the_file_time(tmp_path):
    """Layout 2 names a completed instant by its completion time; the state file's modification time
    (here: now) is not asked."""
    storage = Storage(str(tmp_path / "t"))
    write_table_config(storage, {"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE",
                                 "hoodie.table.version": "9", "hoodie.timeline.layout.version": "2",
                                 "hoodie.table.timeline.timezone": "UTC", "hoodie.timeline.path": "timeline"})
    completed = datetime.now(UTC) - timedelta(hours=1)
    commit = Instant(ts(1), "commit", State.COMPLETED)
    storage.write(f".hoodie/timeline/{commit.with_state(State.REQUESTED).file_name}", b"")
    storage.write(f".hoodie/timeline/{layout2_file_name(commit, format_instant_time(completed))}", b"")
    window = ReaderWindow.of(HoodieTable(storage), 2 * HOUR, datetime.now(UTC))
    assert window.held_until(ts(1)) == pytest.approx(completed.timestamp() + 2 * HOUR, abs=0.01)
    assert ReaderWindow.of(HoodieTable(storage), HOUR // 2, datetime.now(UTC)).held_until(ts(1)) is None


def test_replaced_file_groups_wait_for_the_window_from_their_replace_commit(tmp_path):
    """An insert_overwrite an hour ago replaced group `a` of p1 and all of p2: under a 2 h window none of
    their files goes and p2 stays; under 30 min both go and p2 is deleted."""
    b = TableBuilder(tmp_path / "t")
    b.commit(ts(0), {"p1": [base_file("a", ts(0))], "p2": [base_file("x", ts(0))]})
    b.commit(ts(1), {"p1": [base_file("c", ts(1))]}, replaced={"p1": ["a"], "p2": ["x"]})
    hour_ago = time.time() - HOUR
    os.utime(b.root / ".hoodie" / f"{ts(1)}.replacecommit", (hour_ago, hour_ago))

    held = _cleaner(b, "2h").dry_run()
    assert _planned(held) == [] and held.plan.partitions_to_delete == []
    assert held.held_back.files == 2

    free = _cleaner(b, "30m").dry_run()
    assert _planned(free) == [base_file("a", ts(0)), base_file("x", ts(0))]
    assert free.plan.partitions_to_delete == ["p2"]
    pending_clean(HoodieTable(str(b.root)), free.plan)
    with pytest.raises(UnsafePlanError, match="reader window"):
        _cleaner(b, "2h").clean()
    assert (b.root / "p2" / base_file("x", ts(0))).exists()


def test_an_incremental_clean_comes_back_for_what_the_window_held(tmp_path):
    """Incremental planning scans only the partitions of the commits since the last clean's earliest
    commit to retain; a version held back in p1 by the last clean is still found once its window has
    passed, though no later commit wrote p1."""
    b = TableBuilder(tmp_path / "t")
    for n in range(3):
        b.commit(ts(n), {"p1": [base_file("a", ts(n))]})
    b.commit(ts(3), {"p2": [base_file("x", ts(3))]})
    now = time.time()
    for n in range(4):
        age = HOUR if n == 2 else 10 * HOUR
        os.utime(b.root / ".hoodie" / f"{ts(n)}.commit", (now - age, now - age))
    conf = {"hoodie.cleaner.commits.retained": "1", "hudi_assets.cleaner.reader.window": "2h"}

    first = Cleaner.for_table(HoodieTable(str(b.root), hoodie_conf=conf)).clean()
    assert first.files_deleted == 1 and first.held_back.files == 1  # ts(0)'s goes, ts(1)'s is held
    t = new_instant_time([first.scheduled])
    b.commit(t, {"p2": [base_file("y", t)]})
    later = datetime.now(UTC) + timedelta(hours=2)
    second = Cleaner.for_table(HoodieTable(str(b.root), hoodie_conf=conf), clock=lambda: later).clean()
    assert second.plan.file_paths_to_delete.keys() == {"p1"}
    assert not (b.root / "p1" / base_file("a", ts(1))).exists()
    assert (b.root / "p1" / base_file("a", ts(2))).exists()
