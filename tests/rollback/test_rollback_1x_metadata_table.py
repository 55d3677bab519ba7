"""The metadata table's side of a rollback on table version 9 (`metadata.deltacommit_rollback`), on its
own against the Java-written fixture: Hudi 1.x writes no records, it rolls back the metadata
deltacommit of the failed instant at the data rollback's instant time."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support.rollback_1x import (
    FAILED,
    JAVA_BASE,
    MDT_TIMELINE,
    ROLLBACK,
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
from hudi_assets.exceptions import HudiInputError
from hudi_assets.metadata.deltacommit_rollback import open_metadata_table, roll_back_metadata_deltacommit
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.metadata.rollback_validation import check_metadata_rollback
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.rollback import Rollbacker
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.layout2 import parse_layout2_name


def _sorted_plan(plan: dict) -> dict:
    return {**plan, "RollbackRequests": sorted(plan["RollbackRequests"], key=lambda r: r["filesToBeDeleted"])}


def _sorted_metadata(record: dict) -> dict:
    partitions = {name: {**p, "successDeleteFiles": sorted(p["successDeleteFiles"])}
                  for name, p in record["partitionMetadata"].items()}
    return {**record, "partitionMetadata": partitions}


def test_the_metadata_deltacommit_is_rolled_back_as_java_rolled_it_back(tmp_path):
    base = failed_v9(tmp_path, metadata_table=True)
    java_plan, java_metadata = java_records(java_table(tmp_path), MDT_TIMELINE)
    mdt = open_metadata_table(HoodieTable(str(base)))
    check_metadata_rollback(mdt, mdt.reload_timeline(), FAILED)
    record = roll_back_metadata_deltacommit(mdt, FAILED, ROLLBACK)
    timeline = base / MDT_TIMELINE
    plan_file = timeline / f"{ROLLBACK}.rollback.requested"
    plan = deserialize_metadata(plan_file.read_bytes(), "HoodieRollbackPlan", str(plan_file))
    # Java lists the metadata partitions in another order: the requests are compared as a set.
    assert _sorted_plan(plan_relative(plan, str(base))) == _sorted_plan(plan_relative(java_plan, JAVA_BASE))
    [completed] = timeline.glob(f"{ROLLBACK}_*.rollback")
    assert (timeline / f"{ROLLBACK}.rollback.inflight").read_bytes() == b""
    written = deserialize_metadata(completed.read_bytes(), "HoodieRollbackMetadata", str(completed))
    assert written == record
    ours, theirs = (_sorted_metadata(metadata_relative(r, b)) for r, b in
                    ((written, str(base)), (java_metadata, JAVA_BASE)))
    assert ({k: v for k, v in ours.items() if k != "timeTakenInMillis"}
            == {k: v for k, v in theirs.items() if k != "timeTakenInMillis"})
    assert list(ours["partitionMetadata"]) == list(theirs["partitionMetadata"])  # Java's HashMap order
    assert not list(timeline.glob(f"{FAILED}*"))
    java_mdt = MetadataTable(str(java_table(tmp_path)))
    assert MetadataTable(str(base)).files_listing.partitions == java_mdt.files_listing.partitions
    assert roll_back_metadata_deltacommit(mdt, FAILED, ROLLBACK) is None  # nothing left to undo


def test_no_metadata_deltacommit_of_the_failed_instant_means_nothing_to_do(tmp_path):
    base = failed_v9(tmp_path, metadata_table=True)
    for state in (base / MDT_TIMELINE).glob(f"{FAILED}*"):
        state.unlink()
    before = files(base)
    mdt = open_metadata_table(HoodieTable(str(base)))
    assert roll_back_metadata_deltacommit(mdt, FAILED, ROLLBACK) is None
    assert files(base) == before


def test_a_write_at_or_before_the_latest_metadata_compaction_is_refused(tmp_path):
    """validateRollback: the compacted base file holds it; Hudi asks for a restore."""
    base = failed_v9(tmp_path, metadata_table=True)
    timeline = base / MDT_TIMELINE
    completed = next(timeline.glob("20260403184238571_*.deltacommit"))
    shutil.copy(completed, timeline / "20260403184250000_20260403184251000.commit")
    (timeline / "20260403184250000.compaction.requested").write_bytes(b"")
    before = files(base)
    mdt = open_metadata_table(HoodieTable(str(base)))
    for run in (lambda: check_metadata_rollback(mdt, mdt.reload_timeline(), FAILED),
                lambda: roll_back_metadata_deltacommit(mdt, FAILED, ROLLBACK)):
        with pytest.raises(HudiInputError, match="at or before the metadata table's latest compaction"):
            run()
    assert files(base) == before


def test_a_rollback_through_the_1x_sink_matches_java_on_both_tables(tmp_path):
    """End to end through the faces' `MetadataTableSink` (which hands a 1.x table to
    `DeltacommitRollbackSink`): one rollback instant on both timelines, as in the Java-written fixture."""
    base = failed_v9(tmp_path, metadata_table=True)
    java = java_table(tmp_path)
    table = HoodieTable(str(base))
    [done] = Rollbacker(table, metadata=MetadataTableSink(table)).rollback(FAILED).executed
    for folder in (TIMELINE, MDT_TIMELINE):
        plan_file = base / folder / f"{done.rollback_instant}.rollback.requested"
        plan = deserialize_metadata(plan_file.read_bytes(), "HoodieRollbackPlan", str(plan_file))
        java_plan, _ = java_records(java, folder)
        ours, theirs = plan_relative(plan, str(base)), plan_relative(java_plan, JAVA_BASE)
        assert _sorted_plan(ours) == _sorted_plan(theirs)
        assert len(list((base / folder).glob(f"{done.rollback_instant}_*.rollback"))) == 1
        assert not list((base / folder).glob(f"{FAILED}*"))
    assert rows(base) == rows(java)
    listed = MetadataTable(str(base)).files_listing.partitions
    assert listed == MetadataTable(str(java)).files_listing.partitions
    assert main(["metadata", str(base), "--validate"]) == 0


def test_the_1x_sink_refuses_before_any_delete_when_a_compaction_holds_the_failed_write(tmp_path):
    base = failed_v9(tmp_path, metadata_table=True)
    timeline = base / MDT_TIMELINE
    shutil.copy(next(timeline.glob("20260403184238571_*.deltacommit")),
                timeline / "20260403184250000_20260403184251000.commit")
    (timeline / "20260403184250000.compaction.requested").write_bytes(b"")
    before = files(base)
    table = HoodieTable(str(base))
    with pytest.raises(HudiInputError, match="at or before the metadata table's latest compaction"):
        Rollbacker(table, metadata=MetadataTableSink(table)).rollback(FAILED)
    assert files(base) == before


# The data rollback's steps, then its metadata table's (the second of each), then the data's again.
STEPS = ["ROLLBACK_REQUEST:1", "ROLLBACK_INFLIGHT:2", "ROLLBACK_REQUEST:2", "ROLLBACK_REQUEST:4",
         "ROLLBACK_INSTANT_DELETED:1", "ROLLBACK_COMPLETE:1", "MDT_ROLLED_BACK", "ROLLBACK_INSTANT_DELETED:2",
         "ROLLBACK_COMPLETE:2"]


@pytest.mark.parametrize("step", STEPS)
def test_a_killed_rollback_through_the_1x_sink_is_finished_by_a_rerun(tmp_path, step):
    base = failed_v9(tmp_path, metadata_table=True)
    java = java_table(tmp_path)
    expected = rows(java)
    script = Path(__file__).parents[1] / "support/kill_rollback.py"
    proc = subprocess.run([sys.executable, str(script), str(base), FAILED, step],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    assert rows(base) == expected
    table = HoodieTable(str(base))
    Rollbacker(table, metadata=MetadataTableSink(table)).rollback(FAILED)
    for folder in (TIMELINE, MDT_TIMELINE):
        assert len(list((base / folder).glob("*_*.rollback"))) == 1
        assert not list((base / folder).glob(f"{FAILED}*"))
    data_rollback = parse_layout2_name(next((base / TIMELINE).glob("*_*.rollback")).name)[0].timestamp
    assert next((base / MDT_TIMELINE).glob("*_*.rollback")).name.startswith(f"{data_rollback}_")
    assert rows(base) == expected
    listed = MetadataTable(str(base)).files_listing.partitions
    assert listed == MetadataTable(str(java)).files_listing.partitions


def test_a_rollback_reads_each_timeline_once_to_decide(tmp_path, monkeypatch):
    """The rollbacker decides (already rolled back? rollbackable? the plan) on one read of the data
    timeline under the lock, and the metadata table's side on one read of its own; the rest are the
    executors' reads after each write. Pinned: 12 and 11 listings before; then 8 and 7, while the
    metadata table's refusal read the data timeline again for its pending writes."""
    base = failed_v9(tmp_path, metadata_table=True)
    listed: Counter[str] = Counter()
    listing = Storage.list

    def recording(storage, folder, *args, **kwargs):
        listed[storage.uri(folder).split(str(base))[-1]] += 1
        return listing(storage, folder, *args, **kwargs)

    monkeypatch.setattr(Storage, "list", recording)
    table = HoodieTable(str(base))
    assert Rollbacker(table, metadata=MetadataTableSink(table)).rollback(FAILED).executed
    assert listed[f"/{TIMELINE}"] == 7 and listed[f"/{MDT_TIMELINE}"] == 7
