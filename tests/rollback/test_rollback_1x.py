"""Rollback on table versions 8 and 9 (Hudi 1.x, issue 24 item 3): delete-only, against the Java-written
v9 rollback fixture of ../shared (`support.rollback_1x`). Java planned its rollback by listing (one
request per file, no file id, the scheme stripped); so do we for a write that left no markers.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiReadOptions, HudiTable
from support.refdata import shared_path, unzip_table
from support.rollback_1x import (
    FAILED,
    FAILED_FILE,
    JAVA_BASE,
    MDT_TIMELINE,
    TIMELINE,
    failed_v9,
    files,
    java_records,
    java_table,
    metadata_relative,
    plan_relative,
    rows,
)

from hudi_assets.avro import deserialize_metadata
from hudi_assets.cli import main
from hudi_assets.exceptions import CorruptFileError, UnsafePlanError
from hudi_assets.rollback import Rollbacker, RollbackPlan, RollbackRequest
from hudi_assets.table import HoodieTable


def test_the_plan_equals_the_java_written_plan(tmp_path):
    base = failed_v9(tmp_path)
    java_plan, _ = java_records(java_table(tmp_path))
    plan = Rollbacker(HoodieTable(str(base))).dry_run(FAILED).plan
    assert plan_relative(plan.to_record(), str(base)) == plan_relative(java_plan, JAVA_BASE)


def test_the_rollback_writes_what_java_writes_and_hudi_rs_reads_the_samerows(tmp_path):
    base = failed_v9(tmp_path)
    java_plan, java_metadata = java_records(java_table(tmp_path))
    table = HoodieTable(str(base))
    [done] = Rollbacker(table).rollback(FAILED).executed
    assert (done.instant_time, done.action, done.files_deleted) == (FAILED, "deltacommit", 1)
    timeline = base / TIMELINE
    requested = timeline / f"{done.rollback_instant}.rollback.requested"
    [completed] = timeline.glob(f"{done.rollback_instant}_*.rollback")
    assert (timeline / f"{done.rollback_instant}.rollback.inflight").read_bytes() == b""  # as 1.x: empty
    plan = deserialize_metadata(requested.read_bytes(), "HoodieRollbackPlan", str(requested))
    assert plan_relative(plan, str(base)) == plan_relative(java_plan, JAVA_BASE)
    ours = deserialize_metadata(completed.read_bytes(), "HoodieRollbackMetadata", str(completed))
    variable = ("startRollbackTime", "timeTakenInMillis")
    assert ours["startRollbackTime"] == done.rollback_instant
    assert ({k: v for k, v in metadata_relative(ours, str(base)).items() if k not in variable}
            == {k: v for k, v in metadata_relative(java_metadata, JAVA_BASE).items() if k not in variable})
    assert completed.name.split("_")[1] > done.rollback_instant  # completed after it was requested
    assert not list(timeline.glob(f"{FAILED}*")) and not (base / FAILED_FILE).exists()
    assert rows(base) == rows(java_table(tmp_path))
    assert Rollbacker(HoodieTable(str(base))).rollback(FAILED).executed == []  # nothing left to do


def test_markers_of_1x_writers_plan_one_delete_per_file_and_no_command_block(tmp_path):
    """1.x writers mark their log files CREATE: each marked file is deleted by its own request, with
    its file id and the failed instant (MarkerBasedRollbackStrategy, version 8 and up)."""
    base = failed_v9(tmp_path)
    log_name, marker_dir = _with_markers(base)
    before = files(base)
    plan = Rollbacker(HoodieTable(str(base))).dry_run(FAILED).plan
    assert [r.partition_path for r in plan.requests] == ["", ""]
    assert sorted((r.file_id, r.latest_base_instant, r.files_to_delete) for r in plan.requests) == [
        ("65ad1e15-43be-4901-b753-5d8b12923927-0", FAILED, (f"{base}/{log_name}",)),
        ("cefd0149-a1ea-4981-abda-34e0b9d9ef12-0", FAILED, (f"{base}/{FAILED_FILE}",))]
    assert files(base) == before  # a dry run writes nothing
    [done] = Rollbacker(HoodieTable(str(base))).rollback(FAILED).executed
    assert (done.files_deleted, done.rollback_log_files) == (2, 0)
    [completed] = (base / TIMELINE).glob(f"{done.rollback_instant}_*.rollback")
    record = deserialize_metadata(completed.read_bytes(), "HoodieRollbackMetadata", str(completed))
    assert record["partitionMetadata"][""]["rollbackLogFiles"] == {}
    assert record["partitionMetadata"][""]["logFilesFromFailedCommit"] == {}
    assert not (base / log_name).exists() and not marker_dir.exists()
    assert not [p for p in base.glob(".*.log.*")]  # no command-block log file was written


def test_an_append_marker_on_another_instants_log_file_is_refused_before_anything_is_written(tmp_path):
    base = failed_v9(tmp_path)
    other = ".65ad1e15-43be-4901-b753-5d8b12923927-0_20260403184302162.log.1_0-1-2"
    (base / other).write_bytes(b"#HUDI#")
    marker_dir = base / ".hoodie" / ".temp" / FAILED
    marker_dir.mkdir(parents=True)
    (marker_dir / f"{other}.marker.APPEND").touch()
    before = files(base)
    with pytest.raises(CorruptFileError, match="only deletes files the failed write created"):
        Rollbacker(HoodieTable(str(base))).rollback(FAILED)
    assert files(base) == before


def test_a_pending_plan_with_log_blocks_is_refused_on_version_9(tmp_path):
    """Hudi 1.x's RollbackHelper refuses log blocks to delete; so do we, before the first delete."""
    base = failed_v9(tmp_path)
    plan = RollbackPlan(FAILED, "deltacommit", (
        RollbackRequest("", files_to_delete=(f"{base}/{FAILED_FILE}",)),
        RollbackRequest("", "65ad1e15-43be-4901-b753-5d8b12923927-0", "20260403184302162",
                        log_blocks_to_delete={"x.log": 1})))
    (base / TIMELINE / "20260403185000000.rollback.requested").write_bytes(plan.serialize())
    before = files(base)
    with pytest.raises(UnsafePlanError, match="a table version 9 rollback never does"):
        Rollbacker(HoodieTable(str(base))).rollback(FAILED)
    assert files(base) == before


def test_the_cli_rolls_back_a_version_9_table_with_its_metadata_table(tmp_path):
    """The faces' sink (`MetadataTableSink`) hands a 1.x table's metadata side to the deltacommit
    rollback: the failed write leaves both timelines and the metadata table still validates."""
    base = failed_v9(tmp_path, metadata_table=True)
    assert main(["rollback", str(base), FAILED]) == 0
    for folder in (TIMELINE, MDT_TIMELINE):
        assert not list((base / folder).glob(f"{FAILED}*"))
        assert len(list((base / folder).glob("*_*.rollback"))) >= 1
    assert main(["metadata", str(base), "--validate"]) == 0


def test_the_cli_rolls_back_a_version_9_table(tmp_path, capsys):
    base = failed_v9(tmp_path)
    assert main(["rollback", str(base), FAILED]) == 0
    assert not (base / FAILED_FILE).exists() and not list((base / TIMELINE).glob(f"{FAILED}*"))
    assert main(["timeline", str(base)]) == 0
    assert "rollback" in capsys.readouterr().out


def _with_markers(base):
    """The failed write's CREATE markers, as a 1.x writer leaves them: its base file and a log file."""
    log_name = f".65ad1e15-43be-4901-b753-5d8b12923927-0_{FAILED}.log.1_0-1-2"
    (base / log_name).write_bytes(b"#HUDI#")
    marker_dir = base / ".hoodie" / ".temp" / FAILED
    marker_dir.mkdir(parents=True)
    for name in (FAILED_FILE, log_name):
        (marker_dir / f"{name}.marker.CREATE").touch()
    return log_name, marker_dir


STEPS = ["ROLLBACK_REQUESTED", "ROLLBACK_INFLIGHT", "ROLLBACK_REQUEST:1", "ROLLBACK_REQUEST:2",
         "ROLLBACK_INSTANT_DELETED", "ROLLBACK_COMPLETE"]


@pytest.mark.parametrize("step", STEPS)
def test_a_killed_version_9_rollback_is_finished_by_a_rerun(tmp_path, step):
    base = failed_v9(tmp_path)
    log_name, marker_dir = _with_markers(base)
    expected = rows(java_table(tmp_path))
    script = Path(__file__).parents[1] / "support/kill_rollback.py"
    kill = [sys.executable, str(script), str(base), FAILED, step]
    proc = subprocess.run(kill, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    assert rows(base) == expected  # readers see nothing of the failed write, whatever the step
    rerun = [sys.executable, "-m", "hudi_assets.cli", "rollback", str(base), FAILED]
    proc = subprocess.run(rerun, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    timeline = base / TIMELINE
    [completed] = timeline.glob("*_*.rollback")
    record = deserialize_metadata(completed.read_bytes(), "HoodieRollbackMetadata", str(completed))
    assert sorted(record["partitionMetadata"][""]["successDeleteFiles"]) == sorted(
        [f"{base}/{log_name}", f"{base}/{FAILED_FILE}"])  # a file a killed run deleted counts as deleted
    assert record["partitionMetadata"][""]["failedDeleteFiles"] == []
    assert not list(timeline.glob(f"{FAILED}*")) and not marker_dir.exists()
    assert not (base / log_name).exists() and not (base / FAILED_FILE).exists()
    assert len(list(timeline.glob("*.rollback*"))) == 3  # one rollback: requested, inflight, completed
    assert rows(base) == expected


def test_the_api_rolls_back_a_version_9_table(tmp_path):
    base = failed_v9(tmp_path)
    result = HoodieTable(str(base)).maintenance.rollback(FAILED)
    assert [(r.instant_time, r.files_deleted) for r in result.executed] == [(FAILED, 1)]
    assert rows(base) == rows(java_table(tmp_path))


@pytest.mark.dagster
def test_the_dagster_rollback_job_rolls_back_a_version_9_table(tmp_path):
    import dagster as dg

    from hudi_assets.orchestration.definitions import build_definitions
    from hudi_assets.orchestration.operations import ROLLBACK_JOB
    from hudi_assets.orchestration.resources import HudiTableRegistry

    base = failed_v9(tmp_path)
    registry = HudiTableRegistry(base_paths=[str(base)], engine="local", dry_run=False)
    with dg.instance_for_test() as instance:
        job = build_definitions(registry).resolve_job_def(ROLLBACK_JOB)
        config = {"ops": {"rollback_failed_write": {"config": {"table": base.name, "instant": FAILED}}}}
        result = job.execute_in_process(config, instance=instance, raise_on_error=False)
    assert result.success
    assert not list((base / TIMELINE).glob(f"{FAILED}*")) and not (base / FAILED_FILE).exists()


def test_lazy_failed_write_cleaning_rolls_back_only_expired_heartbeats_on_version_9(tmp_path):
    """1.x's getInstantsToRollbackForLazyCleanPolicy checks heartbeats as 0.15 does (stored id
    26446769): a live heartbeat keeps its write; once expired it is rolled back and the heartbeat goes."""
    import os

    from hudi_assets.transaction import table_lock

    base = failed_v9(tmp_path)
    heartbeat = base / ".hoodie" / ".heartbeat" / FAILED
    heartbeat.parent.mkdir()
    heartbeat.touch()
    lazy = {"hoodie.cleaner.policy.failed.writes": "LAZY"}
    table = HoodieTable(str(base), hoodie_conf=lazy)
    with table_lock(table, "test") as lock:
        assert Rollbacker(table).rollback_failed_writes(lock) == []
    assert (base / FAILED_FILE).exists()
    os.utime(heartbeat, (0, 0))  # its writer stopped beating long ago
    with table_lock(table, "test") as lock:
        [done] = Rollbacker(table).rollback_failed_writes(lock)
    assert (done.instant_time, done.files_deleted) == (FAILED, 1)
    assert not heartbeat.exists() and not (base / FAILED_FILE).exists()


@pytest.mark.parametrize("marker", [
    "5aa8d873-d341-4a43-aef0-51c33fec06f1-0_0-21-52_20260403184238571.parquet",  # a committed base file
    ".65ad1e15-43be-4901-b753-5d8b12923927-0_20260403184302162.log.1_0-1-2",  # a committed log file
    "../outside/x-0_0-1-2_20260403184242950.parquet",  # outside the table
    ".hoodie/timeline/x-0_0-1-2_20260403184242950.parquet",  # under .hoodie
])
def test_the_marker_safety_rule_holds_on_version_9(tmp_path, marker):
    """The rule of tests/rollback/test_hostile_markers.py, unchanged on version 9: a CREATE marker
    naming a file the failed write did not write, or outside a partition, refuses the whole rollback
    before anything is written."""
    base = failed_v9(tmp_path)
    (base / ".65ad1e15-43be-4901-b753-5d8b12923927-0_20260403184302162.log.1_0-1-2").write_bytes(b"#HUDI#")
    marker_dir = base / ".hoodie" / ".temp" / FAILED
    marker_dir.mkdir(parents=True)
    (marker_dir / "MARKERS.type").write_text("TIMELINE_SERVER_BASED")
    (marker_dir / "MARKERS0").write_text(f"{FAILED_FILE}.marker.CREATE\n{marker}.marker.CREATE\n")
    before = files(base)
    with pytest.raises(UnsafePlanError, match="MARKERS0, line 2"):
        Rollbacker(HoodieTable(str(base))).rollback(FAILED)
    assert files(base) == before


def test_a_failed_commit_on_a_version_8_copy_on_write_table(tmp_path):
    """Version 8 as 9: a COW commit's MERGE and CREATE markers each plan one delete, with the file id
    and the failed instant (MarkerBasedRollbackStrategy), and hudi-rs reads the rows of before."""
    shared_path("tables", "sample_table__cow__v8_simplekeygen_nonhivestyle.zip")
    base = unzip_table("sample_table__cow__v8_simplekeygen_nonhivestyle", tmp_path)
    failed = "20250713011400000"
    timeline = base / TIMELINE
    (timeline / f"{failed}.commit.requested").write_bytes(b"")
    shutil.copy(timeline / "20250713011316909.inflight", timeline / f"{failed}.inflight")
    merged = f"7b0ea4f9-3768-4e87-b12c-8d33efd22b55-0_0-140-200_{failed}.parquet"
    created = f"0d0a0b0c-0000-4000-8000-000000000001-0_1-140-201_{failed}.parquet"
    shutil.copy(base / "10/7b0ea4f9-3768-4e87-b12c-8d33efd22b55-0_0-136-193_20250713011316909.parquet",
                base / "10" / merged)
    shutil.copy(base / "10" / merged, base / "20" / created)
    markers = base / ".hoodie" / ".temp" / failed
    (markers / "10").mkdir(parents=True)
    (markers / "20").mkdir()
    (markers / "10" / f"{merged}.marker.MERGE").touch()
    (markers / "20" / f"{created}.marker.CREATE").touch()
    before = _v8_rows(base)
    table = HoodieTable(str(base))
    plan = Rollbacker(table).dry_run(failed).plan
    requests = sorted((r.partition_path, r.file_id, r.latest_base_instant, r.files_to_delete)
                      for r in plan.requests)
    assert requests == [
        ("10", "7b0ea4f9-3768-4e87-b12c-8d33efd22b55-0", failed, (f"{base}/10/{merged}",)),
        ("20", "0d0a0b0c-0000-4000-8000-000000000001-0", failed, (f"{base}/20/{created}",))]
    [done] = Rollbacker(table).rollback(failed).executed
    assert done.files_deleted == 2
    assert not (base / "10" / merged).exists() and not (base / "20" / created).exists()
    assert next(timeline.glob(f"{done.rollback_instant}_*.rollback"))
    assert _v8_rows(base) == before


def _v8_rows(base) -> list[dict]:
    batches = HudiTable(str(base)).read(HudiReadOptions())
    return sorted(pa.Table.from_batches(batches).to_pylist(), key=lambda r: r["_hoodie_record_key"])
