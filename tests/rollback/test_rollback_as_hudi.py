"""Details of Hudi 0.15's rollback the demo tables pin: a delete that fails keeps the rollback
inflight, `.crc` sidecars go with listed files, the command-block log file gets an APPEND marker,
heartbeats go only under LAZY, and a requested rollback whose plan cannot be read is dropped."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from support.failed_tables import expected_rows, marker_folder, read_rows

from hudi_assets.cli import main
from hudi_assets.exceptions import DeleteFailedError
from hudi_assets.heartbeat import heartbeat_path
from hudi_assets.table import HoodieTable

LAZY = "hoodie.cleaner.policy.failed.writes=LAZY"


def _hoodie(demo) -> Path:
    return Path(demo.base_path) / ".hoodie"


def _state_files(demo, instant: str) -> list[str]:
    return sorted(p.name for p in _hoodie(demo).glob(f"{instant}.*"))


def _immutable(path: Path, on: bool) -> None:
    """chattr +i: the file cannot be deleted, even by root (a real EPERM from the filesystem)."""
    done = subprocess.run(["chattr", "+i" if on else "-i", str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("chattr +i is not available on this filesystem")


def _rollback(face: str, demo) -> int:
    if face == "cli":
        return main(["rollback", demo.base_path, demo.failed_instant])
    if face == "lazy_cli":
        return main(["clean", demo.base_path, "--engine", "local", "--hoodie-conf", LAZY])
    try:
        HoodieTable(demo.base_path).maintenance.rollback(demo.failed_instant)
    except DeleteFailedError:
        return 1
    return 0


@pytest.mark.parametrize("face", ["cli", "api", "lazy_cli"])
def test_failed_delete_keeps_the_rollback_inflight_and_the_next_run_retries(failed_table, capsys, face):
    demo = failed_table()
    stuck = Path(demo.base_path) / next(f for f in demo.failed_files if f.endswith(".parquet"))
    failed_state = _state_files(demo, demo.failed_instant)
    _immutable(stuck, True)
    try:
        assert _rollback(face, demo) == 1
    finally:
        _immutable(stuck, False)
    if face != "api":
        assert stuck.name in capsys.readouterr().err
    assert _state_files(demo, demo.failed_instant) == failed_state  # the write is still pending
    [inflight] = _hoodie(demo).glob("*.rollback.inflight")
    assert not (_hoodie(demo) / inflight.name.replace(".inflight", "")).exists()

    assert _rollback(face, demo) == 0  # the pending rollback is resumed
    assert not stuck.exists() and not _state_files(demo, demo.failed_instant)
    assert (_hoodie(demo) / inflight.name.replace(".inflight", "")).exists()
    assert read_rows(demo.base_path) == expected_rows(demo)


def test_listing_rollback_takes_the_crc_sidecars_of_the_files_it_deletes(failed_table):
    demo = failed_table(layout="none")
    base = Path(demo.base_path)
    failed = base / next(f for f in demo.failed_files if f.endswith(".parquet"))
    sidecar = failed.parent / f".{failed.name}.crc"
    sidecar.write_bytes(b"crc")
    committed = next(p for p in failed.parent.glob("*.parquet") if demo.failed_instant not in p.name)
    kept = committed.parent / f".{committed.name}.crc"
    kept.write_bytes(b"crc")
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 0
    assert not failed.exists() and not sidecar.exists()
    assert kept.exists() and committed.exists()
    assert read_rows(demo.base_path) == expected_rows(demo)


def test_rollback_log_file_has_an_append_marker_under_the_rollback_instant(failed_table):
    demo = failed_table("MERGE_ON_READ")
    [done] = HoodieTable(demo.base_path).maintenance.rollback(demo.failed_instant).executed
    base = Path(demo.base_path)
    [written] = [p.relative_to(base) for p in base.rglob(".*.log.*_1-0-1")]
    marker = _hoodie(demo) / ".temp" / done.rollback_instant / f"{written}.marker.APPEND"
    assert marker.exists()
    assert not marker_folder(demo).exists()  # the failed write's own markers are gone
    assert read_rows(demo.base_path) == expected_rows(demo)


@pytest.mark.parametrize(("policy", "kept"), [("EAGER", True), ("LAZY", False)])
def test_heartbeat_is_deleted_only_under_lazy(failed_table, policy, kept):
    demo = failed_table()
    beat = Path(demo.base_path) / heartbeat_path(demo.failed_instant)
    beat.parent.mkdir(parents=True, exist_ok=True)
    beat.write_bytes(b"")
    old = time.time() - 3600
    os.utime(beat, (old, old))
    conf = f"hoodie.cleaner.policy.failed.writes={policy}"
    assert main(["rollback", demo.base_path, demo.failed_instant, "--hoodie-conf", conf]) == 0
    assert beat.exists() == kept
    assert read_rows(demo.base_path) == expected_rows(demo)


def test_corrupt_requested_rollback_is_dropped_and_an_inflight_one_skipped(failed_table):
    demo = failed_table()
    hoodie = _hoodie(demo)
    (hoodie / "20250101000000000.rollback.requested").write_bytes(b"not avro")
    (hoodie / "20250101000000001.rollback.requested").write_bytes(b"not avro")
    (hoodie / "20250101000000001.rollback.inflight").write_bytes(b"")
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 0
    assert not (hoodie / "20250101000000000.rollback.requested").exists()
    assert (hoodie / ".aux" / "hudi-assets" / "discarded" / "20250101000000000.rollback.requested").exists()
    assert (hoodie / "20250101000000001.rollback.inflight").exists()  # may have deleted files: kept
    assert not _state_files(demo, demo.failed_instant)
    assert read_rows(demo.base_path) == expected_rows(demo)


def test_corrupt_requested_rollback_that_cannot_be_removed_is_skipped(failed_table, immutable, caplog):
    """getPendingRollbackInfos drops an unreadable requested plan; when its state file cannot be
    deleted, the plan is skipped with a warning and the run goes on (the next run retries)."""
    demo = failed_table()
    corrupt = _hoodie(demo) / "20250101000000000.rollback.requested"
    corrupt.write_bytes(b"not avro")
    immutable(corrupt)
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 0
    assert corrupt.exists()
    assert "cannot remove" in caplog.text and corrupt.name in caplog.text
    assert not _state_files(demo, demo.failed_instant)
    assert read_rows(demo.base_path) == expected_rows(demo)
