"""Savepoint delete and list (issue 28 items 2, 3) and what a savepoint does to the other services: a
clean keeps every file it lists, archival stops at it, deleting it lets the next clean free exactly
the bytes `list` said it kept alive; a run killed between the two state files is finished by the next.
Each on table version 6 and on 9 (Hudi 1.x's clean and TimelineArchiverV2 read the savepoints too)."""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiReadOptions, HudiTable

from hudi_assets.archive.archiver import HoodieTimelineArchiver
from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.demo import generate_table
from hudi_assets.exceptions import HudiInputError
from hudi_assets.savepoint import Savepointer
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import SAVEPOINT

KILL = Path(__file__).parents[1] / "support" / "kill_savepoint.py"
RETAIN_ONE = {"hoodie.clean.commits.retained": "1", "hoodie.clean.max.commits": "1",
              "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}


@pytest.fixture(params=[6, 9], ids=["v6", "v9"])
def version(request) -> int:
    return request.param


def demo(tmp_path, version, table_type="COPY_ON_WRITE", **shape):
    storage = Storage(str(tmp_path / "t"))
    shape = {"partitions": 2, "commits": 10, "seed": 5, "savepoint": False, "failed_write": False,
             "pending_compaction": False, **shape}
    return generate_table(storage, table_type, table_version=version, **shape)


def table_of(made) -> HoodieTable:
    return HoodieTable(made.storage, hoodie_conf=RETAIN_ONE)


def read_as_of(base: str, instant: str) -> list[dict]:
    batches = HudiTable(base).read(HudiReadOptions().with_as_of_timestamp(instant))
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return sorted(rows, key=lambda r: r["_hoodie_record_key"])


def savepoint_states(storage: Storage, instant: str) -> list[str]:
    """The states of savepoint `instant` that have a state file, whatever the layout names them."""
    timeline = HoodieTable(storage).active_timeline
    return sorted(i.state.name for i in timeline.state_files
                  if i.action == SAVEPOINT and i.timestamp == instant)


def clean(table: HoodieTable, max_commits: int = 1):
    """A clean with the table's settings; `max_commits` 0 plans one even without a commit since the last."""
    config = CleanConfig.from_write_config(table.write_config)
    return Cleaner(table, dataclasses.replace(config, max_commits=max_commits)).clean()


@pytest.mark.parametrize(("table_type", "metadata_table"), [
    ("COPY_ON_WRITE", False), ("MERGE_ON_READ", False), ("COPY_ON_WRITE", True)])
def test_clean_keeps_what_the_savepoint_lists_and_readers_see_the_same(tmp_path, version, table_type,
                                                                       metadata_table):
    """With a metadata table the savepoint is listed from it and the clean updates it (a version 9
    demo with one takes at most 6 commits: too few for a MOR slice to be cleaned)."""
    shape = {"metadata_table": True, "commits": 6} if metadata_table else {}
    made = demo(tmp_path, version, table_type, **shape)
    table = table_of(made)
    instant = made.completed_commits[2]
    before = read_as_of(made.base_path, instant)
    savepoint = Savepointer(table).create(instant)
    result = clean(table)
    assert result.files_deleted > 0
    for partition, names in savepoint.files.items():
        for name in names:
            assert made.storage.exists(f"{partition}/{name}"), name
    assert read_as_of(made.base_path, instant) == before


def test_archival_stops_at_the_savepoint(tmp_path, version):
    made = demo(tmp_path, version, commits=12)
    table = table_of(made)
    instant = made.completed_commits[3]
    Savepointer(table).create(instant)
    clean(table)
    result = HoodieTimelineArchiver.for_table(table).archive()  # TimelineArchiverV2 on version 9
    assert result.records_written > 0
    active = HoodieTable(made.storage).active_timeline
    commits = active.completed_commits_timeline(False).timestamps
    assert commits[0] <= instant and instant in commits
    assert set(made.completed_commits[:3]) - set(commits), "something before the savepoint was archived"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_deleting_frees_exactly_the_bytes_list_said_it_kept_alive(tmp_path, version, table_type):
    made = demo(tmp_path, version, table_type)
    table = table_of(made)
    service = Savepointer(table)
    kept_instant, dropped_instant = made.completed_commits[1], made.completed_commits[4]
    service.create(kept_instant, comment="audit")
    service.create(dropped_instant, user="bo", comment="backfill")
    clean(table)
    usages = {u.savepoint.instant: u for u in service.list()}
    assert list(usages) == [kept_instant, dropped_instant]
    dropped = usages[dropped_instant]
    assert (dropped.savepoint.savepointed_by, dropped.savepoint.comments) == ("bo", "backfill")
    assert dropped.files_kept_alive > 0 and dropped.bytes_kept_alive > 0
    sizes = {f"{s.path}": s.size for s in made.storage.list("", recursive=True) if not s.is_dir}
    service.delete(dropped_instant)
    assert savepoint_states(made.storage, dropped_instant) == []
    result = clean(table, max_commits=0)
    freed = [f for files in result.plan.file_paths_to_delete.values() for f in files]
    assert len(freed) == dropped.files_kept_alive
    assert not any(made.storage.exists(made.storage.relativize(f.file_path)) for f in freed)
    assert sum(sizes[made.storage.relativize(f.file_path)] for f in freed) == dropped.bytes_kept_alive
    assert [u.savepoint.instant for u in service.list()] == [kept_instant]


def test_delete_refuses_what_is_no_savepoint(tmp_path, version):
    made = demo(tmp_path, version)
    service = Savepointer(table_of(made))
    with pytest.raises(HudiInputError, match="is not a savepoint"):
        service.delete(made.completed_commits[-1])
    assert service.list() == []


def _killed(made, operation: str, instant: str, step: str) -> None:
    done = subprocess.run([sys.executable, str(KILL), made.base_path, operation, instant, step],
                          capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert done.returncode == -signal.SIGKILL, done.stderr


@pytest.mark.parametrize("then", ["create", "delete"])
def test_a_create_killed_after_the_inflight_file_is_finished_by_the_next_run(tmp_path, version, then):
    made = demo(tmp_path, version)
    instant = made.completed_commits[-1]
    _killed(made, "create", instant, "SAVEPOINT_INFLIGHT")
    assert savepoint_states(made.storage, instant) == ["INFLIGHT"]
    service = Savepointer(table_of(made))
    assert service.list() == []  # an inflight savepoint protects nothing
    if then == "create":
        assert service.create(instant).instant == instant
        assert savepoint_states(made.storage, instant) == ["COMPLETED", "INFLIGHT"]
    else:
        service.delete(instant)
        assert savepoint_states(made.storage, instant) == []


def test_a_delete_killed_between_the_state_files_leaves_the_savepoint_in_force(tmp_path, version):
    made = demo(tmp_path, version)
    instant = made.completed_commits[-1]
    Savepointer(table_of(made)).create(instant)
    _killed(made, "delete", instant, "SAVEPOINT_INFLIGHT_DELETED")
    assert savepoint_states(made.storage, instant) == ["COMPLETED"]
    service = Savepointer(table_of(made))
    assert [u.savepoint.instant for u in service.list()] == [instant]
    service.delete(instant)
    assert savepoint_states(made.storage, instant) == []
