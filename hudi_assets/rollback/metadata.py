"""Rollback plan (`HoodieRollbackPlan` v1, `<t>.rollback.requested`) and result
(`HoodieRollbackMetadata` v1, `<t>.rollback`) records.

Paths are kept as the strings Hudi writes: files to delete in full (no scheme for marker-based
requests on a local table, as `new Path(basePath, marker)` prints them), log files with the scheme a
listing returns. Maps are written in Java `HashMap` order, as Hudi builds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hudi_assets.avro import deserialize_metadata, serialize_metadata
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.java_collections import java_hashmap_order
from hudi_assets.table_config import TableConfig

ROLLBACK_PLAN_VERSION = 1
ROLLBACK_METADATA_VERSION = 1


def deletes_only(config: TableConfig) -> bool:
    """Hudi 1.x (table version 8 and up) rolls back by deleting files only: no command blocks, and
    RollbackHelper refuses a plan with log blocks to delete (apache/hudi @03ab509c)."""
    return config.is_hudi_1x


def _hashmap(mapping: dict[str, Any]) -> dict[str, Any]:
    return {key: mapping[key] for key in java_hashmap_order(mapping)}


@dataclass(frozen=True, slots=True)
class RollbackRequest:
    """One unit of a rollback: delete files, or log out the blocks of the failed instant in a file
    group's log (a rollback command block appended to the slice `latest_base_instant`)."""

    partition_path: str
    file_id: str = ""
    latest_base_instant: str = ""
    files_to_delete: tuple[str, ...] = ()
    log_blocks_to_delete: dict[str, int] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {"partitionPath": self.partition_path, "fileId": self.file_id,
                "latestBaseInstant": self.latest_base_instant, "filesToBeDeleted": list(self.files_to_delete),
                "logBlocksToBeDeleted": _hashmap(self.log_blocks_to_delete)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> RollbackRequest:
        return cls(record["partitionPath"], record.get("fileId") or "", record.get("latestBaseInstant") or "",
                   tuple(record.get("filesToBeDeleted") or ()),
                   dict(record.get("logBlocksToBeDeleted") or {}))


@dataclass(frozen=True, slots=True)
class RollbackPlan:
    """What a rollback of `instant_time` (`action`) will do; an instant that never got past requested
    has no requests (only its state file goes)."""

    instant_time: str
    action: str
    requests: tuple[RollbackRequest, ...] = ()
    version: int = ROLLBACK_PLAN_VERSION

    def to_record(self) -> dict[str, Any]:
        return {"instantToRollback": {"commitTime": self.instant_time, "action": self.action},
                "RollbackRequests": [r.to_record() for r in self.requests], "version": self.version}

    def serialize(self) -> bytes:
        return serialize_metadata("HoodieRollbackPlan", self.to_record())

    @classmethod
    def deserialize(cls, data: bytes, path: str) -> RollbackPlan:
        record = deserialize_metadata(data, "HoodieRollbackPlan", path)
        target = record.get("instantToRollback")
        if not target:
            raise CorruptFileError(path, "rollback plan names no instant to roll back")
        return cls(target["commitTime"], target["action"],
                   tuple(RollbackRequest.from_record(r) for r in record.get("RollbackRequests") or ()),
                   record.get("version") or ROLLBACK_PLAN_VERSION)


@dataclass
class PartitionRollbackStat:
    """One partition's outcome (Hudi's HoodieRollbackStat), merged over its requests."""

    partition_path: str
    success_delete_files: list[str] = field(default_factory=list)
    failed_delete_files: list[str] = field(default_factory=list)
    rollback_log_files: dict[str, int] = field(default_factory=dict)  # command-block log file -> size
    log_files_from_failed_commit: dict[str, int] = field(default_factory=dict)

    def merge(self, other: PartitionRollbackStat) -> None:
        """RollbackUtils.mergeRollbackStat."""
        self.success_delete_files.extend(other.success_delete_files)
        self.failed_delete_files.extend(other.failed_delete_files)
        self.rollback_log_files.update(other.rollback_log_files)
        self.log_files_from_failed_commit.update(other.log_files_from_failed_commit)


def rollback_metadata_record(rollback_time: str, time_taken_ms: int, instant_time: str, action: str,
                             stats: list[PartitionRollbackStat]) -> dict[str, Any]:
    """HoodieRollbackMetadata as TimelineMetadataUtils.convertRollbackMetadata builds it."""
    partitions = {
        s.partition_path: {
            "partitionPath": s.partition_path,
            "successDeleteFiles": list(s.success_delete_files),
            "failedDeleteFiles": list(s.failed_delete_files),
            "rollbackLogFiles": _hashmap(s.rollback_log_files),
            "logFilesFromFailedCommit": _hashmap(s.log_files_from_failed_commit),
        }
        for s in stats
    }
    return {
        "startRollbackTime": rollback_time,
        "timeTakenInMillis": time_taken_ms,
        "totalFilesDeleted": sum(len(s.success_delete_files) for s in stats),
        "commitsRollback": [instant_time],
        "partitionMetadata": _hashmap(partitions),
        "version": ROLLBACK_METADATA_VERSION,
        "instantsRollback": [{"commitTime": instant_time, "action": action}],
    }


def serialize_rollback_metadata(record: dict[str, Any]) -> bytes:
    return serialize_metadata("HoodieRollbackMetadata", record)
