"""Two `hudi-assets archive` runs on one table: the maintenance lock lets one work, the other is refused.

Without it two runs archived every instant twice and, with merging on, one run's merge recovery
deleted the other's merged file and instants were lost.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support.builders import TableBuilder, ts
from support.lock_tables import hold_maintenance_lock

from hudi_assets.archive import ArchiveConfig, HoodieTimelineArchiver
from hudi_assets.clean.config import CleanConfig
from hudi_assets.exceptions import TableBusyError
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.archived import ArchivedTimeline

CONF = ["--hoodie-conf", "hoodie.keep.min.commits=5", "--hoodie-conf", "hoodie.keep.max.commits=8",
        "--hoodie-conf", "hoodie.cleaner.commits.retained=3"]
MERGE = ["--hoodie-conf", "hoodie.archive.merge.enable=true",
         "--hoodie-conf", "hoodie.archive.merge.files.batch.size=2"]


def _archivable(root: Path, merge: bool) -> TableBuilder:
    """The builder's archivable timeline; with `merge`, one archive file already written and 10
    commits more, so the next run writes a second archive file and merges the two."""
    b = TableBuilder(root).archivable()
    if merge:
        config = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3))
        HoodieTimelineArchiver(b.table(), config).archive()
        for i in range(40, 50):
            b.commit(ts(i))
    return b


def _state_files(table: HoodieTable) -> tuple[Counter, Counter]:
    """(active, archived) state files as (time, action, state), each with how often it occurs."""
    active = Counter((i.timestamp, i.action, i.state.name) for i in table.reload_timeline().raw_instants)
    archived = Counter((e.instant.timestamp, e.instant.action, e.instant.state.name)
                       for e in ArchivedTimeline.load(table).entries())
    return active, archived


def _assert_each_state_file_once(table: HoodieTable, everything: set) -> None:
    active, archived = _state_files(table)
    both = active + archived
    assert set(both) == everything, "a state file was lost or invented"
    assert [k for k, n in both.items() if n > 1] == [], "active and archived, or archived twice"


def _archive_cli(root: Path, conf: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hudi_assets.cli", "archive", str(root), *conf],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


@pytest.mark.parametrize("merge", [False, True], ids=["plain", "merge"])
def test_run_refused_while_the_lock_is_held_changes_nothing(tmp_path, merge):
    b = _archivable(tmp_path, merge)
    active, archived = _state_files(b.table())
    everything = set(active) | set(archived)
    conf = [*CONF, *MERGE] if merge else CONF
    with hold_maintenance_lock(b.table(), "clean"):
        before = _tree(tmp_path)
        proc = _archive_cli(tmp_path, conf)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, (out, err)
        assert "busy" in err and f"clean by pid {os.getpid()}" in err and "Nothing was changed" in err
        assert _tree(tmp_path) == before
    proc = _archive_cli(tmp_path, conf)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (out, err)
    _assert_each_state_file_once(b.table(), everything)
    assert len([k for k in _state_files(b.table())[0] if k[1] == "commit" and k[2] == "COMPLETED"]) == 5
    if merge:
        assert "merged small archive files" in out
        assert [p.name for p in (tmp_path / ".hoodie/archived").glob(".commits_*")] == [
            ".commits_.archive.3_1-0-1"]


@pytest.mark.parametrize("merge", [False, True], ids=["plain", "merge"])
def test_two_runs_started_together_archive_each_instant_once(tmp_path, merge):
    b = _archivable(tmp_path, merge)
    active, archived = _state_files(b.table())
    everything = set(active) | set(archived)
    conf = [*CONF, *MERGE] if merge else CONF
    procs = [_archive_cli(tmp_path, conf) for _ in range(2)]
    outputs = [p.communicate(timeout=120) for p in procs]
    results = [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs, strict=True)]
    assert sorted(rc for rc, _, _ in results) in ([0, 0], [0, 1]), results
    for rc, _, err in results:
        assert rc == 0 or ("busy" in err and "archive by pid" in err), err
    _assert_each_state_file_once(b.table(), everything)
    assert len([k for k in _state_files(b.table())[0] if k[1] == "commit" and k[2] == "COMPLETED"]) == 5
    if merge:
        assert [p.name for p in (tmp_path / ".hoodie/archived").glob(".commits_*")] == [
            ".commits_.archive.3_1-0-1"]


def test_orchestration_style_selection_made_before_another_run_is_redone(tmp_path):
    b = TableBuilder(tmp_path).archivable()
    config = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3))
    slow = HoodieTimelineArchiver(b.table(), config)
    selection = slow.plan()  # shown first, as the archive_batch asset does
    assert selection
    HoodieTimelineArchiver(b.table(), config).archive()  # another run gets in between
    result = slow.archive(merge=False, selection=selection)
    assert not result.selection and result.archive_file is None


def test_archiver_refuses_while_a_clean_holds_the_lock(tmp_path):
    b = TableBuilder(tmp_path).archivable()
    config = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3))
    with hold_maintenance_lock(b.table(), "clean"):
        with pytest.raises(TableBusyError, match="clean by pid"):
            HoodieTimelineArchiver(b.table(), config).archive()
        with pytest.raises(TableBusyError):
            merging = ArchiveConfig(merge_enable=True, cleaner=CleanConfig())
            HoodieTimelineArchiver(b.table(), merging).merge_small_files()
