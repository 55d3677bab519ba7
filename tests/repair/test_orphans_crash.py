"""SIGKILL during quarantine, undo and purge: the next run completes, and at every kill each orphan
is either in place or in the quarantine with its manifest line."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from hudi_assets.repair.quarantine import read_manifest, run_folder, runs
from tests.repair.test_orphans import LATER, repair, snapshot
from tests.support.builders import TableBuilder, base_file, ts

KILL = Path(__file__).parents[1] / "support" / "kill_repair.py"


def killed(b: TableBuilder, action: str, step: str, offset: float = LATER) -> None:
    done = subprocess.run([sys.executable, str(KILL), str(b.root), str(offset), action, step],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr


def nothing_lost(b: TableBuilder, orphans: list[str]) -> None:
    listed = {run: {o.path for o in read_manifest(b.storage, run)} for run in runs(b.storage)
              if (b.root / run_folder(run) / "_manifest.jsonl").exists()}
    for path in orphans:
        if not (b.root / path).exists():
            assert any(path in paths and (b.root / run_folder(run) / path).exists()
                       for run, paths in listed.items()), path


@pytest.fixture
def table(tmp_path) -> tuple[TableBuilder, list[str]]:
    b = TableBuilder(tmp_path / "t").commit(ts(1))
    b.storage.mkdirs(".hoodie/archived")
    orphans = b.files("p1", *(base_file(f"o{i}", ts(2 + i)) for i in range(4)))
    orphans += b.files("p2", base_file("o9", ts(9)))
    return b, orphans


@pytest.mark.parametrize("step", ["ORPHANS_MANIFEST_WRITTEN", "ORPHAN_MOVED:1", "ORPHAN_MOVED:3",
                                  "ORPHAN_MOVED:5"])
def test_a_killed_quarantine_is_finished_by_the_next_run(table, step):
    b, orphans = table
    before = snapshot(b.root)
    killed(b, "quarantine", step)
    nothing_lost(b, orphans)
    repair(b.table()).quarantine()
    (run,) = runs(b.storage)
    assert not any((b.root / p).exists() for p in orphans)
    repair(b.table()).undo(run)
    assert snapshot(b.root) == before and not runs(b.storage)


@pytest.mark.parametrize("step", ["ORPHANS_UNDO_MARKED", "ORPHAN_MOVED:2", "ORPHAN_MOVED:5"])
def test_a_killed_undo_is_finished_by_the_next_run(table, step):
    b, orphans = table
    before = snapshot(b.root)
    run = repair(b.table()).quarantine().run
    killed(b, f"undo:{run}", step)
    nothing_lost(b, orphans)
    repair(b.table()).plan()  # a dry run changes nothing
    repair(b.table()).quarantine()  # finishes the undo first, then quarantines anew
    for again in runs(b.storage):
        repair(b.table()).undo(again)
    assert snapshot(b.root) == before and not runs(b.storage)


def test_a_killed_purge_is_finished_by_the_next_purge(table):
    b, orphans = table
    run = repair(b.table()).quarantine().run
    killed(b, "purge:30", "ORPHANS_PURGED", offset=LATER + 31 * 86400)
    assert (b.root / run_folder(run)).exists()
    assert repair(b.table(), clock_offset=LATER + 31 * 86400).purge(timedelta(days=30)).runs == (run,)
    assert not runs(b.storage) and not any((b.root / p).exists() for p in orphans)


def test_a_run_killed_before_its_manifest_leaves_a_folder_the_next_run_drops(table):
    b, _ = table
    b.write({f"{run_folder('20240301000000000')}/.tmp-0123": b"half a manifest"})
    assert repair(b.table()).resume() == ["20240301000000000"]
    run = repair(b.table()).quarantine().run
    assert run != "20240301000000000" and runs(b.storage) == [run]  # the half-made run is gone
