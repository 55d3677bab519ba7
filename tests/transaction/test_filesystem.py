"""FileSystemBasedLockProvider: Hudi's lock file, its LockInfo text, expiry, refusal on S3, and the
lock manager's retries around it."""

from __future__ import annotations

import json
import logging
import os
import socket
import time

import pytest
from support.builders import TableBuilder, ts
from support.lock_tables import FAST_RETRIES, open_table, tree

from hudi_assets import config_options as opt
from hudi_assets.archive import ArchiveConfig, HoodieTimelineArchiver
from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.clean.config import CleanConfig
from hudi_assets.cli import main
from hudi_assets.exceptions import CorruptFileError, HudiAssetsError, InvalidConfigError, TableBusyError
from hudi_assets.rollback import Rollbacker
from hudi_assets.table import HoodieTable
from hudi_assets.transaction import table_lock
from hudi_assets.transaction.filesystem import FileSystemBasedLockProvider, lock_info
from hudi_assets.transaction.lock_manager import FILESYSTEM_PROVIDER, ONE_TRY, LockRetries, acquire

FS = {"hoodie.write.lock.provider": FILESYSTEM_PROVIDER}
# What a Java writer's FileSystemBasedLockProvider leaves: LockInfo through Jackson's pretty printer.
JAVA_LOCK_INFO = b"""{
  "lockCreateTime" : "2024-06-01 12:00:00.123",
  "lockThreadName" : "pool-7-thread-1",
  "lockStacksInfo" : [ "java.lang.Thread.getStackTrace (Thread.java:1610)", "org.apache.hudi.client.\
transaction.lock.FileSystemBasedLockProvider.initLockInfo (FileSystemBasedLockProvider.java:182)" ]
}"""


def _age(path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_lock_file_holds_lock_info_while_held_and_is_deleted_after(base):
    with table_lock(open_table(base, **FS), "clean"):
        text = (base / ".hoodie" / "lock").read_text()
        assert not (base / ".hoodie/.aux/hudi-assets.lock").exists()
    assert not (base / ".hoodie" / "lock").exists()
    info = json.loads(text)
    assert list(info) == ["lockCreateTime", "lockThreadName", "lockStacksInfo"]
    assert info["lockThreadName"] == f"hudi-assets clean pid {os.getpid()} on host {socket.gethostname()}"
    assert time.strptime(info["lockCreateTime"], "%Y-%m-%d %H:%M:%S.%f")
    assert any("test_lock_file_holds_lock_info" in line for line in info["lockStacksInfo"])


def test_lock_info_is_jacksons_pretty_print():
    lines = lock_info("main").decode().split("\n")
    assert lines[0] == "{" and lines[-1] == "}" and len(lines) == 5
    assert lines[1].startswith('  "lockCreateTime" : "') and lines[2] == '  "lockThreadName" : "main",'
    assert lines[3].startswith('  "lockStacksInfo" : [ "') and lines[3].endswith('" ]')
    assert '", "' in lines[3]  # array values separated by comma and one space, as Jackson does


def test_lock_directory_from_config_as_flinks_default(base):
    conf = {**FS, "hoodie.write.lock.filesystem.path": f"{base}/.hoodie/.aux"}
    with table_lock(open_table(base, **conf), "archive"):
        assert (base / ".hoodie/.aux/lock").exists() and not (base / ".hoodie/lock").exists()
    assert not (base / ".hoodie/.aux/lock").exists()


def test_held_by_a_java_writer_waits_then_fails_naming_it_and_changes_nothing(base):
    lock = base / ".hoodie" / "lock"
    lock.write_bytes(JAVA_LOCK_INFO)
    before = tree(base)
    started = time.monotonic()
    table = open_table(base, **FS, **{"hoodie.write.lock.filesystem.expire": "1"})
    with pytest.raises(TableBusyError) as busy, table_lock(table, "clean"):
        pytest.fail("entered the block while the lock was held")
    assert time.monotonic() - started >= 0.2  # two waits of 100 ms between three tries
    assert "pool-7-thread-1" in str(busy.value) and "2024-06-01 12:00:00.123" in str(busy.value)
    assert str(lock) in str(busy.value) and "3 tries" in str(busy.value)
    assert tree(base) == before


def test_expired_lock_is_deleted_and_taken_over(base):
    lock = base / ".hoodie" / "lock"
    lock.write_bytes(JAVA_LOCK_INFO)
    _age(lock, 61)
    with table_lock(open_table(base, **FS, **{"hoodie.write.lock.filesystem.expire": "1"}), "clean"):
        assert "hudi-assets clean" in lock.read_text()
    assert not lock.exists()


def test_expire_zero_never_expires(base):
    lock = base / ".hoodie" / "lock"
    lock.write_bytes(JAVA_LOCK_INFO)
    _age(lock, 86_400 * 30)
    with pytest.raises(TableBusyError, match="pool-7-thread-1"), table_lock(open_table(base, **FS), "clean"):
        pass
    assert lock.read_bytes() == JAVA_LOCK_INFO


def test_released_when_the_block_raises(base):
    with pytest.raises(RuntimeError, match="boom"), table_lock(open_table(base, **FS), "clean"):
        raise RuntimeError("boom")
    assert not (base / ".hoodie" / "lock").exists()


def test_reentrant_within_a_run(base):
    table = open_table(base, **FS)
    with table_lock(table, "clean") as outer:
        with table_lock(table, "clean") as inner:
            assert inner is outer
        assert (base / ".hoodie" / "lock").exists()
    assert not (base / ".hoodie" / "lock").exists()


def test_a_lock_taken_over_meanwhile_is_reported_lost_and_left_alone(base):
    lock = base / ".hoodie" / "lock"
    with table_lock(open_table(base, **FS), "clean") as held:
        held.check_held()
        lock.write_bytes(JAVA_LOCK_INFO)  # a writer deleted ours as expired and took it
        with pytest.raises(HudiAssetsError, match=r"lost Hudi's lock.*pool-7-thread-1"):
            held.check_held()
    assert lock.read_bytes() == JAVA_LOCK_INFO


def test_heartbeat_keeps_the_modification_time_fresh(base):
    table = open_table(base, **FS, **{"hoodie.write.lock.filesystem.expire": "1"})
    provider = FileSystemBasedLockProvider.from_config(table, "clean")
    lock = base / ".hoodie" / "lock"
    try:
        assert provider.try_lock(0)
        _age(lock, 50)
        assert provider._renew()
        assert time.time() - lock.stat().st_mtime < 5
        _age(lock, 61)  # expired: a writer may delete it any moment; no longer ours to refresh
        assert not provider._renew()
    finally:
        provider.unlock()
        provider.close()


def test_refused_on_s3_as_hudi_refuses_it(base):
    conf = {**FS, "hoodie.write.lock.filesystem.path": "s3://bucket/locks"}
    table = open_table(base, **conf)
    with pytest.raises(InvalidConfigError, match=r"s3://bucket/locks/lock: .*atomic create"), \
            table_lock(table, "clean"):
        pass


def test_retries_as_hudis_lock_manager(base):
    (base / ".hoodie" / "lock").write_bytes(JAVA_LOCK_INFO)
    provider = FileSystemBasedLockProvider.from_config(open_table(base, **FS), "clean")
    sleeps: list[float] = []
    with pytest.raises(TableBusyError, match="5 tries"):
        acquire(provider, LockRetries(wait_time_ms=10, client_num_retries=4,
                                      client_wait_time_ms_between_retry=250), sleeps.append)
    assert sleeps == [0.25] * 4


def test_each_failed_try_logs_how_long_the_remaining_tries_take(base, caplog):
    (base / ".hoodie" / "lock").write_bytes(JAVA_LOCK_INFO)
    provider = FileSystemBasedLockProvider.from_config(open_table(base, **FS), "clean")
    with caplog.at_level(logging.INFO, logger="hudi_assets.transaction.lock_manager"), \
            pytest.raises(TableBusyError, match="gave up after 51 tries"):
        acquire(provider, LockRetries(), lambda _seconds: None)  # Hudi's defaults, without the sleeping
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 50 and "held by thread 'pool-7-thread-1'" in lines[0]
    assert "(1 of 51 tries); retrying 50 more time(s) 5s apart, about 4m1" in lines[0]
    assert "(50 of 51 tries); retrying 1 more time(s) 5s apart, about 5.0s more" in lines[-1]


def test_defaults_are_hudis():
    assert LockRetries() == LockRetries(60_000, 50, 5_000)


def test_an_unset_config_retries_as_hudi_0_15s_lock_manager(base):
    """HoodieLockConfig (hudi-client-common, org.apache.hudi.config): `client.num_retries` 50 since
    0.13.0 (HUDI-5391; 0.11's HUDI-3938 had raised it from 0 to 10), `client.wait_time_ms_between_retry`
    5000 (HUDI-5623, 0.13.0), `wait_time_ms` 60000; unchanged through 0.15 and 1.x."""
    config = HoodieTable(str(base), hoodie_conf=FS).write_config
    assert LockRetries.from_config(config) == LockRetries(60_000, 50, 5_000)
    assert config.get(opt.LOCK_ACQUIRE_NUM_RETRIES) == 15  # LockConfiguration, the providers' own retries
    assert config.get(opt.LOCK_ACQUIRE_RETRY_MAX_WAIT_TIME_MS) == 16_000  # HUDI-5782, 0.14.0


def test_without_a_provider_our_own_lock_is_tried_once(base):
    assert LockRetries.from_config(HoodieTable(str(base)).write_config) == ONE_TRY


def _cli_clean(base, *conf: str) -> int:
    args = ["clean", str(base), "--engine", "local"]
    for pair in (*[f"{k}={v}" for k, v in FAST_RETRIES.items()], "hoodie.cleaner.commits.retained=3", *conf):
        args += ["--hoodie-conf", pair]
    return main(args)


def test_cli_clean_exits_1_naming_the_owner_while_hudis_lock_is_held(demo_base, capsys):
    base = demo_base
    (base / ".hoodie" / "lock").write_bytes(JAVA_LOCK_INFO)
    before = tree(base)
    assert _cli_clean(base, f"hoodie.write.lock.provider={FILESYSTEM_PROVIDER}") == 1
    err = capsys.readouterr().err
    assert "table is busy" in err and "pool-7-thread-1" in err
    assert tree(base) == before


@pytest.mark.parametrize("provider", ["org.apache.hudi.client.transaction.lock.InProcessLockProvider",
                                      "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider"])
def test_cli_refuses_providers_that_cannot_exclude_us(demo_base, capsys, provider):
    base = demo_base
    before = tree(base)
    assert _cli_clean(base, f"hoodie.write.lock.provider={provider}") == 2
    err = capsys.readouterr().err
    assert provider in err
    if "InProcess" in provider:
        assert "cannot exclude" in err
    assert tree(base) == before


def test_cli_clean_takes_and_releases_hudis_lock(demo_base):
    cleans_before = {p.name for p in (demo_base / ".hoodie").glob("*.clean")}
    assert _cli_clean(demo_base, f"hoodie.write.lock.provider={FILESYSTEM_PROVIDER}") == 0
    assert {p.name for p in (demo_base / ".hoodie").glob("*.clean")} > cleans_before
    assert not (demo_base / ".hoodie/lock").exists()


def test_without_a_provider_the_interim_lock_is_used(base):
    with table_lock(open_table(base), "clean"):
        assert (base / ".hoodie/.aux/hudi-assets.lock").exists()
        assert not (base / ".hoodie/lock").exists()


def test_cli_rollback_waits_for_hudis_lock_like_clean(demo_base, capsys):
    """A rollback deletes files and timeline entries: it too must exclude the writers holding Hudi's lock."""
    failed = sorted(p.name for p in (demo_base / ".hoodie").glob("*.inflight"))[-1].split(".")[0]
    (demo_base / ".hoodie" / "lock").write_bytes(JAVA_LOCK_INFO)
    before = tree(demo_base)
    conf = [f"{k}={v}" for k, v in {**FAST_RETRIES, **FS}.items()]
    assert main(["rollback", str(demo_base), failed, *[a for c in conf for a in ("--hoodie-conf", c)]]) == 1
    assert "pool-7-thread-1" in capsys.readouterr().err
    assert tree(demo_base) == before
    (demo_base / ".hoodie" / "lock").unlink()
    assert main(["rollback", str(demo_base), failed, *[a for c in conf for a in ("--hoodie-conf", c)]]) == 0
    assert not list((demo_base / ".hoodie").glob(f"{failed}.*")) and not (demo_base / ".hoodie/lock").exists()


def test_a_directory_at_the_lock_path_is_refused_at_once_naming_it(base):
    (base / ".hoodie" / "lock").mkdir()
    before = tree(base)
    with pytest.raises(CorruptFileError, match=r"\.hoodie/lock: is a directory, not a lock file"), \
            table_lock(open_table(base, **FS, **{"hoodie.write.lock.filesystem.expire": "1"}), "clean"):
        pytest.fail("entered the block")
    assert tree(base) == before


def test_a_java_writer_that_deleted_our_lock_stops_the_clean_before_any_delete(demo_base):
    """Hudi's FileSystemBasedLockProvider deletes the lock file on unlock/close without checking whose it
    is, so a Java writer that gave up may remove ours: the clean checks it still holds the lock before
    deleting anything."""
    table = open_table(demo_base, **FS, **{"hoodie.cleaner.commits.retained": "3"})
    data_files = {p for p in demo_base.rglob("*.parquet")}
    with table_lock(table, "clean"):
        (demo_base / ".hoodie" / "lock").unlink()  # what the Java provider's unlock does to any lock file
        with pytest.raises(HudiAssetsError, match=r"lost Hudi's lock of this clean run"):
            Cleaner(table, CleanConfig.from_write_config(table.write_config)).clean()
    assert {p for p in demo_base.rglob("*.parquet")} == data_files
    assert not (demo_base / ".hoodie" / "lock").exists()


def test_a_java_writer_that_deleted_our_lock_stops_the_archive_before_it_deletes_state_files(tmp_path):
    b = TableBuilder(tmp_path)
    for i in range(20):
        b.commit(ts(i))
    table = open_table(tmp_path, **FS)
    config = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3))
    timeline = sorted(p.name for p in (tmp_path / ".hoodie").iterdir() if p.is_file() and p.name != "lock")
    with table_lock(table, "archive"):
        (tmp_path / ".hoodie" / "lock").unlink()  # what the Java provider's unlock does to any lock file
        with pytest.raises(HudiAssetsError, match=r"lost Hudi's lock of this archive run"):
            HoodieTimelineArchiver(table, config).archive()
    assert sorted(p.name for p in (tmp_path / ".hoodie").iterdir() if p.is_file()) == timeline


def test_a_lock_file_nested_too_deep_for_json_is_reported_as_text(base):
    (base / ".hoodie" / "lock").write_bytes(b"[" * 100_000)
    with pytest.raises(TableBusyError, match=r"an owner that wrote '\[\[\["), \
            table_lock(open_table(base, **FS), "clean"):
        pass


def test_a_java_writer_that_deleted_our_lock_stops_the_rollback_before_it_deletes(demo_base):
    """The rollback checks it still holds the lock before deleting the failed write's files and
    before removing the write from the timeline, as the clean and the archive do."""
    failed = sorted(p.name for p in (demo_base / ".hoodie").glob("*.inflight"))[-1].split(".")[0]
    table = open_table(demo_base, **FS)
    data_files = {p for p in demo_base.rglob("*") if p.is_file() and ".hoodie" not in p.parts}
    failed_state = sorted(p.name for p in (demo_base / ".hoodie").glob(f"{failed}.*"))
    with table_lock(table, "rollback"):
        (demo_base / ".hoodie" / "lock").unlink()  # what the Java provider's unlock does to any lock file
        with pytest.raises(HudiAssetsError, match=r"lost Hudi's lock"):
            Rollbacker(table).rollback(failed, force=True)
    assert {p for p in demo_base.rglob("*") if p.is_file() and ".hoodie" not in p.parts} == data_files
    assert sorted(p.name for p in (demo_base / ".hoodie").glob(f"{failed}.*")) == failed_state
