"""The clean under LAZY rolls back failed writes first (expired or missing heartbeat), never a live
one, so a failed write stops pinning the earliest commit to retain; the `rollback` command's refusals."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.builders import TableBuilder, base_file, ts

from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.config import WriteConfig
from hudi_assets.engine import LocalEngine
from hudi_assets.heartbeat import HeartbeatConfig, heartbeat_path, is_heartbeat_expired
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import State

FAILED = ts(2)


def _with_failed_commit(root: Path, **props: str) -> TableBuilder:
    """Commits 1..8 each rewriting file group `a`; commit 2 failed (inflight, no markers)."""
    builder = TableBuilder(root, props=props)
    for n in range(1, 9):
        builder.commit(ts(n), {"p": [base_file("a", ts(n))]},
                       state=State.INFLIGHT if ts(n) == FAILED else State.COMPLETED)
    return builder


def _beat(builder: TableBuilder, age_ms: int) -> None:
    path = builder.root / heartbeat_path(FAILED)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    moment = time.time() - age_ms / 1000
    os.utime(path, (moment, moment))


def _clean(builder: TableBuilder, policy: str):
    table = HoodieTable(str(builder.root))
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, {
        "hoodie.cleaner.policy.failed.writes": policy, "hoodie.cleaner.commits.retained": "2"}))
    return Cleaner(table, config, LocalEngine()).clean()


def _pending(builder: TableBuilder) -> bool:
    return (builder.root / ".hoodie" / f"{FAILED}.inflight").exists()


@pytest.mark.parametrize("heartbeat", ["none", "expired"])
def test_lazy_clean_rolls_back_the_failed_write_and_unpins_the_ectr(tmp_path, heartbeat):
    builder = _with_failed_commit(tmp_path / "t")
    if heartbeat == "expired":
        _beat(builder, 3 * 60_000)  # older than 2 x 60 s
    result = _clean(builder, "LAZY")
    assert not _pending(builder)
    assert not (builder.root / "p" / base_file("a", FAILED)).exists()
    assert not (builder.root / heartbeat_path(FAILED)).exists()
    assert result.plan is not None and result.plan.ectr_timestamp == ts(7)
    assert len(list((builder.root / ".hoodie").glob("*.rollback"))) == 1


def test_lazy_clean_leaves_a_live_write_alone(tmp_path):
    builder = _with_failed_commit(tmp_path / "t")
    _beat(builder, 1_000)
    result = _clean(builder, "LAZY")
    assert _pending(builder) and (builder.root / "p" / base_file("a", FAILED)).exists()
    assert result.plan is not None and result.plan.ectr_timestamp == ts(1)  # pinned by the live write
    assert not list((builder.root / ".hoodie").glob("*.rollback*"))


def test_eager_clean_never_rolls_back(tmp_path):
    builder = _with_failed_commit(tmp_path / "t")
    _clean(builder, "EAGER")
    assert _pending(builder)
    assert not list((builder.root / ".hoodie").glob("*.rollback*"))


def test_heartbeat_expiry_follows_interval_and_tolerable_misses(tmp_path):
    builder = _with_failed_commit(tmp_path / "t")
    _beat(builder, 25_000)
    storage = HoodieTable(str(builder.root)).storage
    assert not is_heartbeat_expired(storage, FAILED, HeartbeatConfig())
    assert is_heartbeat_expired(storage, FAILED, HeartbeatConfig.from_write_config(WriteConfig.load(
        {}, None, {"hoodie.client.heartbeat.interval_in_ms": "10000",
                   "hoodie.client.heartbeat.tolerable.misses": "2"})))
    assert is_heartbeat_expired(storage, ts(3), HeartbeatConfig())  # no heartbeat file at all


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hudi_assets.cli", "rollback", *args],
                          capture_output=True, text=True, timeout=120)


def _state(builder: TableBuilder) -> list[str]:
    return sorted(str(p.relative_to(builder.root)) for p in builder.root.rglob("*") if p.is_file())


def test_rollback_command_refuses_what_is_not_a_failed_write(tmp_path):
    builder = _with_failed_commit(tmp_path / "t")
    _beat(builder, 1_000)
    before = _state(builder)
    completed = _cli(str(builder.root), ts(3))
    assert completed.returncode == 2 and "not a pending write" in completed.stderr
    live = _cli(str(builder.root), FAILED)
    assert live.returncode == 2 and "live heartbeat" in live.stderr and "--force" in live.stderr
    assert _state(builder) == before
    dry = _cli(str(builder.root), FAILED, "--dry-run", "--force")
    assert dry.returncode == 0 and base_file("a", FAILED) in dry.stdout
    assert _state(builder) == before
    forced = _cli(str(builder.root), FAILED, "--force")
    assert forced.returncode == 0, forced.stderr
    assert not _pending(builder) and not (builder.root / "p" / base_file("a", FAILED)).exists()


def test_rollback_command_refuses_metadata_partitions_without_a_metadata_table(tmp_path):
    builder = _with_failed_commit(tmp_path / "t", **{"hoodie.table.metadata.partitions": "files"})
    before = _state(builder)
    proc = _cli(str(builder.root), FAILED)
    assert proc.returncode == 2, proc.stderr
    assert ".hoodie/metadata/.hoodie/hoodie.properties is missing" in proc.stderr
    assert _state(builder) == before


def test_lazy_clean_reads_the_failed_writes_once(tmp_path, monkeypatch):
    """The clean's check for failed writes is the rollback's list: each pending write's heartbeat is
    looked at once (it was twice: the clean's check, then the rollbacker's own)."""
    builder = _with_failed_commit(tmp_path / "t")
    _beat(builder, 3 * 60_000)
    looked: list[str] = []
    status = Storage.status

    def recording(storage, rel, *args, **kwargs):
        looked.append(rel)
        return status(storage, rel, *args, **kwargs)

    monkeypatch.setattr(Storage, "status", recording)
    _clean(builder, "LAZY")
    assert not _pending(builder)
    assert looked.count(heartbeat_path(FAILED)) == 1
