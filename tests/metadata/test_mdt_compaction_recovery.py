"""A metadata-table compaction left pending by a crash is completed under its own instant time, as
0.15's writer does on its next start (`runAnyPendingCompactions`): never a second compaction beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_assets.avro import deserialize_metadata
from hudi_assets.cli import main
from hudi_assets.demo import generate_table
from hudi_assets.listener import Listener, Step
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.compaction import (
    compaction_due,
    complete_pending_compaction,
    execute_compaction,
    merged_records,
    pending_compaction,
    schedule_compaction,
)
from hudi_assets.storage import Storage


class Crash(Exception):
    pass


@pytest.fixture
def mdt_demo(tmp_path) -> Path:
    table = generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", commits=10, bloom_entries=100,
                           seed=3, metadata_table=True)
    return Path(table.base_path)


def _merged(metadata: MetadataTable) -> dict[str, dict[str, dict]]:
    return {p: {k: {**v, "_hoodie_file_name": None} for s in metadata.file_slices(p)
                for k, v in merged_records(metadata.storage, s, metadata.block_filter)[0].items()}
            for p in metadata.partitions}


class CrashAfter(Listener):
    def __init__(self, step: Step, count: int):
        self.step, self.count = step, count

    def reached(self, step: Step, count: int = 0) -> None:
        if step is self.step and count >= self.count:
            raise Crash(step.name)


def test_an_inflight_compaction_is_rolled_back_to_requested_and_executed_again(mdt_demo):
    before = MetadataTable(str(mdt_demo))
    records, listing = _merged(before), before.files_listing.partitions
    instant_time = compaction_due(before, max_delta_commits=3)
    schedule_compaction(before, instant_time)
    with pytest.raises(Crash):
        execute_compaction(MetadataTable(str(mdt_demo)), instant_time,
                           listener=CrashAfter(Step.COMPACTION_BASE_FILE_WRITTEN, 1))
    half = MetadataTable(str(mdt_demo))
    pending = pending_compaction(half)
    assert pending is not None and pending.timestamp == instant_time and pending.state.name == "INFLIGHT"
    # The half-written base file is not read: the metadata table answers as before the crash.
    assert half.files_listing.partitions == listing
    assert compaction_due(half, max_delta_commits=1) is None  # nothing new is scheduled beside it
    written = sorted(mdt_demo.glob(f".hoodie/metadata/*/*_{instant_time}.hfile"))
    assert len(written) == 1

    complete_pending_compaction(half, pending)
    after = MetadataTable(str(mdt_demo))
    timeline = after.timeline
    assert [i.timestamp for i in timeline.filter_actions({"commit", "compaction"})
            if i.timestamp > before.latest_compaction().timestamp] == [instant_time]
    rollbacks = timeline.filter_actions({"rollback"}).filter_completed()
    rollback = deserialize_metadata(after.storage.read(timeline.state_file_path(rollbacks.last())),
                                    "HoodieRollbackMetadata", "rollback")
    assert rollback["commitsRollback"] == [instant_time]
    assert [Path(f).name for p in rollback["partitionMetadata"].values()
            for f in p["successDeleteFiles"]] == [written[0].name]
    assert after.latest_compaction().timestamp == instant_time
    assert after.files_listing.partitions == listing
    assert _merged(after) == records
    for partition in after.partitions:
        assert all(not s.log_files for s in after.file_slices(partition))
    assert main(["metadata", str(mdt_demo), "--validate"]) == 0


def test_a_requested_compaction_is_executed_from_its_plan(mdt_demo):
    before = MetadataTable(str(mdt_demo))
    records = _merged(before)
    instant_time = compaction_due(before, max_delta_commits=3)
    schedule_compaction(before, instant_time)
    half = MetadataTable(str(mdt_demo))
    complete_pending_compaction(half, pending_compaction(half))
    after = MetadataTable(str(mdt_demo))
    assert not after.timeline.filter_actions({"rollback"}).filter(lambda i: i.timestamp > instant_time)
    assert after.latest_compaction().timestamp == instant_time and _merged(after) == records


def _reference_schema(file_name: str) -> dict:
    import json
    import re

    from support.refdata import shared_path

    text = shared_path("reference", "avro", file_name).read_text()
    return json.loads(re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL))


def test_plan_and_commit_decode_with_hudis_schemas(mdt_demo):
    """The plan is read with Hudi's HoodieCompactionPlan as the reader schema; the completed commit
    (JSON in table version 6) has the fields of Hudi's HoodieCommitMetadata and HoodieWriteStat."""
    import io
    import json

    import fastavro

    named: dict = {}
    fastavro.parse_schema(_reference_schema("HoodieCompactionStrategy.avsc"), named_schemas=named)
    plan_schema = fastavro.parse_schema(_reference_schema("HoodieCompactionOperation.avsc"),
                                        named_schemas=named)
    commit_schema = _reference_schema("HoodieCommitMetadata.avsc")
    metadata = MetadataTable(str(mdt_demo))
    instant_time = compaction_due(metadata, max_delta_commits=3)
    schedule_compaction(metadata, instant_time)
    execute_compaction(MetadataTable(str(mdt_demo)), instant_time)
    timeline = mdt_demo / ".hoodie" / "metadata" / ".hoodie"
    [plan] = fastavro.reader(io.BytesIO((timeline / f"{instant_time}.compaction.requested").read_bytes()),
                             reader_schema=plan_schema)
    assert {op["fileId"] for op in plan["operations"]} and plan["version"] == 2
    assert all(op["deltaFilePaths"] and op["metrics"]["TOTAL_LOG_FILES"] == len(op["deltaFilePaths"])
               for op in plan["operations"])
    commit = json.loads((timeline / f"{instant_time}.commit").read_text())
    fields = {f["name"] for f in commit_schema["fields"]}
    assert set(commit) - {"partitionToWriteStats", "extraMetadata"} <= fields | {"compacted"}
    stat_type = next(f for f in commit_schema["fields"] if f["name"] == "partitionToWriteStats")["type"]
    stat_fields = {f["name"] for f in _record_in(stat_type)["fields"]}
    stats = [s for group in commit["partitionToWriteStats"].values() for s in group]
    # Jackson writes the Java POJO (fields the Avro record lacks, such as runtimeStats, too); every field
    # of the Avro record is there for the archiver's conversion but totalLogFiles, which the POJO does
    # not have (its Avro default is null).
    assert stats and all(stat_fields - set(s) <= {"totalLogFiles"} for s in stats)


def _record_in(type_) -> dict:
    if isinstance(type_, list):
        return next(_record_in(t) for t in type_ if t != "null")
    if type_.get("type") == "record":
        return type_
    return _record_in(type_.get("items") or type_.get("values"))
