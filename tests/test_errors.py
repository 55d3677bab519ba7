"""Hostile input and failing I/O on the command line: one line naming the file or setting, exit 2 for
bad input and 1 for a failure while working, no traceback, and nothing deleted or left half-written."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hudi_assets.clean import Cleaner
from hudi_assets.clean.config import CleanConfig
from hudi_assets.cli import main
from hudi_assets.config import WriteConfig
from hudi_assets.demo import write_demo_tables
from hudi_assets.table import HoodieTable

# Archival settings under which the demo COW table has instants to archive.
ARCHIVE_SMALL = ["--hoodie-conf", "hoodie.keep.min.commits=2", "--hoodie-conf", "hoodie.keep.max.commits=3",
                 "--hoodie-conf", "hoodie.cleaner.commits.retained=1"]


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    write_demo_tables(str(root))
    return root


@pytest.fixture
def demo(demo_root, tmp_path):
    """A fresh copy of a demo table (`demo_cow` or `demo_mor`) under the test's own directory."""
    return lambda name="demo_cow": Path(shutil.copytree(demo_root / name, tmp_path / name, symlinks=True))


def snapshot(root: Path) -> dict[bytes, bytes]:
    """Every file under `root` by raw relative name (names need not be UTF-8) with its content."""
    base = os.fsencode(root)
    found = {}
    for directory, _, files in os.walk(base):
        for name in files:
            path = os.path.join(directory, name)
            with open(path, "rb") as fh:
                found[os.path.relpath(path, base)] = fh.read()
    return found


def temp_files(root: Path) -> list[str]:
    return [str(p) for p in root.rglob(".tmp-*")]


def error_line(err: str, prefix: str) -> str:
    """The one line the command line prints for an error (log lines may precede it)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("hudi-assets:")]
    assert len(lines) == 1 and lines[0].startswith(prefix), err
    return lines[0]


def run_cli(*args: str, preexec_fn=None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hudi_assets.cli", *args], capture_output=True, text=True,
                          preexec_fn=preexec_fn, timeout=timeout, check=False)


# --------------------------------------------------------------------------- hoodie.properties
@pytest.mark.parametrize(("key", "value", "problem"), [
    ("hoodie.table.version", "abc", "hoodie.table.version='abc' is not an integer"),
    ("hoodie.timeline.layout.version", "1.5", "hoodie.timeline.layout.version='1.5' is not an integer"),
    ("hoodie.table.type", "MERGE_ON_WRITE", "hoodie.table.type='MERGE_ON_WRITE' is not one of"),
    ("hoodie.table.timeline.timezone", "CET", "hoodie.table.timeline.timezone='CET' is not one of"),
])
def test_malformed_table_property_exits_2_naming_file_and_key(demo, capsys, key, value, problem):
    base = demo()
    props = base / ".hoodie" / "hoodie.properties"
    lines = [line for line in props.read_text().splitlines() if not line.startswith(f"{key}=")]
    props.write_text("\n".join([*lines, f"{key}={value}"]) + "\n")
    before = snapshot(base)
    assert main(["clean", str(base), "--engine", "local"]) == 2
    line = error_line(capsys.readouterr().err, "hudi-assets: error:")
    assert f"{base}/.hoodie/hoodie.properties: {problem}" in line
    assert snapshot(base) == before


# ------------------------------------------------------------------------------ non-UTF-8 names
@pytest.mark.parametrize(("command", "where"), [
    ("clean", b"dt=2024-\xff"),                                  # a partition folder
    ("clean", b"dt=2024-01-01/\xfe-0_0-1-1_20240101000000996.parquet"),  # a file in a partition
    ("timeline", b".hoodie/20240101000000996\xff.commit"),       # the timeline folder
    ("archive", b".hoodie/archived/.commits_.archive.1\xff"),    # the archive folder
])
def test_name_that_is_not_utf8_is_refused_by_name(demo, capsys, command, where):
    base = demo("demo_mor")
    path = os.path.join(os.fsencode(base), where)
    if command == "clean" and b"/" not in where:
        os.mkdir(path)
        path = os.path.join(path, b".hoodie_partition_metadata")
    with open(path, "wb") as fh:
        fh.write(b"x")
    before = snapshot(base)
    # demo_mor keeps a metadata table: list storage, where the stray name is
    extra = (["--engine", "local", "--hoodie-conf", "hoodie.metadata.enable=false"] if command == "clean"
             else ARCHIVE_SMALL if command == "archive" else [])
    assert main([command, str(base), *extra]) == 2
    line = error_line(capsys.readouterr().err, "hudi-assets: error:")
    shown = where.rsplit(b"/", 1)[-1] if b"\xfe" in where else where
    assert shown.decode("utf-8", "backslashreplace") in line and "not valid UTF-8" in line
    assert snapshot(base) == before


def test_base_path_that_is_not_utf8_is_refused(tmp_path, capsys):
    assert main(["timeline", os.fsdecode(os.fsencode(tmp_path) + b"/t\xff")]) == 2
    assert "t\\xff: name is not valid UTF-8" in error_line(capsys.readouterr().err, "hudi-assets: error:")


# ------------------------------------------------------------------------------- failed writes
def _file_size_limit(limit: int):
    """For a child process: writes past `limit` bytes fail with EFBIG, as on a full disk, part-way."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    return apply


@pytest.mark.parametrize(("command", "written"), [
    (["clean", "--engine", "local"], ".clean.requested"),
    (["archive", *ARCHIVE_SMALL], ".hoodie/archived/.commits_.archive.1_1-0-1"),
])
def test_failed_write_exits_1_and_leaves_no_partial_file(demo, command, written):
    """1 KiB fits the lock file (written first), not the plan or the archive file."""
    base = demo()
    before = snapshot(base)
    done = run_cli(command[0], str(base), *command[1:], preexec_fn=_file_size_limit(1024))
    assert done.returncode == 1, done.stderr
    line = error_line(done.stderr, "hudi-assets: failed:")
    assert written in line and "could not be written (File too large)" in line
    assert snapshot(base) == before and not temp_files(base)


def test_unwritable_timeline_exits_1_and_leaves_nothing(demo, capsys):
    if os.geteuid() == 0:
        pytest.skip("running as root: permissions do not stop writes (see the EFBIG test)")
    base = demo()
    before = snapshot(base)
    (base / ".hoodie").chmod(0o555)
    try:
        assert main(["clean", str(base), "--engine", "local"]) == 1
    finally:
        (base / ".hoodie").chmod(0o755)
    assert "Permission denied" in error_line(capsys.readouterr().err, "hudi-assets: failed:")
    assert snapshot(base) == before and not temp_files(base)


def test_os_error_without_a_domain_error_is_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert main(["demo", str(tmp_path / "file" / "demo")]) == 1
    assert f"{tmp_path}/file/demo" in error_line(capsys.readouterr().err, "hudi-assets: failed:")


# ------------------------------------------------------------------------- stores and options
def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def silent_server():
    """A TCP server that accepts connections and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


S3_KEYS = ["--storage-option", "scheme=http", "--storage-option", "access_key=a",
           "--storage-option", "secret_key=b", "--storage-option", "region=us-east-1"]


def test_unreachable_s3_endpoint_fails_in_one_line_within_seconds():
    started = time.monotonic()
    endpoint = f"endpoint_override=127.0.0.1:{_closed_port()}"
    done = run_cli("timeline", "s3://bucket/t", "--storage-option", endpoint, *S3_KEYS)
    assert done.returncode == 1 and time.monotonic() - started < 30
    assert "bucket 'bucket'" in error_line(done.stderr, "hudi-assets: failed:")


def test_silent_s3_endpoint_gives_up_after_the_retries_asked_for(silent_server):
    started = time.monotonic()
    endpoint = f"endpoint_override=127.0.0.1:{silent_server}"
    done = run_cli("timeline", "s3://bucket/t", "--storage-option", endpoint,
                   "--storage-option", "retry_strategy=standard:1", *S3_KEYS)
    assert done.returncode == 1 and time.monotonic() - started < 15
    assert "Timeout" in error_line(done.stderr, "hudi-assets: failed:")


@pytest.mark.parametrize(("args", "problem"), [
    (["s3://bucket/t", "--storage-option", "endpoint=x"], "'endpoint': not an option of pyarrow's S3"),
    (["s3://bucket/t", "--storage-option", "connect_timeout=soon"], "storage option connect_timeout='soon'"),
    (["s3://bucket/t", "--storage-option", "anonymous=no"], "anonymous='no': expected true or false"),
    (["gs://bucket/t", "--storage-option", "retry_time_limit=x"], "storage option retry_time_limit='x'"),
    (["foo://bucket/t"], "foo://bucket/t: unknown scheme 'foo'"),
    (["hdfs://nn/t", "--storage-option", "user=x"], "storage options user do not apply to hdfs paths"),
])
def test_bad_storage_option_or_scheme_exits_2_before_any_io(capsys, args, problem):
    assert main(["timeline", *args]) == 2
    assert problem in error_line(capsys.readouterr().err, "hudi-assets: error:")


# --------------------------------------------------------------------------------- closed pipe
def test_closed_stdout_exits_quietly(demo):
    process = subprocess.Popen([sys.executable, "-m", "hudi_assets.cli", "timeline", str(demo()), "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # the reader is gone before the first byte, as with `| head -0`
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 1
    assert err == ""


# ----------------------------------------------------------------------- symlinked base path
@pytest.mark.parametrize("plan_via", ["link", "real"])
def test_clean_planned_through_one_spelling_of_the_base_path_completes_through_the_other(demo, tmp_path,
                                                                                         capsys, plan_via):
    real = demo()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    planning, running = (link, real) if plan_via == "link" else (real, link)
    table = HoodieTable(str(planning))
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, []))
    cleaner = Cleaner(table, config)
    plan = cleaner.plan()
    instant = cleaner.request(plan)
    planned = [f.file_path for files in plan.file_paths_to_delete.values() for f in files]
    assert instant is not None and planned and all(f"file:{planning}/" in p for p in planned)
    assert main(["clean", str(running), "--engine", "local"]) == 0
    assert (real / ".hoodie" / f"{instant}.clean").exists()
    assert not any(Path(p.removeprefix("file:")).exists() for p in planned)
    assert f"clean instant(s) {instant}" in capsys.readouterr().out
