"""The archived timeline of a table: entries newest file first, payloads, torn tails, merge plans."""

from __future__ import annotations

import json

import pytest

from hudi_assets.avro import java_schema_json, serialize_metadata
from hudi_assets.cli import main
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.logformat.archived import archive_file_name, encode_archive_file
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline.archived import MERGE_PLAN_FILE, ArchivedTimeline
from hudi_assets.timeline.instant import Instant, State

SCHEMA = java_schema_json("HoodieArchivedMetaEntry")


def _entry(ts: str, action: str, state: str, **payload) -> dict:
    return {"commitTime": ts, "actionType": action, "actionState": state, "version": None,
            "stateTransitionTime": ts, **payload}


def _commit(partition: str) -> dict:
    stat = {"fileId": "f-0", "path": f"{partition}/f-0_0-1-1_001.parquet", "prevCommit": "null",
            "numWrites": 1, "numDeletes": 0, "numUpdateWrites": 0, "totalWriteBytes": 10,
            "totalWriteErrors": 0, "partitionPath": partition, "totalLogRecords": 0,
            "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0,
            "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
            "fileSizeInBytes": 10}
    return {"partitionToWriteStats": {partition: [stat]}, "extraMetadata": {"ROLLING_STAT": ""},
            "version": 1, "operationType": "UPSERT"}


@pytest.fixture
def table(tmp_path) -> HoodieTable:
    storage = Storage(str(tmp_path))
    write_table_config(storage, {"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE",
                                 "hoodie.table.version": "6", "hoodie.archivelog.folder": "archived"})
    storage.write(".hoodie/004.commit", b"")
    older = [_entry("001", "commit", "REQUESTED", hoodieCommitMetadata=None),
             _entry("001", "commit", "INFLIGHT", hoodieCommitMetadata=_commit("p1")),
             _entry("001", "commit", "COMPLETED", hoodieCommitMetadata=_commit("p1")),
             _entry("002", "clean", "COMPLETED", hoodieCleanMetadata={
                 "startCleanTime": "002", "timeTakenInMillis": 5, "totalFilesDeleted": 3,
                 "earliestCommitToRetain": "001", "lastCompletedCommitTimestamp": "001",
                 "partitionMetadata": {}, "version": 2})]
    newer = [_entry("003", "commit", "COMPLETED", hoodieCommitMetadata=_commit("p2"))]
    storage.write(f".hoodie/archived/{archive_file_name(1)}", encode_archive_file(older, SCHEMA, 2))
    storage.write(f".hoodie/archived/{archive_file_name(2)}", encode_archive_file(newer, SCHEMA))
    return HoodieTable(str(tmp_path))


def test_entries_newest_file_first_with_payloads(table):
    archived = ArchivedTimeline.load(table)
    entries = list(archived.entries())
    assert [str(e.instant) for e in entries] == [
        "[003__commit__COMPLETED]", "[001__commit__REQUESTED]", "[001__commit__INFLIGHT]",
        "[001__commit__COMPLETED]", "[002__clean__COMPLETED]",
    ]
    assert entries[0].payload["partitionToWriteStats"]["p2"][0]["fileId"] == "f-0"
    assert entries[4].payload["totalFilesDeleted"] == 3
    assert [str(i) for i in archived.instants()] == [
        "[001__commit__COMPLETED]", "[002__clean__COMPLETED]", "[003__commit__COMPLETED]"]


def test_a_torn_tail_is_skipped(table):
    path = f".hoodie/archived/{archive_file_name(2)}"
    extra = encode_archive_file([_entry("005", "commit", "COMPLETED")], SCHEMA)
    table.storage.write(path, table.storage.read(path) + extra[: len(extra) // 2])
    assert ArchivedTimeline.load(table).instants().timestamps == ["001", "002", "003"]


def test_unreadable_file_tolerated_only_when_a_merge_plan_names_it(table):
    merged = archive_file_name(3)
    table.storage.write(f".hoodie/archived/{merged}", b"not a log file")
    with pytest.raises(CorruptFileError, match=merged.replace(".", r"\.")):
        list(ArchivedTimeline.load(table).entries())
    plan = {"version": 1, "candidate": [table.storage.uri(f".hoodie/archived/{archive_file_name(1)}")],
            "mergedArchiveFileName": merged}
    table.storage.write(f".hoodie/archived/{MERGE_PLAN_FILE}",
                        serialize_metadata("HoodieMergeArchiveFilePlan", plan))
    assert ArchivedTimeline.load(table).instants().timestamps == ["001", "002", "003"]


def test_timeline_command_shows_archived_then_active(table, capsys):
    assert main(["timeline", table.base_path, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["instants"]
    assert [(r["timeline"], r["instant"], r["action"]) for r in rows] == [
        ("archived", "001", "commit"), ("archived", "002", "clean"), ("archived", "003", "commit"),
        ("active", "004", "commit")]
    assert Instant("004", "commit", State.COMPLETED) in table.active_timeline.state_files
