"""The faces of orphan-file repair: `hudi-assets repair orphans` and
`table.maintenance.remove_orphan_files`."""

from __future__ import annotations

import json
import os
import time

import pytest

from hudi_assets.cli.main import main
from hudi_assets.repair.quarantine import runs
from tests.support.builders import TableBuilder, base_file, ts

MONTH_AGO = time.time() - 30 * 86400


@pytest.fixture
def table(tmp_path) -> tuple[TableBuilder, list[str]]:
    """A table with one committed file and two orphans (a speculative extra, a failed write), all a
    month old, and one fresh orphan the default minimum age keeps."""
    b = TableBuilder(tmp_path / "t").commit(ts(1))
    b.storage.mkdirs(".hoodie/archived")
    orphans = b.files("p1", f"f-{ts(1)}_9-9-9_{ts(1)}.parquet", base_file("failed", ts(2)))
    b.files("p1", base_file("fresh", ts(3)))
    for path in b.root.joinpath("p1").iterdir():
        if "fresh" not in path.name:
            os.utime(path, (MONTH_AGO, MONTH_AGO))
    return b, orphans


def repair(b: TableBuilder, *extra: str) -> int:
    return main(["repair", "orphans", str(b.root), "--engine", "local", *extra])


def test_the_dry_run_prints_counts_per_partition_and_instant(table, capsys):
    b, orphans = table
    assert repair(b, "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"p1 {ts(1)}" in " ".join(out.split()) and f"p1 {ts(2)}" in " ".join(out.split())
    assert "2 orphan files found (dry run: nothing moved), 2 bytes; 1 candidates kept" in out
    assert all((b.root / p).exists() for p in orphans) and not runs(b.storage)


def test_json_names_every_path_with_its_reason(table, capsys):
    b, orphans = table
    assert repair(b, "--dry-run", "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert sorted(o["path"] for o in shown["orphans"]) == sorted(orphans)
    assert all(o["reason"] for o in shown["orphans"])
    assert [k["path"] for k in shown["kept"]] == [f"p1/{base_file('fresh', ts(3))}"]


def test_quarantine_prints_the_run_and_undo_moves_it_back(table, capsys):
    b, orphans = table
    assert repair(b) == 0
    (run,) = runs(b.storage)
    assert f"quarantined in run {run}" in capsys.readouterr().out
    assert not any((b.root / p).exists() for p in orphans)
    assert repair(b, "--undo", run) == 0
    assert all((b.root / p).exists() for p in orphans) and not runs(b.storage)


def test_purge_needs_its_age_and_delete_removes(table, capsys):
    b, orphans = table
    assert repair(b, "--purge-quarantine") == 2
    assert "--quarantined-before" in capsys.readouterr().err
    assert repair(b, "--delete", "--undo", "x") == 2
    assert repair(b, "--delete") == 0
    assert not any((b.root / p).exists() for p in orphans)
    assert (b.root / "p1" / base_file("fresh", ts(3))).exists()


def test_refusals_exit_2_and_move_nothing(table, capsys):
    b, orphans = table
    assert repair(b, "--max-orphans", "1") == 2
    assert "2 orphan files found, more than the maximum of 1" in capsys.readouterr().err
    assert repair(b, "--min-age", "1m") == 2
    assert "heartbeat expiry" in capsys.readouterr().err
    assert repair(b, "--undo", "20240101000000000") == 2
    assert "no quarantine run" in capsys.readouterr().err
    assert all((b.root / p).exists() for p in orphans)


def test_the_python_api_returns_one_result_type(table):
    b, orphans = table
    maintenance = b.table().maintenance
    listed = maintenance.remove_orphan_files(dry_run=True, engine="local")
    assert listed.dry_run and sorted(o.path for o in listed.orphans) == sorted(orphans)
    done = maintenance.remove_orphan_files(engine="local")
    assert type(done) is type(listed) and not done.dry_run and done.run in runs(b.storage)
