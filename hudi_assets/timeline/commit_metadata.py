"""Commit metadata JSON (`.commit`, `.deltacommit`, `.replacecommit`, and their inflight files).

The parsed objects keep every key they were read with, in order, so that writing one back gives
the same JSON (byte for byte with Hudi's Jackson layout); typed properties expose what clean and
archive decide on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hudi_assets.avro.container import MAGIC as AVRO_MAGIC
from hudi_assets.avro.container import deserialize_any
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.timeline import jackson

# Key order of Hudi's HoodieWriteStat / HoodieDeltaWriteStat as Jackson serialises them.
WRITE_STAT_KEYS = (
    "fileId", "path", "cdcStats", "prevCommit", "numWrites", "numDeletes", "numUpdateWrites",
    "numInserts", "totalWriteBytes", "totalWriteErrors", "tempPath", "partitionPath",
    "totalLogRecords", "totalLogFilesCompacted", "totalLogSizeCompacted",
    "totalUpdatedRecordsCompacted", "totalLogBlocks", "totalCorruptLogBlock", "totalRollbackBlocks",
    "fileSizeInBytes", "minEventTime", "maxEventTime", "runtimeStats",
)
DELTA_WRITE_STAT_KEYS = ("logVersion", "logOffset", "baseFile", "logFiles", "recordsStats")
# What reading a JSON value of the wrong kind raises (a list where an object belongs, a word for a count).
SHAPE_ERRORS = (TypeError, AttributeError, ValueError)


def commit_json_object(data: bytes, path: str) -> dict[str, Any]:
    """The JSON object of a commit file, as parsed; {} for an empty (or blank) file, which Hudi reads
    as empty metadata. Not JSON, or not an object: `CorruptFileError` naming `path`."""
    if not data.strip():
        return {}
    try:
        obj = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptFileError(path, f"is not valid commit metadata JSON ({exc})") from exc
    if not isinstance(obj, dict):
        raise CorruptFileError(path, f"commit metadata must be a JSON object, found {type(obj).__name__}")
    return obj


def json_written_paths(data: bytes, path: str) -> list[str]:
    """The paths a JSON commit file's write stats list, in order, read from the parsed object."""
    obj = commit_json_object(data, path)
    try:
        return write_stat_paths(obj)
    except SHAPE_ERRORS as exc:
        raise unexpected_shape(path, exc) from exc


def write_stat_paths(obj: Mapping[str, Any] | None) -> list[str]:
    """The paths commit metadata's write stats list, in order; the same field names in JSON and in
    the archived Avro records."""
    return [p for stats in ((obj or {}).get("partitionToWriteStats") or {}).values()
            for s in stats or [] if (p := s.get("path"))]


def unexpected_shape(path: str, exc: Exception) -> CorruptFileError:
    """The error for commit metadata whose values are not of the kinds Hudi's classes hold."""
    return CorruptFileError(path, f"commit metadata has an unexpected shape ({exc})")


@dataclass
class WriteStat:
    """One file written by a commit (Hudi's HoodieWriteStat); `fields` holds the JSON object."""

    fields: dict[str, Any]

    @classmethod
    def new(cls, **values: Any) -> WriteStat:
        """A stat with Hudi's key order and defaults; delta keys only when given."""
        defaults: dict[str, Any] = {k: 0 for k in WRITE_STAT_KEYS}
        defaults.update({"cdcStats": None, "prevCommit": "null", "tempPath": None,
                         "minEventTime": None, "maxEventTime": None, "runtimeStats": None})
        unknown = set(values) - set(WRITE_STAT_KEYS) - set(DELTA_WRITE_STAT_KEYS)
        if unknown:
            raise ValueError(f"unknown write stat keys: {sorted(unknown)}")
        defaults.update(values)
        keys = WRITE_STAT_KEYS + tuple(k for k in DELTA_WRITE_STAT_KEYS if k in values)
        return cls({k: defaults[k] for k in keys})

    @property
    def file_id(self) -> str:
        return self.fields.get("fileId") or ""

    @property
    def path(self) -> str | None:
        return self.fields.get("path")

    @property
    def partition_path(self) -> str | None:
        return self.fields.get("partitionPath")

    @property
    def prev_commit(self) -> str | None:
        """The previous base instant of the file group; None for a new group (Hudi writes "null")."""
        value = self.fields.get("prevCommit")
        return None if value in (None, "null") else value

    @property
    def file_size(self) -> int:
        return int(self.fields.get("fileSizeInBytes") or 0)

    @property
    def total_write_bytes(self) -> int:
        return int(self.fields.get("totalWriteBytes") or 0)

    @property
    def log_files(self) -> list[str]:
        return list(self.fields.get("logFiles") or [])

    @property
    def base_file(self) -> str | None:
        return self.fields.get("baseFile")


@dataclass
class CommitMetadata:
    """HoodieCommitMetadata / HoodieReplaceCommitMetadata as Hudi writes them in JSON."""

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    compacted: bool = False
    extra_metadata: dict[str, str] = field(default_factory=dict)
    operation_type: str = "UNKNOWN"
    partition_to_replace_file_ids: dict[str, list[str]] | None = None
    other: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> CommitMetadata:
        """Parse a commit file in either encoding, as timeline layout 2 reads it (`CommitMetadataSerDeV2`):
        an Avro container of HoodieCommitMetadata / HoodieReplaceCommitMetadata (read with Hudi 1.x's
        schemas, so every field it wrote is kept), or the JSON of an instant written before the
        table was upgraded."""
        if not data.startswith(AVRO_MAGIC):
            return cls.from_json(data, path)
        _, record = deserialize_any(data, path, hudi_1x=True)
        try:
            return cls._from_object(record)
        except SHAPE_ERRORS as exc:
            raise unexpected_shape(path, exc) from exc

    @classmethod
    def from_json(cls, data: bytes, path: str) -> CommitMetadata:
        """Parse a commit file; an empty file is empty metadata, as in Hudi."""
        obj = commit_json_object(data, path)
        if not obj:
            return cls()
        try:
            return cls._from_object(obj)
        except SHAPE_ERRORS as exc:
            raise unexpected_shape(path, exc) from exc

    @classmethod
    def _from_object(cls, obj: dict[str, Any]) -> CommitMetadata:
        known = {"partitionToWriteStats", "compacted", "extraMetadata", "operationType",
                 "partitionToReplaceFileIds"}
        stats = {
            partition: [WriteStat(dict(s)) for s in (items or [])]
            for partition, items in (obj.get("partitionToWriteStats") or {}).items()
        }
        replaced = obj.get("partitionToReplaceFileIds")
        return cls(
            partition_to_write_stats=stats,
            compacted=bool(obj.get("compacted", False)),
            extra_metadata={str(k): v for k, v in (obj.get("extraMetadata") or {}).items()},
            operation_type=obj.get("operationType") or "UNKNOWN",
            partition_to_replace_file_ids=(
                None if replaced is None else {p: list(ids or []) for p, ids in replaced.items()}
            ),
            other={k: v for k, v in obj.items() if k not in known},
        )

    def to_object(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [s.fields for s in stats] for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": self.extra_metadata,
            "operationType": self.operation_type,
        }
        obj.update(self.other)
        if self.partition_to_replace_file_ids is not None:
            obj["partitionToReplaceFileIds"] = self.partition_to_replace_file_ids
        return obj

    def to_json(self) -> bytes:
        return jackson.dumps(self.to_object()).encode()

    # ------------------------------------------------------------ derived
    @property
    def write_stats(self) -> list[WriteStat]:
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    @property
    def partitions(self) -> list[str]:
        """Partitions touched: written ones, then replaced ones (Hudi's incremental-clean order)."""
        seen = dict.fromkeys(self.partition_to_write_stats)
        seen.update(dict.fromkeys(self.partition_to_replace_file_ids or {}))
        return list(seen)

    @property
    def written_paths(self) -> list[str]:
        return [s.path for s in self.write_stats if s.path]

    @property
    def replaced_file_ids(self) -> dict[str, list[str]]:
        return self.partition_to_replace_file_ids or {}

    @property
    def total_bytes_written(self) -> int:
        return sum(s.total_write_bytes for s in self.write_stats)

    @property
    def schema(self) -> str | None:
        return self.extra_metadata.get("schema")
