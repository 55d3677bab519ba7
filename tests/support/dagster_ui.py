"""Drive a running `dagster dev` over the GraphQL the UI itself uses (shared by the Dagster UI tests)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request

FINISHED = ("SUCCESS", "FAILURE", "CANCELED")
LAUNCH = """mutation($params: ExecutionParams!) { launchPipelineExecution(executionParams: $params) {
  __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message }
  ... on InvalidSubsetError { message } } }"""
BACKFILL = """mutation($params: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $params) {
  __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }"""
RUNS = """query($ids: [String!]) { runsOrError(filter: {runIds: $ids}) { ... on Runs { results {
  runId status startTime endTime tags { key value } } } } }"""
BACKFILL_RUNS = """query($id: String!) { partitionBackfillOrError(backfillId: $id) {
  ... on PartitionBackfill { status runs { runId } } } }"""
CHECKS = """query($keys: [AssetKeyInput!]) { assetNodes(assetKeys: $keys) { assetKey { path }
  assetChecksOrError { ... on AssetChecks { checks { name canExecuteIndividually
    executionForLatestMaterialization { status }
    partitionStatuses { ... on AssetCheckDefaultPartitionStatuses { succeededPartitions failedPartitions
      inProgressPartitions skippedPartitions executionFailedPartitions } }
  } } } } }"""
PARTITIONS = """query($keys: [AssetKeyInput!]) { assetNodes(assetKeys: $keys) { partitionKeys } }"""
MATERIALIZED = """query($key: AssetKeyInput!) { assetOrError(assetKey: $key) {
  ... on Asset { assetMaterializations(limit: 1) { runId } } } }"""


class DagsterDev:
    """A `dagster dev` process and the GraphQL calls the UI makes."""

    def __init__(self, port: int, process: subprocess.Popen):
        self.url = f"http://127.0.0.1:{port}/graphql"
        self.process = process

    def query(self, text: str, **variables) -> dict:
        body = json.dumps({"query": text, "variables": variables}).encode()
        request = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.load(response)
        assert "errors" not in answer, answer
        return answer["data"]

    def launch(self, assets: list[list[str]], checks: list[tuple[list[str], str]] | None = None,
               partition: str | None = None) -> str:
        """As the UI's Materialize (or a check's Execute) does: the implicit asset job, a selection."""
        selector = {"repositoryLocationName": "definitions.py", "repositoryName": "__repository__",
                    "pipelineName": "__ASSET_JOB", "assetSelection": [{"path": p} for p in assets]}
        if checks is not None:
            selector["assetCheckSelection"] = [{"assetKey": {"path": p}, "name": n} for p, n in checks]
        tags = [{"key": "dagster/partition", "value": partition}] if partition else []
        answer = self.query(LAUNCH, params={"selector": selector, "mode": "default", "runConfigData": "{}",
                                            "executionMetadata": {"tags": tags}})["launchPipelineExecution"]
        assert answer["__typename"] == "LaunchRunSuccess", answer
        return answer["run"]["runId"]

    def backfill(self, assets: list[list[str]], partitions: list[str]) -> str:
        answer = self.query(BACKFILL, params={"partitionNames": partitions,
                                              "assetSelection": [{"path": p} for p in assets]})
        assert answer["launchPartitionBackfill"]["__typename"] == "LaunchBackfillSuccess", answer
        return answer["launchPartitionBackfill"]["backfillId"]

    def backfill_runs(self, backfill_id: str, count: int, timeout: float = 120) -> list[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            runs = self.query(BACKFILL_RUNS, id=backfill_id)["partitionBackfillOrError"]["runs"]
            if len(runs) >= count:
                return [r["runId"] for r in runs]
            time.sleep(1)
        raise AssertionError(f"backfill {backfill_id} made no run within {timeout} s")

    def wait(self, run_ids: list[str], timeout: float = 240) -> dict[str, dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            runs = {r["runId"]: r for r in self.query(RUNS, ids=run_ids)["runsOrError"]["results"]}
            if len(runs) == len(run_ids) and all(r["status"] in FINISHED for r in runs.values()):
                return runs
            assert self.process.poll() is None, "dagster dev exited"
            time.sleep(1)
        raise AssertionError(f"runs {run_ids} did not finish within {timeout} s")

    def checks(self, asset: list[str]) -> dict[str, dict]:
        nodes = self.query(CHECKS, keys=[{"path": asset}])["assetNodes"]
        return {c["name"]: c for c in nodes[0]["assetChecksOrError"]["checks"]}

    def materialized_by(self, asset: list[str]) -> str | None:
        found = self.query(MATERIALIZED, key={"path": asset})["assetOrError"].get("assetMaterializations")
        return found[0]["runId"] if found else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_served(client: DagsterDev, process: subprocess.Popen, timeout: float = 120) -> None:
    """Returns once the webserver serves the asset graph."""
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, f"dagster dev exited with {process.returncode}"
        try:
            if client.query("{ assetNodes { id } }")["assetNodes"]:
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, f"dagster dev did not serve the graph within {timeout} s"
        time.sleep(0.5)


CHECK_EXECUTIONS = """query($key: AssetKeyInput!, $name: String!) {
  assetCheckExecutions(assetKey: $key, checkName: $name, limit: 1) { status runId } }"""
ALL_RUNS = """{ runsOrError { ... on Runs { results { runId status jobName tags { key value } } } } }"""


def latest_check_status(client: DagsterDev, asset: list[str], name: str) -> str | None:
    """The status the UI shows for the latest execution of a check (SKIPPED, FAILED, ...)."""
    found = client.query(CHECK_EXECUTIONS, key={"path": asset}, name=name)["assetCheckExecutions"]
    return found[0]["status"] if found else None


def all_runs(client: DagsterDev) -> list[dict]:
    """Every run, its tags as a dict."""
    runs = client.query(ALL_RUNS)["runsOrError"]["results"]
    return [{**r, "tags": {t["key"]: t["value"] for t in r["tags"]}} for r in runs]
