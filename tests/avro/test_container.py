"""Container files: round trips, Java-identical layout, real Hudi files, and refusal of bad input."""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path
from typing import Any

import fastavro
import pytest

from hudi_assets.avro import (
    deserialize_any,
    deserialize_metadata,
    java_schema_json,
    parsed,
    serialize_metadata,
)
from hudi_assets.avro.container import MAGIC
from hudi_assets.exceptions import CorruptFileError

BASE = "s3a://bucket/warehouse/trips"
CLEAN_PLAN_V2 = {
    "earliestInstantToRetain": {"timestamp": "20250101000000000", "action": "commit", "state": "COMPLETED"},
    "lastCompletedCommitTimestamp": "20250102000000000",
    "policy": "KEEP_LATEST_COMMITS",
    "filesToBeDeletedPerPartition": {},
    "version": 2,
    "filePathsToBeDeletedPerPartition": {
        "city=sf": [
            {"filePath": f"{BASE}/city=sf/f1-0_0-1-1_20241231000000000.parquet", "isBootstrapBaseFile": None},
        ],
        "city=nyc": [],
    },
    "partitionsToBeDeleted": ["city=old"],
    "extraMetadata": {"savepointed_timestamps": ""},
}
CLEAN_PARTITION = {
    "partitionPath": "city=sf",
    "policy": "KEEP_LATEST_COMMITS",
    "deletePathPatterns": ["f1-0_0-1-1_20241231000000000.parquet"],
    "successDeleteFiles": ["f1-0_0-1-1_20241231000000000.parquet"],
    "failedDeleteFiles": [],
    "isPartitionDeleted": False,
}
CLEAN_METADATA_V2 = {
    "startCleanTime": "20250103000000000",
    "timeTakenInMillis": 1234,
    "totalFilesDeleted": 1,
    "earliestCommitToRetain": "20250101000000000",
    "lastCompletedCommitTimestamp": "20250102000000000",
    "partitionMetadata": {"city=sf": CLEAN_PARTITION},
    "version": 2,
    "bootstrapPartitionMetadata": {},
    "extraMetadata": None,
}
SAVEPOINT = {
    "savepointedBy": "hudi-assets",
    "savepointedAt": 1735689600,
    "comments": "before backfill",
    "partitionMetadata": {
        "city=sf": {"partitionPath": "city=sf", "savepointDataFile": ["f1-0_0-1-1_20250101.parquet"]},
    },
    "version": 1,
}
ROLLBACK_METADATA = {
    "startRollbackTime": "20250104000000000",
    "timeTakenInMillis": 195,
    "totalFilesDeleted": 1,
    "commitsRollback": ["20250103000000000"],
    "partitionMetadata": {
        "": {
            "partitionPath": "",
            "successDeleteFiles": [f"{BASE}/f2-0_1-2-3_20250103000000000.parquet"],
            "failedDeleteFiles": [],
            "rollbackLogFiles": {f"{BASE}/.f1-0_20250101000000000.log.2_1-0-1": 105},
            "logFilesFromFailedCommit": {f"{BASE}/.f1-0_20250101000000000.log.1_0-33-43": 11828},
        }
    },
    "version": 1,
    "instantsRollback": [{"commitTime": "20250103000000000", "action": "deltacommit"}],
}
COMPACTION_PLAN = {
    "operations": [
        {
            "baseInstantTime": "20250101000000000",
            "deltaFilePaths": [".f1-0_20250101000000000.log.1_0-1-1"],
            "dataFilePath": "f1-0_0-1-1_20250101000000000.parquet",
            "fileId": "f1-0",
            "partitionPath": "city=sf",
            "metrics": {"TOTAL_LOG_FILES": 1.0, "TOTAL_IO_MB": 0.5},
            "bootstrapFilePath": None,
        }
    ],
    "extraMetadata": None,
    "version": 2,
    "strategy": {"compactorClassName": None, "strategyParams": {"k": "v"}, "version": 1},
    "preserveHoodieMetadata": True,
}
REQUESTED_REPLACE = {
    "operationType": "CLUSTER",
    "clusteringPlan": {
        "inputGroups": [
            {
                "slices": [
                    {
                        "dataFilePath": f"{BASE}/city=sf/f1-0_0-1-1_20250101000000000.parquet",
                        "deltaFilePaths": [],
                        "fileId": "f1-0",
                        "partitionPath": "city=sf",
                        "bootstrapFilePath": "",
                        "version": 1,
                    }
                ],
                "metrics": {"TOTAL_IO_MB": 1.0},
                "numOutputFileGroups": 1,
                "extraMetadata": None,
                "version": 1,
            }
        ],
        "strategy": {"strategyClassName": "SparkSortAndSizeStrategy", "strategyParams": {}, "version": 1},
        "extraMetadata": {},
        "version": 1,
        "preserveHoodieMetadata": True,
    },
    "extraMetadata": {},
    "version": 1,
}
MERGE_ARCHIVE_PLAN = {
    "version": 1,
    "candidate": [f"{BASE}/.hoodie/archived/.commits_.archive.{n}_1-0-1" for n in (1, 2)],
    "mergedArchiveFileName": ".commits_.archive.3_1-0-1",
}
ROUND_TRIPS = {
    "HoodieCleanerPlan": CLEAN_PLAN_V2,
    "HoodieCleanMetadata": CLEAN_METADATA_V2,
    "HoodieSavepointMetadata": SAVEPOINT,
    "HoodieRollbackMetadata": ROLLBACK_METADATA,
    "HoodieCompactionPlan": COMPACTION_PLAN,
    "HoodieRequestedReplaceMetadata": REQUESTED_REPLACE,
    "HoodieMergeArchiveFilePlan": MERGE_ARCHIVE_PLAN,
}
ROLLBACK_TABLE = "sample_table__mor__parquet__v6_nonpartitioned_rollback"
OVERWRITE_TABLE = "sample_table__cow__v6_simplekeygen_nonhivestyle_overwritetable"
V8_TABLE = "quickstart_trips_table__mor__avro__v8_trips_8i3u1d"


def _corrupt(data: bytes, schema_name: str = "HoodieCleanerPlan", path: str = "t/.hoodie/x") -> str:
    with pytest.raises(CorruptFileError) as caught:
        deserialize_metadata(data, schema_name, path)
    assert caught.value.path == path
    assert str(caught.value).startswith(f"{path}: ")
    return caught.value.problem


@pytest.mark.parametrize("schema_name", sorted(ROUND_TRIPS))
def test_round_trip(schema_name: str) -> None:
    record = ROUND_TRIPS[schema_name]
    data = serialize_metadata(schema_name, record)
    assert deserialize_metadata(data, schema_name, "p") == record
    assert deserialize_any(data, "p") == (schema_name, record)


@pytest.mark.parametrize("schema_name", sorted(ROUND_TRIPS))
def test_layout_is_what_java_writes(schema_name: str) -> None:
    data = serialize_metadata(schema_name, ROUND_TRIPS[schema_name])
    sync = data[-16:]
    assert data.startswith(MAGIC)
    assert data.count(sync) == 2  # after the header and after the single block
    assert fastavro.reader(io.BytesIO(data)).metadata == {"avro.schema": java_schema_json(schema_name)}
    assert [block.num_records for block in fastavro.block_reader(io.BytesIO(data))] == [1]


@pytest.mark.shared
@pytest.mark.parametrize("schema_name", sorted(ROUND_TRIPS))
def test_reference_schema_reads_our_files(
    schema_name: str, reference_schemas: dict[str, dict[str, Any]]
) -> None:
    record = ROUND_TRIPS[schema_name]
    reader_schema = fastavro.parse_schema(reference_schemas[schema_name])
    data = serialize_metadata(schema_name, record)
    assert list(fastavro.reader(io.BytesIO(data), reader_schema=reader_schema)) == [record]


def test_missing_fields_take_schema_defaults() -> None:
    data = serialize_metadata("HoodieCleanerPlan", {"policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert deserialize_metadata(data, "HoodieCleanerPlan", "p") == {
        "earliestInstantToRetain": None,
        "lastCompletedCommitTimestamp": "",
        "policy": "KEEP_LATEST_FILE_VERSIONS",
        "filesToBeDeletedPerPartition": None,
        "version": 1,
        "filePathsToBeDeletedPerPartition": None,
        "partitionsToBeDeleted": None,
        "extraMetadata": None,
    }


def test_record_that_does_not_fit_is_refused() -> None:
    with pytest.raises(ValueError, match="record does not fit HoodieCleanerPlan"):
        serialize_metadata("HoodieCleanerPlan", {"policy": 3})
    with pytest.raises(ValueError, match="record does not fit HoodieSavepointMetadata"):
        serialize_metadata("HoodieSavepointMetadata", {"comments": "no savepointedBy"})
    with pytest.raises(ValueError, match="more fields than the schema specifies: polcy"):
        serialize_metadata("HoodieCleanerPlan", {"policy": "KEEP_LATEST_COMMITS", "polcy": "typo"})


def test_empty_and_garbage_input_is_corrupt() -> None:
    noise = random.Random(6).randbytes(300)
    assert _corrupt(b"") == "not an Avro container file (empty file)"
    assert "not an Avro container file" in _corrupt(noise)
    assert "not an Avro container file" in _corrupt(b'{\n  "partitionToWriteStats" : { } }')
    assert _corrupt(MAGIC + noise).startswith("unreadable Avro container header")


def test_every_truncation_of_our_file_is_corrupt() -> None:
    data = serialize_metadata("HoodieCleanerPlan", CLEAN_PLAN_V2)
    for size in range(len(data)):
        _corrupt(data[:size])


def test_wrong_record_type_is_corrupt() -> None:
    data = serialize_metadata("HoodieCleanMetadata", CLEAN_METADATA_V2)
    assert _corrupt(data) == "expected a HoodieCleanerPlan record, found HoodieCleanMetadata"


def test_record_count_other_than_one_is_corrupt() -> None:
    for count in (0, 2):
        buffer = io.BytesIO()
        fastavro.writer(buffer, parsed("HoodieCleanerPlan"), [CLEAN_PLAN_V2] * count)
        assert _corrupt(buffer.getvalue()) == f"expected exactly one HoodieCleanerPlan record, found {count}"


def test_incompatible_writer_schema_is_corrupt() -> None:
    schema = {
        "type": "record",
        "name": "HoodieCleanerPlan",
        "namespace": "org.apache.hudi.avro.model",
        "fields": [{"name": "policy", "type": "int"}],
    }
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), [{"policy": 1}])
    assert _corrupt(buffer.getvalue()).startswith("record does not match HoodieCleanerPlan: ")


def test_unknown_record_type_is_read_with_its_writer_schema() -> None:
    schema = {
        "type": "record",
        "name": "org.apache.hudi.avro.model.HoodieIndexPlan",
        "fields": [{"name": "version", "type": ["int", "null"], "default": 1}],
    }
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), [{"version": 1}])
    assert deserialize_any(buffer.getvalue(), "p") == ("HoodieIndexPlan", {"version": 1})


# Real files written by Hudi


def _real(files: dict[str, tuple[Path, str]], table: str, name: str) -> tuple[bytes, str]:
    path, schema_name = files[f"{table}/{name}"]
    return path.read_bytes(), schema_name


@pytest.mark.shared
def test_every_real_v6_metadata_file_decodes(v6_metadata_files: dict[str, tuple[Path, str]]) -> None:
    assert {
        f"{ROLLBACK_TABLE}/20250126040936578.rollback.requested",
        f"{ROLLBACK_TABLE}/20250126040936578.rollback",
        f"{OVERWRITE_TABLE}/20240707001303088.replacecommit.requested",
    } <= set(v6_metadata_files)
    for path, schema_name in v6_metadata_files.values():
        data = path.read_bytes()
        record = deserialize_metadata(data, schema_name, str(path))
        assert deserialize_any(data, str(path)) == (schema_name, record)


@pytest.mark.shared
def test_real_files_reencode_byte_for_byte(v6_metadata_files: dict[str, tuple[Path, str]]) -> None:
    """Same schema text, same encoding: only the random sync marker tells our file from Hudi's."""
    for path, schema_name in v6_metadata_files.values():
        real = path.read_bytes()
        ours = serialize_metadata(schema_name, deserialize_metadata(real, schema_name, str(path)))
        assert ours.replace(ours[-16:], real[-16:]) == real, path


@pytest.mark.shared
def test_real_rollback_plan(v6_metadata_files: dict[str, tuple[Path, str]]) -> None:
    data, schema_name = _real(v6_metadata_files, ROLLBACK_TABLE, "20250126040936578.rollback.requested")
    plan = deserialize_metadata(data, schema_name, "rollback.requested")
    assert plan["instantToRollback"] == {"commitTime": "20250126040826878", "action": "deltacommit"}
    assert plan["version"] == 1
    base_file_request, log_request = plan["RollbackRequests"]
    assert base_file_request["filesToBeDeleted"][0].endswith(
        "/cd329d8f-0ce4-4654-84ab-2f769aae5034-0_1-33-44_20250126040826878.parquet"
    )
    assert base_file_request["logBlocksToBeDeleted"] == {}
    assert log_request["latestBaseInstant"] == "20250126040823628"
    assert list(log_request["logBlocksToBeDeleted"].values()) == [11828]
    assert next(iter(log_request["logBlocksToBeDeleted"])).startswith("file:/")


@pytest.mark.shared
def test_real_rollback_metadata(v6_metadata_files: dict[str, tuple[Path, str]]) -> None:
    data, schema_name = _real(v6_metadata_files, ROLLBACK_TABLE, "20250126040936578.rollback")
    metadata = deserialize_metadata(data, schema_name, "rollback")
    assert metadata["startRollbackTime"] == "20250126040936578"
    assert metadata["totalFilesDeleted"] == 1
    assert metadata["commitsRollback"] == ["20250126040826878"]
    assert metadata["instantsRollback"] == [{"commitTime": "20250126040826878", "action": "deltacommit"}]
    partition = metadata["partitionMetadata"][""]
    assert len(partition["successDeleteFiles"]) == 1
    assert partition["failedDeleteFiles"] == []
    assert list(partition["rollbackLogFiles"].values()) == [105]
    assert list(partition["logFilesFromFailedCommit"].values()) == [11828]


@pytest.mark.shared
def test_real_insert_overwrite_requested_replace_is_all_null(
    v6_metadata_files: dict[str, tuple[Path, str]],
) -> None:
    data, schema_name = _real(v6_metadata_files, OVERWRITE_TABLE, "20240707001303088.replacecommit.requested")
    assert deserialize_metadata(data, schema_name, "replacecommit.requested") == {
        "operationType": None,
        "clusteringPlan": None,
        "extraMetadata": None,
        "version": None,
    }


@pytest.mark.shared
def test_truncated_real_file_is_corrupt(v6_metadata_files: dict[str, tuple[Path, str]]) -> None:
    data, schema_name = _real(v6_metadata_files, ROLLBACK_TABLE, "20250126040936578.rollback.requested")
    for size in range(len(data)):
        _corrupt(data[:size], schema_name, "t/.hoodie/20250126040936578.rollback.requested")


@pytest.mark.shared
def test_newer_hudi_compaction_plan_resolves(shared_dir: Path, tmp_path: Path) -> None:
    """A 1.x plan carries a field 0.14 lacks (missingSchedulePartitions); resolution must skip it."""
    with zipfile.ZipFile(shared_dir / "tables" / f"{V8_TABLE}.zip") as zf:
        member = "v8_trips_8i3u1d/.hoodie/timeline/20251220210129235.compaction.requested"
        data = Path(zf.extract(member, tmp_path)).read_bytes()
    plan = deserialize_metadata(data, "HoodieCompactionPlan", member)
    assert "missingSchedulePartitions" not in plan
    assert plan["version"] == 2
    first = plan["operations"][0]
    assert first["partitionPath"] == "city=chennai"
    assert first["baseInstantTime"] == "20251220210108078"
    assert first["fileId"] == "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0"
    assert first["dataFilePath"] == f"{first['fileId']}_2-986-2794_20251220210108078.parquet"
