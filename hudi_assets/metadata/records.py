"""Records of the metadata table's `files` partition and their merge, as Hudi's
`HoodieMetadataPayload` does it.

A `HoodieMetadataRecord` carries `key`, `type` and, for the two list types, `filesystemMetadata`:
file (or partition) name -> {size, isDeleted}. Records are read with their writer's schema, so 1.x
files (more fields) read the same as 0.14/0.15 ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.metadata.keys import NON_PARTITIONED_NAME

PARTITION_LIST = 1
FILE_LIST = 2


class FileInfo(NamedTuple):
    """`HoodieMetadataFileInfo`: a size, or a tombstone saying the file was deleted. A tuple of the
    record's fields in schema order, so that a generated decoder makes it directly (`lookup`)."""

    size: int
    is_deleted: bool


@dataclass(frozen=True)
class FilesRecord:
    """One record of the `files` partition: the partition list or one data partition's files."""

    key: str
    type: int
    files: dict[str, FileInfo]

    @classmethod
    def from_avro(cls, key: str, record: Mapping[str, Any], path: str) -> FilesRecord:
        """Decode a `HoodieMetadataRecord` read from `path`; `key` is the HFile row it was stored under."""
        kind = _kind(key, record, path)
        files = {}
        for name, info in (record.get("filesystemMetadata") or {}).items():
            try:
                files[name] = FileInfo(int(info["size"]), bool(info["isDeleted"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise CorruptFileError(path, f"record {key!r}: file {name!r} has no size/isDeleted") from exc
        return cls(key, kind, files)

    @classmethod
    def of_decoded(cls, key: str, record: Mapping[str, Any], path: str) -> FilesRecord:
        """`from_avro` of a record whose file infos were decoded as `FileInfo` tuples already."""
        return cls(key, _kind(key, record, path), record.get("filesystemMetadata") or {})

    def listed(self) -> dict[str, int]:
        """The names that are present (tombstones left out) with their sizes."""
        return {name: info.size for name, info in self.files.items() if not info.is_deleted}


def _kind(key: str, record: Mapping[str, Any], path: str) -> int:
    kind = record.get("type")
    if kind not in (PARTITION_LIST, FILE_LIST):
        raise CorruptFileError(path, f"record {key!r} of the files partition has type {kind!r}, "
                                     f"not {PARTITION_LIST} (partition list) or {FILE_LIST} (file list)")
    return kind


def combine(previous: FilesRecord, newer: FilesRecord) -> FilesRecord:
    """`HoodieMetadataPayload.combineFileSystemMetadata`: newer entries win over older ones.

    A tombstone removes a listed file (and is dropped itself); a tombstone of an unlisted file is
    kept, because merging runs in two stages (log records, then the base file). Sizes of a file
    listed twice take the larger: files only grow, and records need not arrive in write order.
    """
    if previous.type != newer.type:
        raise ValueError(f"record {newer.key!r}: cannot merge type {newer.type} into type {previous.type}")
    files = dict(previous.files)
    for name, info in newer.files.items():
        old = files.get(name)
        if old is None:
            files[name] = info
        elif info.is_deleted:
            del files[name]
        else:
            files[name] = FileInfo(max(old.size, info.size), False)
    return FilesRecord(newer.key, newer.type, files)


def data_partition(key: str) -> str:
    """The data table's partition path of a file-list record key ("." is the non-partitioned "")."""
    return "" if key == NON_PARTITIONED_NAME else key
