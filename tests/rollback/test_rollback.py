"""Failed writes rolled back as Hudi 0.15 does: hudi-rs reads what it read before the failed write,
the rollback files decode with Hudi's schemas, and a run killed at any step is finished by a rerun."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.failed_tables import (
    MARKER_LAYOUTS,
    decode_with,
    expected_rows,
    marker_folder,
    read_rows,
    use_direct_markers,
)

from hudi_assets.fsview import LogFile
from hudi_assets.logformat import BlockType, HeaderKey, read_blocks
from hudi_assets.rollback import Rollbacker, pending_rollbacks
from hudi_assets.table import HoodieTable


def _hoodie(demo) -> list[str]:
    return sorted(p.name for p in (Path(demo.base_path) / ".hoodie").iterdir() if p.is_file())


def _rollback_logs(demo) -> list[Path]:
    return sorted(p for p in Path(demo.base_path).rglob(".*.log.*_1-0-1"))


def _assert_rolled_back(demo) -> None:
    names = _hoodie(demo)
    assert not [n for n in names if n.startswith(demo.failed_instant)]
    [completed] = [n for n in names if n.endswith(".rollback")]
    rollback_time = completed.split(".")[0]
    assert [n for n in names if ".rollback" in n] == [
        completed, f"{rollback_time}.rollback.inflight", f"{rollback_time}.rollback.requested"]
    assert not marker_folder(demo).exists()
    assert read_rows(demo.base_path) == expected_rows(demo)
    for ts in demo.completed_commits:
        assert read_rows(demo.base_path, ts) == expected_rows(demo, ts), f"as of {ts}"


@pytest.mark.parametrize("layout", MARKER_LAYOUTS)
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rollback_restores_what_readers_saw(failed_table, table_type, layout):
    demo = failed_table(table_type, layout)
    base = Path(demo.base_path)
    done = Rollbacker(HoodieTable(demo.base_path)).rollback(demo.failed_instant).executed
    assert [d.instant_time for d in done] == [demo.failed_instant]
    _assert_rolled_back(demo)
    base_files = [f for f in demo.failed_files if f.endswith(".parquet")]
    assert base_files and not any((base / f).exists() for f in base_files)
    assert done[0].files_deleted == len(base_files)
    if table_type == "COPY_ON_WRITE":
        assert not _rollback_logs(demo)
        return
    appended = [f for f in demo.failed_files if not f.endswith(".parquet")]
    assert appended and all((base / f).exists() for f in appended)  # committed blocks before it stay
    if layout == "none":  # listing: only files the failed write opened; readers skip its log block
        assert not _rollback_logs(demo)
        return
    [rollback_log] = _rollback_logs(demo)
    written = LogFile.parse(rollback_log.name)
    failed_log = LogFile.parse(Path(appended[0]).name)
    assert (written.file_id, written.base_instant, written.version) == (
        failed_log.file_id, failed_log.base_instant, failed_log.version + 1)
    [block] = read_blocks(rollback_log.read_bytes())
    assert block.block_type == BlockType.COMMAND
    assert block.header[HeaderKey.TARGET_INSTANT_TIME] == demo.failed_instant
    assert block.header[HeaderKey.INSTANT_TIME] == done[0].rollback_instant


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rollback_files_decode_with_hudi_schemas(failed_table, rollback_schemas, table_type):
    demo = failed_table(table_type)
    [done] = Rollbacker(HoodieTable(demo.base_path)).rollback(demo.failed_instant).executed
    hoodie = Path(demo.base_path) / ".hoodie"
    plan = decode_with(hoodie / f"{done.rollback_instant}.rollback.requested",
                       rollback_schemas["HoodieRollbackPlan"])
    assert plan["instantToRollback"] == {"commitTime": demo.failed_instant,
                                         "action": "deltacommit" if demo.is_mor else "commit"}
    assert plan["version"] == 1
    planned = sorted(p for r in plan["RollbackRequests"] for p in r["filesToBeDeleted"])
    assert planned == sorted(f"{demo.base_path}/{f}" for f in demo.failed_files if f.endswith(".parquet"))
    assert (hoodie / f"{done.rollback_instant}.rollback.inflight").stat().st_size == 0
    meta = decode_with(hoodie / f"{done.rollback_instant}.rollback",
                       rollback_schemas["HoodieRollbackMetadata"])
    assert meta["commitsRollback"] == [demo.failed_instant]
    assert meta["instantsRollback"] == [plan["instantToRollback"]]
    deleted = sorted(p for m in meta["partitionMetadata"].values() for p in m["successDeleteFiles"])
    assert deleted == planned and meta["totalFilesDeleted"] == len(planned)
    logs = {k: v for m in meta["partitionMetadata"].values() for k, v in m["rollbackLogFiles"].items()}
    if demo.is_mor:
        [(path, size)] = logs.items()
        assert path.startswith("file:/") and size == Path(path[len("file:"):]).stat().st_size
        [request] = [r for r in plan["RollbackRequests"] if r["logBlocksToBeDeleted"]]
        failed_logs = {k for m in meta["partitionMetadata"].values() for k in m["logFilesFromFailedCommit"]}
        assert failed_logs == set(request["logBlocksToBeDeleted"])
    else:
        assert not logs


def test_append_marker_naming_the_log_file(failed_table):
    """Since HUDI-1517 an APPEND marker names the log file itself; 0.15 then logs out its blocks."""
    demo = failed_table("MERGE_ON_READ", "direct")
    folder = marker_folder(demo)
    [old] = [p for p in folder.rglob("*.marker.APPEND")]
    [log_rel] = [f for f in demo.failed_files if not f.endswith(".parquet")]
    old.unlink()
    (folder / f"{log_rel}.marker.APPEND").touch()
    [done] = Rollbacker(HoodieTable(demo.base_path)).rollback(demo.failed_instant).executed
    assert done.rollback_log_files == 1
    _assert_rolled_back(demo)


def test_a_write_still_requested_only_loses_its_state_file(failed_table):
    demo = failed_table("COPY_ON_WRITE")
    hoodie = Path(demo.base_path) / ".hoodie"
    (hoodie / f"{demo.failed_instant}.inflight").unlink()
    [done] = Rollbacker(HoodieTable(demo.base_path)).rollback(demo.failed_instant).executed
    assert done.files_deleted == 0
    assert not [n for n in _hoodie(demo) if n.startswith(demo.failed_instant)]


def test_unknown_marker_type_is_refused_naming_the_file(failed_table):
    from hudi_assets.exceptions import CorruptFileError

    demo = failed_table("COPY_ON_WRITE")
    (marker_folder(demo) / "MARKERS.type").write_text("SOMETHING_ELSE")
    with pytest.raises(CorruptFileError, match=r"MARKERS\.type"):
        Rollbacker(HoodieTable(demo.base_path)).rollback(demo.failed_instant)
    assert f"{demo.failed_instant}.inflight" in _hoodie(demo)
    assert all((Path(demo.base_path) / f).exists() for f in demo.failed_files)


STEPS = ["ROLLBACK_REQUESTED", "ROLLBACK_INFLIGHT", "ROLLBACK_REQUEST:1", "ROLLBACK_REQUEST:2",
         "ROLLBACK_INSTANT_DELETED", "ROLLBACK_COMPLETE"]


@pytest.mark.parametrize("step", STEPS)
def test_killed_rollback_is_finished_by_a_rerun(failed_table, step):
    demo = failed_table("MERGE_ON_READ")
    kill = [sys.executable, str(Path(__file__).parents[1] / "support/kill_rollback.py"), demo.base_path,
            demo.failed_instant, step]
    proc = subprocess.run(kill, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    # Readers see the table as before the failed write at every point.
    assert read_rows(demo.base_path) == expected_rows(demo)
    rerun = [sys.executable, "-m", "hudi_assets.cli", "rollback", demo.base_path, demo.failed_instant]
    proc = subprocess.run(rerun, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _assert_rolled_back(demo)
    assert len(_rollback_logs(demo)) == 1  # a block a killed run wrote is reused, not appended again
    assert not pending_rollbacks(HoodieTable(demo.base_path))


def test_direct_markers_of_several_partitions_are_all_read(failed_table):
    from hudi_assets.rollback.markers import read_markers
    from hudi_assets.storage import Storage

    demo = failed_table("COPY_ON_WRITE")
    names = use_direct_markers(demo)
    markers = read_markers(Storage(demo.base_path), demo.failed_instant)
    assert sorted(f"{m.file_path}.marker.{m.io_type}" for m in markers) == sorted(names)


REAL = "sample_table__mor__parquet__v6_nonpartitioned_rollback"


def test_hudi_written_rollback_reads_and_its_command_block_is_ours(real_tables):
    """A rollback Hudi wrote for a failed deltacommit: the plan reads back, and the rollback log file
    (version + 1, token 1-0-1) holds byte for byte the block we write."""
    from hudi_assets.logformat import encode_block, rollback_command_block
    from hudi_assets.rollback import RollbackPlan

    if REAL not in real_tables:
        pytest.skip("../shared is absent: no Hudi-written rollback")
    base = real_tables[REAL]
    requested = base / ".hoodie/20250126040936578.rollback.requested"
    plan = RollbackPlan.deserialize(requested.read_bytes(), str(requested))
    assert (plan.instant_time, plan.action) == ("20250126040826878", "deltacommit")
    deletes, blocks = plan.requests
    assert deletes.files_to_delete[0].endswith("_20250126040826878.parquet")
    assert blocks.latest_base_instant == "20250126040823628" and not blocks.files_to_delete
    written = base / ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1"
    ours = encode_block(rollback_command_block("20250126040936578", plan.instant_time))
    assert written.read_bytes() == ours
