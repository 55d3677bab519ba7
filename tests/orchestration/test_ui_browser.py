"""The Dagster UI in a real browser: `bash scripts/ui.sh` on three tables, one made unsafe, driven by
Playwright in Debian's Chromium (`apt-get install -y chromium`; `.ci/run` installs it).

The global lineage names every table; a table's graph is materialized from the UI; the sensor (due
tables), the UI and GraphQL launch runs that all carry `hudi/table` and `hudi/dry_run`; the unsafe
table's settings check fails, the others pass, and the unsafe table's later checks read SKIPPED;
SIGTERM to ui.sh stops everything it started in under 10 s.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.dagster_ui import DagsterDev, all_runs, free_port, latest_check_status, wait_served
from support.load import doomed, scheduling_slack, wait_until

from hudi_assets.demo import generate_table
from hudi_assets.storage import Storage
from hudi_assets.table_config import load_table_config, write_table_config

pytestmark = pytest.mark.dagster
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (a dev dependency)")
CHROMIUM = shutil.which("chromium")
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed (apt-get install -y chromium; .ci/run installs it)",
                allow_module_level=True)

PROJECT = Path(__file__).resolve().parents[2]
STEPS = ("timeline_snapshot", "clean_plan", "clean_result", "archive_batch", "merged_archive_files",
         "metadata_services")
TABLES = ("alpha", "beta", "gamma")
UNSAFE = "gamma"
RETENTION = "retention_settings_are_safe"


def _processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, session id, state) of every process, from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                state, ppid, _group, session = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:4]
            except (OSError, ValueError):
                continue
            found[int(entry.name)] = (int(ppid), int(session), state)
    return found


def _sessions_of(pid: int) -> set[int]:
    """Session ids of `pid` and all its descendants (dagster dev runs in a session of its own)."""
    processes = _processes()
    found, todo = set(), [pid]
    while todo:
        current = todo.pop()
        found.add(processes[current][1] if current in processes else current)
        todo.extend(child for child, (parent, _, _) in processes.items() if parent == current)
    return found


def _alive_in(sessions: set[int]) -> list[int]:
    return [pid for pid, (_, session, state) in _processes().items() if session in sessions and state != "Z"]


@pytest.fixture
def ui(tmp_path):
    lake = tmp_path / "lake"
    for name in TABLES:
        generate_table(Storage(str(lake / name)), "COPY_ON_WRITE", name=name, partitions=2, commits=5, seed=7)
    unsafe = Storage(str(lake / UNSAFE))
    write_table_config(unsafe, {**load_table_config(unsafe).props, "hoodie.cleaner.commits.retained": "25",
                                "hoodie.keep.min.commits": "20"})
    port = free_port()
    env = {**os.environ, "HUDI_ASSETS_ROOTS": str(lake), "HUDI_ASSETS_ENGINE": "local",
           # Due at once: the sensor's first tick requests a run of every table.
           "HUDI_ASSETS_HOODIE_CONF": "hoodie.clean.max.commits=1"}
    for name in ("HUDI_ASSETS_TABLES", "HUDI_ASSETS_DRY_RUN", "HUDI_ASSETS_LAYOUT", "DAGSTER_HOME"):
        env.pop(name, None)
    log = (tmp_path / "ui.log").open("w")
    process = subprocess.Popen(["bash", str(PROJECT / "scripts" / "ui.sh"), "--home", str(tmp_path / "home"),
                                "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        client = DagsterDev(port, process)
        wait_served(client, process)
        yield client, process, port
    finally:
        if process.poll() is None:
            for session in _sessions_of(process.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(session, signal.SIGKILL)
            process.wait()
        log.close()


def _wait_for_runs(client: DagsterDev, ready, timeout: float = 300) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = all_runs(client)
        if ready(runs) and all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED") for r in runs):
            return runs
        time.sleep(2)
    raise AssertionError(f"runs not finished within {timeout} s: {all_runs(client)}")


def _click_past_prompts(page, button) -> None:
    """Click `button`; Dagster's first-visit newsletter prompt can open a moment after the page
    settles and cover it, so skip (or escape) whatever dialog intercepts the click, then try again."""
    skip = page.get_by_role("button", name="Skip")
    deadline = time.monotonic() + 60
    while True:
        try:
            button.click(timeout=5_000)
            return
        except sync_api.TimeoutError:
            assert time.monotonic() < deadline, "a dialog kept covering the button"
            if skip.count():
                skip.first.click()
            else:
                page.keyboard.press("Escape")


def test_ui_names_tables_runs_them_honestly_and_stops_on_sigterm(ui):
    client, process, port = ui
    url = f"http://127.0.0.1:{port}"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(f"{url}/asset-groups", wait_until="networkidle")
        for table in TABLES:  # the global lineage names every table
            sync_api.expect(page.get_by_text(f"default__{table}").first).to_be_visible(timeout=30_000)
        page.goto(f"{url}/locations/definitions.py/asset-groups/default__alpha", wait_until="networkidle")
        _click_past_prompts(page, page.get_by_role("button", name="Materialize all"))
        deadline = time.monotonic() + 60
        while not [r for r in all_runs(client) if r["tags"].get("dagster/from_ui")]:
            assert time.monotonic() < deadline, "the UI launched no run"
            time.sleep(1)
        browser.close()
    graphql = client.launch([["hudi", "default", "beta", s] for s in STEPS])

    def ready(runs: list[dict]) -> bool:
        sensor = {r["tags"].get("hudi/table") for r in runs if r["tags"].get("dagster/sensor_name")}
        return sensor >= set(TABLES) and any(r["runId"] == graphql for r in runs)

    runs = _wait_for_runs(client, ready)
    launched = {"sensor": [r for r in runs if r["tags"].get("dagster/sensor_name")],
                "ui": [r for r in runs if r["tags"].get("dagster/from_ui")],
                "graphql": [r for r in runs if r["runId"] == graphql]}
    for how, group in launched.items():
        assert group, how
        for run in group:
            assert run["tags"].get("hudi/dry_run") == "true", (how, run)
            assert run["tags"].get("hudi/table") in TABLES, (how, run)
    assert {r["tags"]["hudi/table"] for r in launched["ui"]} == {"alpha"}
    assert all(r["status"] == "SUCCESS" for r in runs), runs  # a refusal is not a failure

    def key(table: str, step: str) -> list[str]:
        return ["hudi", "default", table, step]

    for table in TABLES:
        expected = "FAILED" if table == UNSAFE else "SUCCEEDED"
        assert latest_check_status(client, key(table, "timeline_snapshot"), RETENTION) == expected, table
        assert latest_check_status(client, key(table, "clean_plan"), RETENTION) == expected, table
    for step, name in (("clean_plan", "plan_is_safe"), ("clean_result", "retained_files_exist"),
                       ("archive_batch", "archived_instants_readable")):
        assert latest_check_status(client, key(UNSAFE, step), name) == "SKIPPED", (step, name)
        assert latest_check_status(client, key("alpha", step), name) == "SUCCEEDED", (step, name)

    sessions = _sessions_of(process.pid)
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=120) == 128 + signal.SIGTERM  # the launcher stopped what it started
    # Under 10 s on a machine with a core to spare; a busier one stretches the wall time, not the work.
    assert time.monotonic() - started < 10 + scheduling_slack()
    left = _alive_in(sessions)
    assert all(doomed(pid) for pid in left), left  # anything not yet gone was killed by the launcher
    wait_until(lambda: _alive_in(sessions) == [], 30 + scheduling_slack(), "every process it started gone")
