"""The warm engine: a Spark Connect server started once (`python -m hudi_assets.spark_connect`), and
the CLI and the API running on it with `--spark-remote` / `SPARK_REMOTE` / `spark_remote=`: the same
plan and the same deletes as the local engine, through the DataFrame API (Connect has no RDDs), on
executors that run this interpreter. Tests without the server check how the remote is chosen."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest
from support.spark_cluster import cluster_available

from hudi_assets.cli import main
from hudi_assets.demo import generate_table
from hudi_assets.engine import (
    LocalEngine,
    SparkEngine,
    create_engine,
    remote_session,
    spark_remote,
    spark_settings,
)
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.spark_connect import close_clients, server_settings
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata

SPEC = {"partitions": 5, "commits": 10, "files_per_partition": 4, "update_fraction": 0.6, "seed": 11,
        "fast": True}
RETAIN = ["--hoodie-conf", "hoodie.cleaner.commits.retained=3"]
SERVER = [sys.executable, "-m", "hudi_assets.spark_connect"]


# ------------------------------------------------------------------------------ without a server
def test_remote_from_argument_then_setting_then_variable_unless_a_master_is_given(monkeypatch):
    monkeypatch.setenv("SPARK_REMOTE", "sc://from-env:1")
    conf = {"spark.remote": "sc://from-conf:2"}
    assert spark_remote("sc://given:3", None, conf) == "sc://given:3"
    assert spark_remote(None, None, conf) == "sc://from-conf:2"
    assert spark_remote(None, None, {}) == "sc://from-env:1"
    assert spark_remote(None, "local[2]", conf) is None  # an explicit master runs embedded
    monkeypatch.delenv("SPARK_REMOTE")
    assert spark_remote(None, None, {}) is None  # the default stays an embedded local[*]
    with pytest.raises(InvalidConfigError, match="give one of them"):
        spark_remote("sc://a:1", "local[2]")


def test_embedded_settings_drop_the_remote_and_local_refuses_one():
    assert "spark.remote" not in spark_settings(conf={"spark.remote": "sc://a:1"})
    with pytest.raises(InvalidConfigError, match="needs engine='spark'"):
        create_engine("local", remote="sc://a:1")
    with pytest.raises(InvalidConfigError, match="sc://HOST:PORT"):
        remote_session("spark://127.0.0.1:7077")


def test_cli_refuses_a_master_and_a_remote_together(tmp_path, capsys):
    generate_table(Storage(str(tmp_path / "t")), "COPY_ON_WRITE", **SPEC)
    before = sorted(tmp_path.rglob("*"))
    code = main(["clean", str(tmp_path / "t"), "--dry-run", "--engine", "spark", "--spark-master", "local[2]",
                 "--spark-remote", "sc://127.0.0.1:1"])
    assert code == 2 and "give one of them" in capsys.readouterr().err
    assert sorted(tmp_path.rglob("*")) == before


def test_cli_refuses_at_once_a_remote_no_server_answers_at(tmp_path, capsys):
    generate_table(Storage(str(tmp_path / "t")), "COPY_ON_WRITE", **SPEC)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"sc://127.0.0.1:{probe.getsockname()[1]}"
    started = time.monotonic()
    assert main(["clean", str(tmp_path / "t"), "--engine", "spark", "--spark-remote", url, *RETAIN]) == 2
    assert time.monotonic() - started < 30  # the Connect client alone retries for minutes
    assert "no Spark Connect server answers at 127.0.0.1:" in capsys.readouterr().err
    assert not [p for p in (tmp_path / "t" / ".hoodie").iterdir() if ".clean" in p.name]


def test_server_binds_loopback_and_runs_this_python():
    settings = server_settings(0, "local[3]", {"spark.driver.memory": "2g"})
    assert settings["spark.connect.grpc.binding.address"] == "127.0.0.1"
    assert settings["spark.connect.grpc.binding.port"] == "0"
    assert settings["spark.pyspark.python"] == sys.executable
    assert settings["spark.default.parallelism"] == "3" and settings["spark.driver.memory"] == "2g"
    assert settings["spark.ui.enabled"] == "false" and settings["spark.driver.bindAddress"] == "127.0.0.1"
    assert "spark.default.parallelism" not in server_settings(0, "spark://10.1.2.3:7077")


# --------------------------------------------------------------------------------- on a server
class Server(NamedTuple):
    url: str
    pid: int


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the module, started and stopped as a shell script would."""
    reason = cluster_available()
    if reason:
        pytest.skip(reason)
    workdir = tmp_path_factory.mktemp("connect")
    pid_file = workdir / "server.pid"
    started = subprocess.run([*SERVER, "start", "--port", "0", "--master", "local[2]", "--log",
                              str(workdir / "server.log"), "--pid-file", str(pid_file)],
                             capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stderr
    url = started.stdout.strip()
    pid = int(pid_file.read_text())
    try:
        yield Server(url, pid)
    finally:
        close_clients()  # their exit cleanup would retry against the stopped server
        stopped = subprocess.run([*SERVER, "stop", "--pid-file", str(pid_file)], capture_output=True,
                                 text=True, timeout=120)
        assert stopped.returncode == 0, stopped.stderr
        left = subprocess.run(["ps", "-o", "pid=", "-g", str(pid)], capture_output=True, text=True).stdout
        assert left.split() == [] and not pid_file.exists()  # the JVM and its Python workers are gone


@pytest.fixture(scope="module")
def remote_engine(server):
    return SparkEngine(remote=server.url)  # never stopped: that would end the session all clients share


def _python_daemons(server: Server) -> int:
    """The server's Python daemons: its children (workers are the daemons' forks)."""
    listed = subprocess.run(["ps", "-o", "ppid=,args=", "-g", str(server.pid)], capture_output=True,
                            text=True)
    return sum(1 for line in listed.stdout.splitlines()
               if line.split()[0] == str(server.pid) and "pyspark.daemon" in line)


@pytest.mark.spark
def test_engine_over_connect_agrees_with_local_on_this_python(remote_engine, tmp_path):
    assert remote_engine.is_remote and remote_engine.default_parallelism() == 2
    items = list(range(50))
    # Functions made here travel by value: the server's workers cannot import this test module.
    for engine in (LocalEngine(4), remote_engine):
        assert engine.map(lambda x: x * x, items, parallelism=7) == [x * x for x in items]
        assert engine.flat_map(lambda x: [x] * (x % 3), items, 5) == [x for x in items for _ in range(x % 3)]
        assert engine.map(abs, []) == []
    storage = Storage(str(tmp_path))
    remote_engine.foreach(lambda n: storage.write(n, n.encode()), ["p/a", "p/b", "q/c"], 3)
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["a", "b", "c"]

    def where(_):
        import hudi_assets

        return sys.executable, hudi_assets.__file__, os.getpid()

    import hudi_assets

    found = set(remote_engine.map(where, list(range(8)), parallelism=4))
    assert {(python, module) for python, module, _ in found} == {(sys.executable, hudi_assets.__file__)}
    assert os.getpid() not in {pid for *_, pid in found}  # the server's Python workers, not this process


def _data_files(path: Path) -> set[str]:
    return {p.relative_to(path).as_posix() for p in path.rglob("*")
            if p.is_file() and ".hoodie" not in p.relative_to(path).parts}


def _dry_run_json(capsys, *args: str) -> dict:
    assert main(["clean", *args, "--dry-run", "--json", *RETAIN]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.spark
def test_dry_run_on_the_server_plans_what_local_plans(server, tmp_path, capsys):
    path = tmp_path / "t"
    generate_table(Storage(str(path)), "MERGE_ON_READ", **SPEC)
    local = _dry_run_json(capsys, str(path), "--engine", "local")
    remote = _dry_run_json(capsys, str(path), "--engine", "spark", "--spark-remote", server.url)
    assert remote == local and local["totals"]["files"] > 0
    table = HoodieTable(str(path), hoodie_conf={"hoodie.cleaner.commits.retained": "3"})
    api = table.maintenance.clean(dry_run=True, engine="spark", spark_remote=server.url).plan
    assert api.total_files == local["totals"]["files"]
    names = {p["partition"]: [f["path"].rpartition("/")[2] for f in p["files"]] for p in local["partitions"]}
    assert {p: [f.file_path.rpartition("/")[2] for f in files]
            for p, files in api.file_paths_to_delete.items()} == names


def _completed_clean(path: Path) -> dict:
    timeline = HoodieTable(str(path)).reload_timeline()
    [clean] = timeline.clean_timeline().filter_completed()
    return metadata.completed_metadata(timeline, clean)


@pytest.mark.spark
def test_clean_through_spark_remote_deletes_what_local_deletes(server, tmp_path, monkeypatch):
    local, remote = tmp_path / "local", tmp_path / "remote"
    for path in (local, remote):
        generate_table(Storage(str(path)), "COPY_ON_WRITE", **SPEC)
    before = _data_files(remote)
    assert main(["clean", str(local), "--engine", "local", *RETAIN]) == 0
    monkeypatch.setenv("SPARK_REMOTE", server.url)  # what a UI that started the server exports
    assert main(["clean", str(remote), "--engine", "spark", *RETAIN]) == 0
    assert _data_files(remote) == _data_files(local) != before
    local_clean, remote_clean = _completed_clean(local), _completed_clean(remote)
    assert remote_clean["totalFilesDeleted"] == local_clean["totalFilesDeleted"] > 0
    assert remote_clean["earliestCommitToRetain"] == local_clean["earliestCommitToRetain"]
    assert remote_clean["partitionMetadata"] == local_clean["partitionMetadata"]


@pytest.mark.spark
def test_every_client_shares_one_session_and_its_python_workers(server, remote_engine):
    """Spark 4.3 keeps a Python daemon per session until the server stops: the server's URL names one
    session, so the engines, commands and API calls of this module (and every run of a UI) add none."""
    assert "/;session_id=" in server.url
    for _ in range(2):
        assert SparkEngine(remote=server.url).map(lambda x: -x, [1, 2, 3]) == [-1, -2, -3]
    assert _python_daemons(server) == 1


@pytest.mark.spark
@pytest.mark.dagster
def test_the_dagster_graph_runs_on_the_warm_server_and_deletes_what_local_deletes(server, tmp_path):
    """The registry's `spark_remote` (what `scripts/ui.sh` exports): the whole maintenance graph runs
    its Spark work on the shared server, and cleans exactly the files the local engine cleans."""
    import dagster as dg

    from hudi_assets.orchestration.definitions import build_definitions
    from hudi_assets.orchestration.resources import HudiTableRegistry

    deleted = {}
    for engine, extra in (("local", {}), ("spark", {"spark_remote": server.url})):
        base = tmp_path / engine / "t"
        generate_table(Storage(str(base)), "MERGE_ON_READ", **SPEC)
        before = {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()}
        registry = HudiTableRegistry(base_paths=[str(base)], dry_run=False, engine=engine,
                                     hoodie_conf={"hoodie.cleaner.commits.retained": "3"}, **extra)
        with dg.instance_for_test() as instance:  # definitions resolve against the live instance
            job = build_definitions(registry).resolve_job_def("hudi_maintenance__default__t")
            assert job.execute_in_process(instance=instance, raise_on_error=False).success
        after = {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()}
        deleted[engine] = {p for p in before - after if not p.startswith(".hoodie")}
    assert deleted["spark"] == deleted["local"] and deleted["local"]


@pytest.mark.spark
def test_close_clients_closes_every_client_this_process_opened(server, remote_engine):
    """Last in the module: it closes the shared engine's client too (the server stops next)."""
    engine = SparkEngine(remote=server.url)
    assert engine.map(lambda x: x + 1, [1]) == [2]
    clients = [engine.session.client, remote_engine.session.client]
    assert not any(client.is_closed for client in clients)
    close_clients()
    assert all(client.is_closed for client in clients)
