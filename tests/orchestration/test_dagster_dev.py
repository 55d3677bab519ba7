"""End to end: `dagster dev` (webserver + daemon) on 127.0.0.1, driven over the GraphQL the UI itself uses.

An unsafe table (its hoodie.properties set commits.retained above keep.min) and a safe one: after a run
of each, the unsafe table's retention check is failed and the safe one's passed, per table; a check
runs on its own (the Execute button); materializing archive_batch alone on the unsafe table is
blocked; two launches on one table (UI-style and a backfill or a second UI launch) never run at once.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.dagster_ui import PARTITIONS, DagsterDev, free_port, wait_served

from hudi_assets.demo import generate_table
from hudi_assets.orchestration.instance import prepare_dagster_home
from hudi_assets.storage import Storage
from hudi_assets.table_config import load_table_config, write_table_config

pytestmark = pytest.mark.dagster

PROJECT = Path(__file__).resolve().parents[2]
STEPS = ("timeline_snapshot", "clean_plan", "clean_result", "archive_batch", "merged_archive_files",
         "metadata_services")
RETENTION = "retention_settings_are_safe"


def _never_overlap(runs: dict[str, dict]) -> None:
    spans = sorted((r["startTime"], r["endTime"]) for r in runs.values())
    assert all(start and end for start, end in spans), spans
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start >= end, f"runs of one table overlapped: {spans}"


@pytest.fixture
def dev(tmp_path, request):
    lake = tmp_path / "lake"
    for name in ("safe", "unsafe"):
        generate_table(Storage(str(lake / name)), "COPY_ON_WRITE", name=name, partitions=2, commits=5, seed=5)
    unsafe = Storage(str(lake / "unsafe"))  # settings a writer left in the table's own properties
    write_table_config(unsafe, {**load_table_config(unsafe).props, "hoodie.cleaner.commits.retained": "25",
                                "hoodie.keep.min.commits": "20"})
    home = prepare_dagster_home(tmp_path / "dagster_home")
    port = free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "HUDI_ASSETS_ROOTS": str(lake),
           "HUDI_ASSETS_ENGINE": "local", "HUDI_ASSETS_LAYOUT": request.param,
           # Not due: the sensor (running by default) adds no runs of its own to the ones under test.
           "HUDI_ASSETS_HOODIE_CONF": "hoodie.clean.max.commits=100,hoodie.keep.max.commits=100"}
    for name in ("HUDI_ASSETS_TABLES", "HUDI_ASSETS_DRY_RUN"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "dagster", "dev", "-f", str(PROJECT / "definitions.py"),
         "-h", "127.0.0.1", "-p", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        client = DagsterDev(port, process)
        wait_served(client, process)
        yield client, lake
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.parametrize("dev", ["per_table"], indirect=True)
def test_per_table_checks_guards_and_one_run_per_table(dev):
    client, lake = dev
    nodes = client.query("{ assetNodes { assetKey { path } } }")["assetNodes"]
    keys = {n["assetKey"]["path"][2] for n in nodes}
    assert keys == {"safe", "unsafe"}

    def key(table: str, step: str) -> list[str]:
        return ["hudi", "default", table, step]

    unsafe = client.launch([key("unsafe", s) for s in STEPS])
    safe = client.launch([key("safe", s) for s in STEPS])
    runs = client.wait([unsafe, safe])
    # The unsafe table's run refuses (no failure: the later steps are skipped, their checks too).
    assert runs[unsafe]["status"] == "SUCCESS" and runs[safe]["status"] == "SUCCESS"
    assert client.materialized_by(key("unsafe", "clean_plan")) is None
    assert {"key": "hudi/dry_run", "value": "true"} in runs[safe]["tags"]  # nothing deleted by default
    unsafe_checks, safe_checks = client.checks(key("unsafe", STEPS[0])), client.checks(key("safe", STEPS[0]))
    assert unsafe_checks[RETENTION]["executionForLatestMaterialization"]["status"] == "FAILED"
    assert safe_checks[RETENTION]["executionForLatestMaterialization"]["status"] == "SUCCEEDED"
    assert safe_checks[RETENTION]["canExecuteIndividually"] == "CAN_EXECUTE"

    # Execute (the check alone), on each table.
    alone = {t: client.launch([], [(key(t, STEPS[0]), RETENTION)]) for t in ("safe", "unsafe")}
    runs = client.wait(list(alone.values()))
    assert runs[alone["safe"]]["status"] == "SUCCESS" and runs[alone["unsafe"]]["status"] == "SUCCESS"
    assert client.checks(key("unsafe", STEPS[0]))[RETENTION]["executionForLatestMaterialization"][
        "status"] == "FAILED"

    # archive_batch alone on the unsafe table: its own retention check stops it before anything moves.
    archived_before = sorted((lake / "unsafe" / ".hoodie").rglob("*"))
    batch = client.launch([key("unsafe", "archive_batch")])
    client.wait([batch])
    assert client.checks(key("unsafe", "archive_batch"))[RETENTION]["executionForLatestMaterialization"][
        "status"] == "FAILED"
    assert client.materialized_by(key("unsafe", "archive_batch")) is None
    assert sorted((lake / "unsafe" / ".hoodie").rglob("*")) == archived_before

    # Two launches on one table at once (Materialize twice, or Materialize and the job): one at a time.
    first = client.launch([key("safe", s) for s in STEPS])
    second = client.launch([key("safe", "timeline_snapshot")])
    _never_overlap(client.wait([first, second]))


@pytest.mark.parametrize("dev", ["partitioned"], indirect=True)
def test_partitioned_checks_per_table_and_a_backfill_waits_for_the_ui_run(dev):
    client, _ = dev
    assets = [["hudi", s] for s in STEPS]
    snapshot = ["hudi", "timeline_snapshot"]
    # The sensor runs by default and registers both tables as partitions on its first tick.
    keys: list[str] = []
    deadline = time.monotonic() + 120
    while len(keys) < 2 and time.monotonic() < deadline:
        time.sleep(1)
        keys = client.query(PARTITIONS, keys=[{"path": snapshot}])["assetNodes"][0]["partitionKeys"]
    assert keys == ["safe", "unsafe"]

    ui = client.launch(assets, partition="safe")
    backfill = client.backfill(assets, ["safe", "unsafe"])
    unsafe_run = client.launch(assets, partition="unsafe")
    backfill_runs = client.backfill_runs(backfill, 2)
    runs = client.wait([ui, unsafe_run, *backfill_runs])
    for run_id in backfill_runs:  # tagged by their first step: a backfill sets neither tag
        tags = {t["key"]: t["value"] for t in runs[run_id]["tags"]}
        assert tags["hudi/table"] == tags["dagster/partition"] and tags["hudi/dry_run"] == "true"
    _never_overlap({r: v for r, v in runs.items()
                    if {"key": "dagster/partition", "value": "safe"} in v["tags"]})
    check = client.checks(snapshot)[RETENTION]
    assert check["partitionStatuses"]["failedPartitions"] == ["unsafe"]
    assert check["partitionStatuses"]["succeededPartitions"] == ["safe"]
    executed = client.launch([], [(snapshot, RETENTION)], partition="safe")
    assert client.wait([executed])[executed]["status"] == "SUCCESS"
