"""Record keys of the metadata table and the file group each key lives in (Hudi 0.15's
`HoodieTableMetadataUtil`, `HoodieMetadataPayload` and the `ColumnIndexID`/`PartitionIndexID`/`FileIndexID`
hash ids).

- `files`: the data partition path ("." for the non-partitioned ""), plus `__all_partitions__`.
- `column_stats`: base64(xxhash64(column)) + base64(xxhash64(partition)) + base64(md5(file name)),
  three base64 strings concatenated (12 + 12 + 24 characters).
- `bloom_filters`: base64(xxhash64(partition)) + base64(md5(file name)).
- File group of a key: Java's `String.hashCode` modulo the partition's file-group count; file-group
  ids are `<prefix><index:04d>-0`.
"""

from __future__ import annotations

import base64
import hashlib
import math
import struct

from hudi_assets.java_collections import java_string_hash

FILES = "files"
COLUMN_STATS = "column_stats"
BLOOM_FILTERS = "bloom_filters"
RECORD_INDEX = "record_index"

ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED_NAME = "."

# MetadataPartitionType.getFileIdPrefix
FILE_ID_PREFIXES = {
    FILES: "files-",
    COLUMN_STATS: "col-stats-",
    BLOOM_FILTERS: "bloom-filters-",
    RECORD_INDEX: "record-index-",
}

_HASH_SEED = -0x25452546  # HashID.HASH_SEED = 0xdabadaba, a Java int widened to the long seed
_MASK = (1 << 64) - 1
_P1, _P2, _P3 = 11400714785074694791, 14029467366897019727, 1609587929392839161
_P4, _P5 = 9650029242287828579, 2870177450012600261


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _MASK


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _MASK, 31) * _P1) & _MASK


def _merge(acc: int, value: int) -> int:
    return ((acc ^ _round(0, value)) * _P1 + _P4) & _MASK


def xxhash64(data: bytes, seed: int = _HASH_SEED) -> int:
    """XXH64 of `data` (lz4-java's `XXHash64`, which `HashID` uses), as an unsigned 64-bit int."""
    seed &= _MASK
    length, pos = len(data), 0
    if length >= 32:
        v1, v2, v3, v4 = (seed + _P1 + _P2) & _MASK, (seed + _P2) & _MASK, seed, (seed - _P1) & _MASK
        while pos + 32 <= length:
            a, b, c, d = struct.unpack_from("<4Q", data, pos)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            pos += 32
        acc = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
        for v in (v1, v2, v3, v4):
            acc = _merge(acc, v)
    else:
        acc = (seed + _P5) & _MASK
    acc = (acc + length) & _MASK
    while pos + 8 <= length:
        (lane,) = struct.unpack_from("<Q", data, pos)
        acc = (_rotl(acc ^ _round(0, lane), 27) * _P1 + _P4) & _MASK
        pos += 8
    if pos + 4 <= length:
        (lane,) = struct.unpack_from("<I", data, pos)
        acc = (_rotl(acc ^ (lane * _P1 & _MASK), 23) * _P2 + _P3) & _MASK
        pos += 4
    while pos < length:
        acc = (_rotl(acc ^ (data[pos] * _P5 & _MASK), 11) * _P1) & _MASK
        pos += 1
    acc ^= acc >> 33
    acc = (acc * _P2) & _MASK
    acc ^= acc >> 29
    acc = (acc * _P3) & _MASK
    return acc ^ (acc >> 32)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_id_64(name: str) -> str:
    """`ColumnIndexID` / `PartitionIndexID` as base64: 64-bit XXHash, big-endian bytes."""
    return _b64(struct.pack(">Q", xxhash64(name.encode("utf-8"))))


def file_index_id(file_name: str) -> str:
    """`FileIndexID` as base64: the MD5 of the file name."""
    return _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def partition_identifier(partition: str) -> str:
    """`getPartitionIdentifier`: the non-partitioned partition "" is stored as "."."""
    return NON_PARTITIONED_NAME if partition == "" else partition


def files_key(partition: str) -> str:
    """Key of a data partition's file-list record in the `files` partition."""
    return partition_identifier(partition)


def column_stats_key(partition: str, file_name: str, column: str) -> str:
    """`getColumnStatsIndexKey`: the column, partition and file ids, concatenated."""
    return hash_id_64(column) + hash_id_64(partition_identifier(partition)) + file_index_id(file_name)


def bloom_filter_key(partition: str, file_name: str) -> str:
    """`getBloomFilterRecordKey`: the partition and file ids, concatenated."""
    return hash_id_64(partition_identifier(partition)) + file_index_id(file_name)


def file_group_index(record_key: str, num_file_groups: int) -> int:
    """`mapRecordKeyToFileGroupIndex`: `abs(abs(String.hashCode) % count)` with Java's int arithmetic
    (`Math.abs(Integer.MIN_VALUE)` stays negative, and `%` keeps the dividend's sign)."""
    h = java_string_hash(record_key)
    magnitude = h if h == -(1 << 31) else abs(h)
    return abs(int(math.fmod(magnitude, num_file_groups)))


def file_group_id(metadata_partition: str, index: int) -> str:
    """`getFileIDForFileGroup`: e.g. `files-0000-0`."""
    prefix = FILE_ID_PREFIXES.get(metadata_partition)
    if prefix is None:
        raise ValueError(f"no file-group id prefix known for metadata partition {metadata_partition!r}")
    return f"{prefix}{index:04d}-0"
