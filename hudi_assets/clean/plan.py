"""Clean plan (`HoodieCleanerPlan` v2) and clean result (`HoodieCleanMetadata` v2) records.

Maps are kept in the iteration order of the Java `HashMap` Hudi holds them in and written in that
order, so the Avro bytes match Hudi's: the planner builds a plan's maps in the order
CleanPlanActionExecutor leaves them, and a plan read from a file gets the order of the `HashMap` Avro's
reader fills (`new HashMap<>(size)` in file order), which Hudi writes back when it archives the plan
or copies its `extraMetadata` into the clean metadata.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from hudi_assets.avro import deserialize_metadata, serialize_metadata
from hudi_assets.engine import gc_paused
from hudi_assets.java_collections import JavaHashMap, java_hashmap_order
from hudi_assets.timeline.instant import Instant

CLEAN_PLAN_VERSION = 2
CLEAN_METADATA_VERSION = 2
SAVEPOINTED_TIMESTAMPS = "savepointed_timestamps"


def _hashmap(mapping: dict[str, Any]) -> dict[str, Any]:
    """A map filled by `put` in this order (`new HashMap<>()`, `Collectors.toMap`)."""
    return {key: mapping[key] for key in java_hashmap_order(mapping)}


def _as_read(mapping: dict[str, Any] | None) -> dict[str, Any] | None:
    """A map as Avro's reader leaves it: `new HashMap<>(size)` filled in file order."""
    if mapping is None:
        return None
    table = JavaHashMap(len(mapping))
    for key in mapping:
        table.put(key)
    return {key: mapping[key] for key in table.order()}


class CleanFileInfo(NamedTuple):
    """A file to delete: its full path as Hudi records it, and whether it is a bootstrap source file
    (None where a plan read holds null: written back so). A tuple: a plan holds one per planned
    file, millions of them on a large table; it is also the plan's `HoodieCleanFileInfo` record as
    encoded and decoded (the same fields in the same order)."""

    file_path: str
    is_bootstrap_base_file: bool | None = False


_FILE_INFO_TUPLES = {"HoodieCleanFileInfo": CleanFileInfo}


@dataclass(repr=False)
class CleanerPlan:
    """What a clean will delete; `earliest_instant_to_retain` is None for KEEP_LATEST_FILE_VERSIONS.

    Maps and lists are written in their order here (see the module docstring). `extra_metadata` is
    None only for a plan read from a file that holds null there; Hudi 0.15 plans hold a map.
    """

    earliest_instant_to_retain: Instant | None
    last_completed_commit_timestamp: str
    policy: str
    file_paths_to_delete: dict[str, list[CleanFileInfo]] = field(default_factory=dict)
    partitions_to_delete: list[str] = field(default_factory=list)
    extra_metadata: dict[str, str] | None = field(default_factory=dict)
    version: int = CLEAN_PLAN_VERSION

    @property
    def ectr_timestamp(self) -> str | None:
        return self.earliest_instant_to_retain.timestamp if self.earliest_instant_to_retain else None

    @property
    def total_files(self) -> int:
        return sum(len(files) for files in self.file_paths_to_delete.values())

    def summary(self) -> str:
        """A few lines a person reads: policy, earliest commit to retain, files per partition."""
        ectr = self.earliest_instant_to_retain
        lines = [f"policy {self.policy}, earliest commit to retain "
                 f"{f'{ectr.timestamp} ({ectr.action})' if ectr else 'none'}, last completed commit "
                 f"{self.last_completed_commit_timestamp or 'none'}: {self.total_files} files in "
                 f"{sum(1 for files in self.file_paths_to_delete.values() if files)} partitions"]
        lines += [f"  {partition or '(non-partitioned)'}: {len(files)} files"
                  for partition, files in sorted(self.file_paths_to_delete.items()) if files]
        lines += [f"  partition to delete: {partition}" for partition in self.partitions_to_delete]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"CleanerPlan(policy={self.policy!r}, ectr={self.ectr_timestamp!r}, "
                f"files={self.total_files}, partitions_to_delete={len(self.partitions_to_delete)})")

    def to_record(self) -> dict[str, Any]:
        """The `HoodieCleanerPlan` record, with a dict per file (as fastavro takes it)."""
        record = self._record()
        record["filePathsToBeDeletedPerPartition"] = {
            partition: [{"filePath": f.file_path, "isBootstrapBaseFile": f.is_bootstrap_base_file}
                        for f in files]
            for partition, files in self.file_paths_to_delete.items()
        }
        return record

    def _record(self) -> dict[str, Any]:
        """The record with the plan's own `CleanFileInfo` lists (`_FILE_INFO_TUPLES`)."""
        ectr = self.earliest_instant_to_retain
        return {
            "earliestInstantToRetain": None if ectr is None else {
                "timestamp": ectr.timestamp, "action": ectr.action, "state": ectr.state.name},
            "lastCompletedCommitTimestamp": self.last_completed_commit_timestamp,
            "policy": self.policy,
            "filesToBeDeletedPerPartition": {},
            "version": self.version,
            "filePathsToBeDeletedPerPartition": self.file_paths_to_delete,
            "partitionsToBeDeleted": list(self.partitions_to_delete),
            "extraMetadata": None if self.extra_metadata is None else dict(self.extra_metadata),
        }

    def serialize(self) -> bytes:
        return serialize_metadata("HoodieCleanerPlan", self._record(), _FILE_INFO_TUPLES)

    @classmethod
    def from_record(cls, record: dict[str, Any], base_uri: str | None = None) -> CleanerPlan:
        """A plan as Hudi reads it; a version 1 plan (file names per partition) is upgraded to full
        paths as Hudi's CleanPlanV2MigrationHandler does, which needs the table's base path."""
        from hudi_assets.timeline.instant import State

        ectr = record.get("earliestInstantToRetain")
        instant = None
        if ectr:
            instant = Instant(ectr["timestamp"], ectr["action"], State[ectr.get("state") or "COMPLETED"])
        by_partition: dict[str, list[CleanFileInfo]] = {}
        for partition, infos in (_as_read(record.get("filePathsToBeDeletedPerPartition")) or {}).items():
            # decoded from our schema text: CleanFileInfo already; by fastavro: dicts
            by_partition[partition] = infos if not infos or type(infos[0]) is CleanFileInfo else \
                [CleanFileInfo(i["filePath"], i.get("isBootstrapBaseFile")) for i in infos]
        if (record.get("version") or 1) < 2 and base_uri is not None:
            # CleanPlanV2MigrationHandler collects the upgraded lists with Collectors.toMap.
            for partition, names in (_as_read(record.get("filesToBeDeletedPerPartition")) or {}).items():
                prefix = f"{base_uri}/{partition}" if partition else base_uri
                by_partition[partition] = [CleanFileInfo(f"{prefix}/{n}") for n in names]
            by_partition = _hashmap(by_partition)
        return cls(instant, record.get("lastCompletedCommitTimestamp") or "", record.get("policy") or "",
                   by_partition, list(record.get("partitionsToBeDeleted") or []),
                   _as_read(record.get("extraMetadata")), CLEAN_PLAN_VERSION)

    @classmethod
    def deserialize(cls, data: bytes, path: str, base_uri: str | None = None) -> CleanerPlan:
        with gc_paused():  # a tuple per planned file, none of them cyclic
            record = deserialize_metadata(data, "HoodieCleanerPlan", path, _FILE_INFO_TUPLES)
        return cls.from_record(record, base_uri)


@dataclass
class PartitionCleanStat:
    """One partition's outcome (Hudi's HoodieCleanStat); file lists hold file names."""

    partition: str
    policy: str
    delete_path_patterns: list[str] = field(default_factory=list)
    success_delete_files: list[str] = field(default_factory=list)
    failed_delete_files: list[str] = field(default_factory=list)
    success_bootstrap_files: list[str] = field(default_factory=list)  # full paths
    failed_bootstrap_files: list[str] = field(default_factory=list)
    bootstrap_patterns: list[str] = field(default_factory=list)
    is_partition_deleted: bool = False


def clean_metadata_record(instant_time: str, time_taken_ms: int, plan: CleanerPlan,
                          stats: list[PartitionCleanStat]) -> dict[str, Any]:
    """HoodieCleanMetadata v2 for a finished clean (CleanerUtils.convertCleanMetadata)."""
    def partition_record(stat: PartitionCleanStat, patterns: list[str], success: list[str],
                         failed: list[str]) -> dict[str, Any]:
        return {"partitionPath": stat.partition, "policy": stat.policy, "deletePathPatterns": patterns,
                "successDeleteFiles": success, "failedDeleteFiles": failed,
                "isPartitionDeleted": stat.is_partition_deleted}

    partition_metadata = {}
    bootstrap_metadata = {}
    for stat in stats:
        partition_metadata[stat.partition] = partition_record(
            stat, stat.delete_path_patterns, stat.success_delete_files, stat.failed_delete_files)
        if stat.bootstrap_patterns or stat.success_bootstrap_files or stat.failed_bootstrap_files:
            bootstrap_metadata[stat.partition] = partition_record(
                stat, stat.bootstrap_patterns, stat.success_bootstrap_files, stat.failed_bootstrap_files)
    return {
        "startCleanTime": instant_time,
        "timeTakenInMillis": time_taken_ms,
        "totalFilesDeleted": sum(len(s.success_delete_files) for s in stats),
        "earliestCommitToRetain": plan.ectr_timestamp or "",
        "lastCompletedCommitTimestamp": plan.last_completed_commit_timestamp,
        "partitionMetadata": _hashmap(partition_metadata),
        "version": CLEAN_METADATA_VERSION,
        "bootstrapPartitionMetadata": _hashmap(bootstrap_metadata),
        "extraMetadata": None if plan.extra_metadata is None else dict(plan.extra_metadata),
    }


def serialize_clean_metadata(record: dict[str, Any]) -> bytes:
    return serialize_metadata("HoodieCleanMetadata", record)
