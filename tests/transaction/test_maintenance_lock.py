"""hudi-assets' own table lock (`MaintenanceLockProvider`): exclusion, owner report, expiry, dead owners,
renewal, takeover race, S3, re-entrancy per context."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pyarrow.fs as pafs
import pytest
from support.builders import TableBuilder, ts
from support.s3_server import moto_s3

from hudi_assets.exceptions import CorruptFileError, HudiAssetsError, TableBusyError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.transaction import table_lock
from hudi_assets.transaction.lock_manager import ONE_TRY, LockRetries, holding
from hudi_assets.transaction.maintenance_lock import (
    LOCK_FILE,
    LockOwner,
    MaintenanceLockProvider,
    pid_namespace,
)


@pytest.fixture
def table(tmp_path):
    b = TableBuilder(tmp_path)
    for i in range(3):
        b.commit(ts(i))
    return b.table()


def _hold(table: HoodieTable, operation: str, retries: LockRetries = ONE_TRY, **kw):
    """Hold the lock as `table_lock` does, with the provider's timings in `kw`, not re-entrant."""
    return holding(MaintenanceLockProvider(table.storage, operation, **kw), retries)


def _take(table: HoodieTable, operation: str = "archive", **kw) -> None:
    """Acquire and release at once (or raise)."""
    with _hold(table, operation, **kw):
        pass


def _tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def _write_lock(root: Path, owner: LockOwner) -> None:
    (root / LOCK_FILE).write_bytes(owner.encode())


def _owner(**changes) -> LockOwner:
    now = time.time()
    fields = {"host": "other-host", "pid": 4242, "pid_namespace": None, "operation": "clean",
              "acquired": now - 60, "expires": now + 300, "token": "t" * 32, **changes}
    return LockOwner(**fields)


def test_acquire_writes_owner_and_release_deletes(table, tmp_path):
    with _hold(table, "archive") as lock:
        written = json.loads((tmp_path / LOCK_FILE).read_text())
        assert written["host"] == socket.gethostname() and written["pid"] == os.getpid()
        assert written["operation"] == "archive" and written["token"] == lock.ours.token
        assert written["acquired"] < written["expires"]
        lock.check_held()
    assert not (tmp_path / LOCK_FILE).exists()
    assert not [p for p in (tmp_path / ".hoodie/.aux").iterdir()], "no claim or temp file left"


def test_second_acquirer_is_refused_naming_the_owner_and_changes_nothing(table, tmp_path):
    with _hold(table, "clean"):
        before = _tree(tmp_path)
        with pytest.raises(TableBusyError) as busy:
            _take(table)
        assert _tree(tmp_path) == before
    message = str(busy.value)
    assert "busy" in message and f"pid {os.getpid()}" in message and socket.gethostname() in message
    assert "clean by" in message and "since" in message and "expires" in message
    assert LOCK_FILE in message


def test_wait_gets_the_lock_once_the_holder_releases(table):
    held = threading.Event()

    def hold() -> None:
        with _hold(table, "clean"):
            held.set()
            time.sleep(0.3)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    started = time.monotonic()
    with _hold(table, "archive", LockRetries(0, 200, 50)):
        assert 0.1 < time.monotonic() - started < 5
    holder.join()


def test_released_when_the_block_raises(table, tmp_path):
    with pytest.raises(RuntimeError, match="boom"), _hold(table, "archive"):
        raise RuntimeError("boom")
    assert not (tmp_path / LOCK_FILE).exists()
    _take(table)


def test_expired_lock_is_taken_over(table, tmp_path):
    stale = _owner(expires=time.time() - 1)
    _write_lock(tmp_path, stale)
    with _hold(table, "archive") as lock:
        assert LockOwner.decode((tmp_path / LOCK_FILE).read_bytes()).token == lock.ours.token != stale.token
    assert sorted(p.name for p in (tmp_path / ".hoodie/.aux").iterdir()) == []


def test_live_lock_of_another_host_is_not_taken_over_even_if_its_pid_is_free_here(table, tmp_path):
    _write_lock(tmp_path, _owner(pid=_dead_pid()))
    with pytest.raises(TableBusyError, match="on host other-host"):
        _take(table)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_lock_of_a_dead_process_on_this_host_is_taken_over(table, tmp_path):
    dead = _owner(host=socket.gethostname(), pid=_dead_pid(), pid_namespace=pid_namespace())
    _write_lock(tmp_path, dead)
    with _hold(table, "archive") as lock:
        assert LockOwner.decode((tmp_path / LOCK_FILE).read_bytes()).token == lock.ours.token


def test_unreadable_lock_blocks_until_its_mtime_plus_expiry(table, tmp_path):
    path = tmp_path / LOCK_FILE
    path.write_bytes(b"not json")
    with pytest.raises(TableBusyError, match="unreadable lock file"):
        _take(table)
    old = time.time() - 600
    os.utime(path, (old, old))
    with _hold(table, "archive") as lock:
        assert LockOwner.decode(path.read_bytes()).token == lock.ours.token


def test_renewal_keeps_a_long_holder_past_the_initial_expiry(table, tmp_path):
    with _hold(table, "archive", expiry_seconds=1.0, renew_interval_seconds=0.2) as lock:
        first_expiry = lock.ours.expires
        time.sleep(2.0)
        lock.check_held()
        assert LockOwner.decode((tmp_path / LOCK_FILE).read_bytes()).expires > first_expiry + 1.0
        with pytest.raises(TableBusyError):
            _take(table, "clean", expiry_seconds=1.0, renew_interval_seconds=0.2)
    assert not (tmp_path / LOCK_FILE).exists()


def test_a_holder_that_lost_its_lock_stops_and_leaves_the_new_owners_lock(table, tmp_path):
    other = _owner()
    with _hold(table, "archive") as lock:
        _write_lock(tmp_path, other)  # as if it had expired and been taken over
        with pytest.raises(HudiAssetsError, match="lost the maintenance lock"):
            lock.check_held()
    assert LockOwner.decode((tmp_path / LOCK_FILE).read_bytes()).token == other.token


def test_a_run_that_read_the_stale_lock_before_the_takeover_leaves_the_new_lock(table, tmp_path):
    stale = _owner(expires=time.time() - 1)
    _write_lock(tmp_path, stale)
    late = MaintenanceLockProvider(table.storage, "clean", 300, 60)  # read `stale`, then was descheduled
    with _hold(table, "archive") as winner:
        assert not late._take_over(stale)
        winner.check_held()
    assert [p.name for p in (tmp_path / ".hoodie/.aux").iterdir()] == []


def test_a_fresh_takeover_claim_blocks_and_an_abandoned_one_does_not(table, tmp_path):
    stale = _owner(expires=time.time() - 1)
    _write_lock(tmp_path, stale)
    claim = tmp_path / f"{LOCK_FILE}.takeover-{stale.token}.1"
    claim.write_bytes(b"")
    with pytest.raises(TableBusyError, match="another run is taking it over"):
        _take(table)
    old = time.time() - 600  # its claimant crashed long ago
    os.utime(claim, (old, old))
    with _hold(table, "archive") as lock:
        assert LockOwner.decode((tmp_path / LOCK_FILE).read_bytes()).token == lock.ours.token
    assert [p.name for p in (tmp_path / ".hoodie/.aux").iterdir()] == []


CONTENDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from hudi_assets.exceptions import TableBusyError
    from hudi_assets.table import HoodieTable
    from hudi_assets.transaction import table_lock

    table, start, done = HoodieTable(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    print("ready", flush=True)
    while not start.exists():
        time.sleep(0.0005)
    try:
        with table_lock(table, "archive"):
            print("won", flush=True)
            while not done.exists():
                time.sleep(0.01)
    except TableBusyError:
        print("busy", flush=True)
""")


@pytest.mark.parametrize("stale_by", ["expiry", "dead pid"])
def test_takeover_race_has_exactly_one_winner(table, tmp_path, stale_by):
    for round_ in range(4):
        stale = (_owner(expires=time.time() - 1) if stale_by == "expiry" else
                 _owner(host=socket.gethostname(), pid=_dead_pid(), pid_namespace=pid_namespace()))
        _write_lock(tmp_path, stale)
        start, done = tmp_path / f"start-{round_}", tmp_path / f"done-{round_}"
        procs = [subprocess.Popen([sys.executable, "-c", CONTENDER, str(tmp_path), str(start), str(done)],
                                  stdout=subprocess.PIPE, text=True) for _ in range(8)]
        try:
            assert [p.stdout.readline().strip() for p in procs] == ["ready"] * 8
            start.touch()
            outcomes = [p.stdout.readline().strip() for p in procs]
        finally:
            done.touch()
            for p in procs:
                p.wait(timeout=60)
        assert sorted(outcomes) == ["busy"] * 7 + ["won"], outcomes
        assert not (tmp_path / LOCK_FILE).exists()
        assert [p.name for p in (tmp_path / ".hoodie/.aux").iterdir()] == []


@pytest.mark.s3
def test_on_s3_the_lock_is_written_and_released_with_a_warning(caplog):
    with moto_s3() as options:
        pafs.S3FileSystem(**options, allow_bucket_creation=True).create_dir("locks")
        storage = Storage("s3://locks/tables/t", options)
        write_table_config(storage, {"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE",
                                     "hoodie.table.version": "6"})
        table = HoodieTable(storage)
        with (caplog.at_level(logging.WARNING, logger="hudi_assets.transaction.maintenance_lock"),
              _hold(table, "clean") as lock):
            assert LockOwner.decode(storage.read(LOCK_FILE)).token == lock.ours.token
            lock.check_held()
            with pytest.raises(TableBusyError, match="clean by pid"):
                _take(table)
        assert not storage.exists(LOCK_FILE)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("s3://locks/tables/t/.hoodie/.aux/hudi-assets.lock" in w and "cannot keep" in w
               for w in warnings), warnings


def test_two_threads_on_one_table_exclude_each_other(table):
    """Re-entrancy is per context: a thread does not inherit another thread's lock."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with table_lock(table, "clean"):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        with pytest.raises(TableBusyError, match=f"clean by pid {os.getpid()}"), table_lock(table, "archive"):
            pytest.fail("a second thread entered the block while the first held the lock")
    finally:
        release.set()
        holder.join()
    with table_lock(table, "archive") as outer, table_lock(table, "clean") as inner:
        assert inner is outer  # within one context a nested step reuses its caller's lock


def _cli_clean(tmp_path: Path) -> int:
    from hudi_assets.cli import main

    return main(["clean", str(tmp_path), "--engine", "local"])


def test_a_lock_file_with_an_impossible_pid_is_unreadable_not_a_traceback(table, tmp_path, capsys):
    owner = json.loads(_owner().encode())
    (tmp_path / LOCK_FILE).write_text(json.dumps(owner).replace('"pid": 4242', '"pid": 1e400'))
    before = _tree(tmp_path)
    with pytest.raises(TableBusyError, match=r"unreadable lock file: not a hudi-assets lock file \(pid inf"):
        _take(table)
    assert _cli_clean(tmp_path) == 1
    err = capsys.readouterr().err
    assert LOCK_FILE in err and "pid inf is not a process id" in err and "Traceback" not in err
    assert _tree(tmp_path) == before


def test_a_directory_at_the_lock_path_is_refused_naming_it(table, tmp_path, capsys):
    (tmp_path / LOCK_FILE).mkdir()
    before = _tree(tmp_path)
    with pytest.raises(CorruptFileError, match=f"{LOCK_FILE}: is a directory, not a lock file"):
        _take(table)
    assert _cli_clean(tmp_path) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / LOCK_FILE}: is a directory" in err and "Errno" not in err
    assert _tree(tmp_path) == before


def test_a_lock_file_nested_too_deep_for_json_is_unreadable_not_a_traceback(table, tmp_path):
    (tmp_path / LOCK_FILE).write_bytes(b"[" * 100_000)
    with pytest.raises(TableBusyError, match="unreadable lock file: not a hudi-assets lock file"):
        _take(table)
