"""A rollback reports done only when the failed write's state files are gone: one that cannot be
deleted fails the run naming it, and the rollback stays pending, to be finished by a rerun."""

from __future__ import annotations

from pathlib import Path

from hudi_assets.cli import main
from hudi_assets.rollback import pending_rollbacks
from hudi_assets.table import HoodieTable


def test_undeletable_inflight_of_the_failed_write_exits_1_naming_it(failed_table, immutable, capsys):
    demo = failed_table("COPY_ON_WRITE")
    hoodie = Path(demo.base_path) / ".hoodie"
    [inflight] = [p for p in hoodie.iterdir() if p.name.startswith(demo.failed_instant)
                  and p.name.endswith(".inflight")]
    immutable(inflight)
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 1
    captured = capsys.readouterr()
    assert "rolled back" not in captured.out and f"{inflight}: could not be deleted" in captured.err
    assert not list(hoodie.glob("*.rollback"))  # not completed: the next run finishes it
    assert demo.failed_instant in pending_rollbacks(HoodieTable(demo.base_path))
