"""Each completed instant of a layout-2 timeline keeps its own completion time (Hudi's
HoodieInstant.getCompletionTime) beside the one its requested time answers with: a savepoint shares
its commit's requested time and completes later. The answer (file slicing) is the commit's; what the
timeline shows for the savepoint, what the archiver writes into its row and what a new completion
time must pass are the savepoint's own."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hudi_assets.archive.lsm_instant import lsm_timeline_instant
from hudi_assets.cli import main
from hudi_assets.storage import Storage
from hudi_assets.table_config import TableConfig, write_table_config
from hudi_assets.timeline.instant import Instant, State
from hudi_assets.timeline.instant_time import format_instant_time
from hudi_assets.timeline.layout import load_active_timeline

PROPS = {"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.version": "9",
         "hoodie.timeline.layout.version": "2", "hoodie.timeline.path": "timeline",
         "hoodie.table.timeline.timezone": "UTC"}
COMMIT = SAVEPOINT = "20240101000000100"  # a savepoint is named by its commit's requested time


def _table(tmp_path, savepoint_completed: str) -> Storage:
    """A commit requested at COMMIT (completed 100 ms later) and its savepoint completed at
    `savepoint_completed`."""
    storage = Storage(str(tmp_path))
    write_table_config(storage, PROPS)
    storage.write(f".hoodie/timeline/{COMMIT}.commit.requested", b"")
    storage.write(f".hoodie/timeline/{COMMIT}.inflight", b"")
    storage.write(f".hoodie/timeline/{COMMIT}_20240101000000200.commit", b"")
    storage.write(f".hoodie/timeline/{COMMIT}.savepoint.inflight", b"")
    storage.write(f".hoodie/timeline/{COMMIT}_{savepoint_completed}.savepoint", b"")
    return storage


def test_the_timeline_shows_the_savepoint_completing_when_it_did(tmp_path, capsys):
    storage = _table(tmp_path, "20240101000000900")
    assert main(["timeline", storage.base_uri, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["instants"]
    assert [(r["action"], r["completion_time"]) for r in rows] == [
        ("commit", "20240101000000200"), ("savepoint", "20240101000000900")]
    timeline = load_active_timeline(storage, TableConfig(PROPS))
    assert timeline.completion_times == {COMMIT: "20240101000000200"}


def test_the_archiver_writes_the_savepoints_own_completion_time(tmp_path):
    timeline = load_active_timeline(_table(tmp_path, "20240101000000900"), TableConfig(PROPS))
    row = lsm_timeline_instant(timeline, [Instant(SAVEPOINT, "savepoint", State.INFLIGHT),
                                          Instant(SAVEPOINT, "savepoint")])
    assert row["completionTime"] == "20240101000000900"
    commit = [Instant(COMMIT, "commit", state) for state in State]
    row = lsm_timeline_instant(timeline, commit)
    assert row["completionTime"] == "20240101000000200"


def test_a_new_completion_time_passes_a_savepoints_ahead_of_this_clock(tmp_path):
    """A savepoint completed by a writer whose clock runs 150 ms ahead (within the 200 ms allowance):
    the next completion time here still comes after it."""
    ahead = format_instant_time(datetime.now(UTC).replace(tzinfo=None) + timedelta(milliseconds=150))
    storage = _table(tmp_path, ahead)
    timeline = load_active_timeline(storage, TableConfig(PROPS))
    path = timeline.new_state_file_path(Instant("20240101000000300", "clean"))
    assert path.rpartition("/")[2].split(".")[0].split("_")[1] > ahead


def test_every_time_a_new_one_must_pass_counts_each_instants_own_completion(tmp_path):
    """One list serves a new completion time here and the metadata table's fresh compaction time:
    the requested times and each completed instant's own completion time, the savepoint's too; a
    timeline without the savepoint (a delete's preview) no longer counts its time."""
    timeline = load_active_timeline(_table(tmp_path, "20240101000000900"), TableConfig(PROPS))
    assert sorted(timeline.all_times) == [COMMIT, COMMIT, "20240101000000200", "20240101000000900"]
    gone = [i for i in timeline.state_files if i.action == "savepoint"]
    assert sorted(timeline.without(gone).all_times) == [COMMIT, "20240101000000200"]
