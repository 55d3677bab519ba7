"""`hudi-assets repair orphans` in a loop beside a live writer (and the clean and archive loops): no
file of a commit that completes is ever moved (issue 26's soak). The writer, its crashes and the
shared lock are those of `tests/test_live_writer.py`."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.fsview import parse_base_file_name
from hudi_assets.repair.quarantine import read_manifest, runs
from hudi_assets.repair.service import TIMELINE_READ_MARGIN_MS
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import COPY_ON_WRITE, MERGE_ON_READ
from hudi_assets.timeline import metadata
from tests.test_live_writer import (
    ARCHIVE_ARGS,
    CLEAN_ARGS,
    Soak,
    _outcomes,
    _read,
    _run_soak,
    _timeline_counts,
)

pytestmark = pytest.mark.soak
# The shortest minimum age the writer's settings allow (heartbeat expiry 2 s): the loop sees files of
# commits that are still being written, and of crashed writes before and after their rollback.
REPAIR_ARGS = ("repair", "orphans", "--engine", "local", "--min-age", "3s", "--json")


def seed_orphans(base: Path, stop: threading.Event, seeded: set[str]) -> None:
    """Every half second, beside the last completed commit's first base file: a speculative task's
    copy of it (a completed commit's orphan) and a failed write's file (an instant on no timeline)."""
    n = 0
    while not stop.wait(0.5):
        try:
            table = HoodieTable(str(base))
            active = table.active_timeline
            last = active.commits_timeline().filter_completed().last()
            paths = [p for p in metadata.commit_metadata(active, last).written_paths
                     if p and p.endswith(".parquet")] if last else []
        except (HudiAssetsError, OSError):
            continue  # read while the writer or a clean changed the timeline: try again
        if not paths:
            continue
        folder, _, name = paths[0].rpartition("/")
        file_id, _, instant = parse_base_file_name(name)
        n += 1
        for orphan in (f"{folder}/{file_id}_9-9-{n}_{instant}.parquet",
                       f"{folder}/seeded-{n}_0-0-0_{int(instant) + 1}.parquet"):
            if (base / paths[0]).exists():
                (base / orphan).write_bytes((base / paths[0]).read_bytes())
                seeded.add(orphan)


def failed_appends_no_rollback_names(soak: Soak) -> set[str]:
    """Log files of the writer's crashed deltacommits that no completed rollback names: real orphans.
    The writer's APPEND markers name the slice's base file (0.x before HUDI-1517), and Hudi 0.15 rolls
    such a marker back by logging out the slice's *latest* log file; when a later deltacommit appended
    to the slice before the rollback ran (LAZY: after the heartbeat expired), that file is the later
    commit's, and the failed write's own file is left, its block skipped and voided by instant."""
    _, _, rollbacks = _timeline_counts(HoodieTable(str(soak.base)))
    rolled_back = {t for r in rollbacks for t in r.get("commitsRollback") or []}
    named = {path.rpartition("/")[2] for r in rollbacks for p in (r.get("partitionMetadata") or {}).values()
             for key in ("successDeleteFiles", "rollbackLogFiles", "logFilesFromFailedCommit")
             for path in p.get(key) or []}
    outcomes = _outcomes(soak)
    return {path for record in outcomes["killed"] + outcomes["aborted"] if record["instant"] in rolled_back
            for path in record["files"] if ".log." in path and path.rpartition("/")[2] not in named}


@pytest.mark.parametrize("table_type", [COPY_ON_WRITE, MERGE_ON_READ])
def test_repair_orphans_beside_a_live_writer(tmp_path, table_type, request):
    seconds = request.config.getoption("--soak-seconds")
    stop, seeded = threading.Event(), set()
    seeder = threading.Thread(target=seed_orphans, args=(tmp_path / "table", stop, seeded))
    seeder.start()
    try:
        soak = _run_soak(tmp_path, table_type, seconds, (CLEAN_ARGS, ARCHIVE_ARGS, REPAIR_ARGS))
    finally:
        stop.set()
        seeder.join()
    # The last seeded files pass the minimum age and the margin for files written after the timeline
    # read (`TIMELINE_READ_MARGIN_MS`); one more run takes them.
    time.sleep(TIMELINE_READ_MARGIN_MS / 1000 + 0.5)
    soak.cli(*REPAIR_ARGS)
    failures = [(args, code, out[-3000:]) for args, code, out in soak.runs if code != 0]
    assert not failures, failures
    repairs = [out for args, _code, out in soak.runs if args[0] == "repair"]
    assert len(repairs) >= 3, "the repair loop ran"
    committed = {path for record in _outcomes(soak)["completed"] for path in record["files"]}
    storage = Storage(str(soak.base))
    moved = {o.path for run in runs(storage) for o in read_manifest(storage, run)}
    assert not moved & committed, sorted(moved & committed)
    # Every planted orphan the loop reached was moved, and every other file moved is a crashed write's
    # log file its rollback does not name (`failed_appends_no_rollback_names`).
    assert moved & seeded, (len(moved), sorted(moved - seeded)[:5])
    unexplained = moved - seeded - failed_appends_no_rollback_names(soak)
    assert not unexplained, sorted(unexplained)[:5]
    for out in repairs:  # every run's report parses, and names no committed file
        report = json.loads(out[out.index("{"):out.rindex("}") + 1])
        assert not {o["path"] for o in report["orphans"]} & committed
    # hudi-rs reads every commit the last clean retains as the writer wrote it: no move changed a read.
    active = HoodieTable(str(soak.base)).reload_timeline()
    last_clean = metadata.completed_metadata(active, active.clean_timeline().filter_completed().last())
    rows = {record["instant"]: record["rows"] for record in _outcomes(soak)["completed"]}
    retained = sorted(t for t in rows if t >= (last_clean or {})["earliestCommitToRetain"])
    assert retained
    for instant in retained:
        assert _read(soak.base, instant) == rows[instant], f"read as of {instant}"
