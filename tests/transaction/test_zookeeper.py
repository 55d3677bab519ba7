"""ZookeeperBasedLockProvider against a real ZooKeeper server, and against real Curator
(`InterProcessMutex`, as Hudi's Java provider uses it) in a Java process, both ways."""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from support.lock_tables import FAST_RETRIES, open_table, tree

from hudi_assets.cli import main
from hudi_assets.exceptions import HudiAssetsError, InvalidConfigError, TableBusyError
from hudi_assets.transaction import table_lock
from hudi_assets.transaction.lock_manager import ZOOKEEPER_PROVIDER
from hudi_assets.transaction.zookeeper import sequence_key

JARS = Path(sys.prefix) / "lib" / "python3.11" / "site-packages" / "pyspark" / "jars"
HOLD_LOCK = Path(__file__).parent / "java" / "HoldLock.java"
LOCK_PATH = "/hudi/locks/t"

pytestmark = pytest.mark.skipif(shutil.which("java") is None or not JARS.is_dir(),
                                reason="needs java and pyspark's jars (ZooKeeper, Curator)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def zk(tmp_path_factory) -> str:
    """A ZooKeeper server on 127.0.0.1 from pyspark's jars; its connect string."""
    port, data = _free_port(), tmp_path_factory.mktemp("zk")
    log = (data / "server.log").open("w")
    server = subprocess.Popen(["java", "-Dzookeeper.admin.enableServer=false", "-cp", f"{JARS}/*",
                               "org.apache.zookeeper.server.ZooKeeperServerMain", str(port), str(data)],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert server.poll() is None and time.monotonic() < deadline, (data / "server.log").read_text()
            time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(30)
        log.close()


@pytest.fixture
def zk_client(zk):
    client = KazooClient(hosts=zk)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


def _conf(zk: str) -> dict[str, str]:
    return {"hoodie.write.lock.provider": ZOOKEEPER_PROVIDER, "hoodie.write.lock.zookeeper.url": zk,
            "hoodie.write.lock.zookeeper.base_path": "/hudi/locks"}  # lock_key: the table name "t"


def _curator(zk: str, seconds: int, mode: str = "hold") -> subprocess.Popen:
    return subprocess.Popen(["java", "-cp", f"{JARS}/*", str(HOLD_LOCK), zk, LOCK_PATH, str(seconds), mode],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _await_line(process: subprocess.Popen, expected: str) -> None:
    line = process.stdout.readline().strip()
    assert line == expected, f"Curator printed {line!r}, expected {expected!r}"


def test_curator_sorting_key():
    assert sequence_key("_c_0b6f1b2c-aaaa-4bbb-8ccc-000000000000-lock-0000000012") == "0000000012"
    assert sequence_key("other") == "other"


def test_our_node_follows_curators_naming_and_goes_at_release(base, zk, zk_client):
    with table_lock(open_table(base, **_conf(zk)), "clean") as held:
        children = zk_client.get_children(LOCK_PATH)
        assert len(children) == 1
        assert re.fullmatch(r"_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}",
                            children[0])
        data, stat = zk_client.get(f"{LOCK_PATH}/{children[0]}")
        assert data.decode().startswith("hudi-assets clean pid") and stat.ephemeralOwner
        held.check_held()
    assert zk_client.get_children(LOCK_PATH) == []


def test_released_when_the_block_raises(base, zk, zk_client):
    with pytest.raises(RuntimeError, match="boom"), table_lock(open_table(base, **_conf(zk)), "clean"):
        raise RuntimeError("boom")
    assert zk_client.get_children(LOCK_PATH) == []


def test_while_we_hold_it_curator_cannot_acquire(base, zk, zk_client):
    with table_lock(open_table(base, **_conf(zk)), "archive"):
        curator = _curator(zk, 2, "try")
        _await_line(curator, "NOT_ACQUIRED")
        assert curator.wait(30) == 0
    curator = _curator(zk, 5, "try")  # released: now Curator gets the same lock at once
    _await_line(curator, "ACQUIRED")
    assert curator.wait(30) == 0
    assert zk_client.get_children(LOCK_PATH) == []


def test_while_curator_holds_it_clean_waits_then_exits_1_naming_the_owner(demo_base, zk, capsys):
    curator = _curator(zk, 8)
    try:
        _await_line(curator, "ACQUIRED")
        before = tree(demo_base)
        args = ["clean", str(demo_base), "--engine", "local"]
        for key, value in {**FAST_RETRIES, **_conf(zk), "hoodie.cleaner.commits.retained": "3"}.items():
            args += ["--hoodie-conf", f"{key}={value}"]
        started = time.monotonic()
        assert main(args) == 1
        assert time.monotonic() - started >= 0.6  # three tries of 200 ms
        err = capsys.readouterr().err
        assert "table is busy" in err and f"lock node {LOCK_PATH}/_c_" in err and "-lock-" in err
        assert tree(demo_base) == before
        _await_line(curator, "RELEASED")
    finally:
        curator.kill()
        curator.wait(30)


def test_we_get_the_lock_once_curator_releases_it(base, zk, zk_client):
    curator = _curator(zk, 2)
    try:
        _await_line(curator, "ACQUIRED")
        conf = {**_conf(zk), "hoodie.write.lock.wait_time_ms": "20000"}
        with table_lock(open_table(base, **conf), "clean"):
            _await_line(curator, "RELEASED")
            assert len(zk_client.get_children(LOCK_PATH)) == 1
    finally:
        curator.kill()
        curator.wait(30)


def test_base_path_is_required(base, zk):
    conf = _conf(zk)
    del conf["hoodie.write.lock.zookeeper.base_path"]
    with pytest.raises(InvalidConfigError, match="base_path is not set"), \
            table_lock(open_table(base, **conf), "clean"):
        pass


def test_unreachable_zookeeper_fails_after_the_retries(base):
    conf = {**_conf(f"127.0.0.1:{_free_port()}"), "hoodie.write.lock.zookeeper.connection_timeout_ms": "300",
            "hoodie.write.lock.num_retries": "0"}
    with pytest.raises(Exception, match="cannot connect to ZooKeeper") as failed, \
            table_lock(open_table(base, **conf), "clean"):
        pass
    assert not isinstance(failed.value, TableBusyError)


def test_a_refused_connection_fails_each_try_at_once_and_the_log_says_how_long_the_rest_take(base, caplog):
    """With the default 15 s connection timeout a closed port used to cost 15 s per try (17 minutes
    with Hudi's 51 tries); a refused connection cannot succeed by waiting."""
    url = f"127.0.0.1:{_free_port()}"
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="hudi_assets.transaction.lock_manager"), \
            pytest.raises(HudiAssetsError, match=r"gave up after 3 tries: cannot connect to ZooKeeper "
                                                 r"\(127\.0\.0\.1:\d+: Connection refused\)"), \
            table_lock(open_table(base, **_conf(url)), "clean"):
        pass
    assert time.monotonic() - started < 5
    lines = [r.getMessage() for r in caplog.records if "cannot connect to ZooKeeper" in r.getMessage()]
    assert len(lines) == 2 and "(1 of 3 tries)" in lines[0] and "(2 of 3 tries)" in lines[1]
    assert "retrying 2 more time(s) 0.1s apart, about 0." in lines[0] and "more at this pace" in lines[0]
    assert "hoodie.write.lock.client.num_retries" in lines[0]
