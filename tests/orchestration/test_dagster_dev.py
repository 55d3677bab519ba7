"""End to end: `dagster dev` (webserver + daemon) on 127.0.0.1 serves the graph and runs it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import pytest
from dagster_graphql import DagsterGraphQLClient

from hudi_assets.demo import generate_table
from hudi_assets.orchestration.assets import TABLES
from hudi_assets.orchestration.instance import prepare_dagster_home
from hudi_assets.storage import Storage

pytestmark = pytest.mark.dagster

PROJECT = Path(__file__).resolve().parents[2]
ASSETS = ("timeline_snapshot", "clean_plan", "clean_result", "archive_batch", "merged_archive_files")
GRAPH_QUERY = "{ assetNodes { assetKey { path } } }"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(url: str, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"dagster dev exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"{url} did not answer within {timeout} s")


@pytest.fixture
def dagster_dev(tmp_path):
    lake = tmp_path / "lake"
    generate_table(Storage(str(lake / "cow")), "COPY_ON_WRITE", name="cow", partitions=2, commits=5, seed=5)
    home = prepare_dagster_home(tmp_path / "dagster_home")
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "HUDI_ASSETS_ROOTS": str(lake)}
    env.pop("HUDI_ASSETS_TABLES", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "dagster", "dev", "-f", str(PROJECT / "definitions.py"),
         "-h", "127.0.0.1", "-p", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_for(f"http://127.0.0.1:{port}/server_info", process)
        yield port, home
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_dagster_dev_serves_the_graph_and_runs_a_table(dagster_dev, monkeypatch):
    port, home = dagster_dev
    client = DagsterGraphQLClient("127.0.0.1", port_number=port)
    request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps(
        {"query": GRAPH_QUERY}).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:  # the GraphQL the UI itself uses
        graph = json.load(response)["data"]
    assert {n["assetKey"]["path"][0] for n in graph["assetNodes"]} == set(ASSETS)

    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions(TABLES.name, ["cow"])
        run_id = client.submit_job_execution("hudi_maintenance",
                                             tags={"dagster/partition": "cow", "hudi/table": "cow"})
        deadline = time.monotonic() + 180
        status = client.get_run_status(run_id)
        finished = (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE)
        while status not in finished and time.monotonic() < deadline:
            time.sleep(1)
            status = client.get_run_status(run_id)
        assert status == dg.DagsterRunStatus.SUCCESS
        for asset in ASSETS:
            materialized = instance.get_latest_materialization_event(dg.AssetKey(asset))
            assert materialized is not None and materialized.asset_materialization.partition == "cow"
