"""What Java's strings and HashMaps do that Hudi's file contents depend on: the iteration order of
`HashMap<String, ?>` decides the key order of the maps Hudi writes (plans, commit JSON, metadata)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def java_string_hash(text: str) -> int:
    """`String.hashCode()` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_hashmap_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of a `java.util.HashMap<String, ?>` filled by `put` in the given order.

    Buckets are `(h ^ h >>> 16) & (capacity - 1)` for the final capacity (16, doubled while more than
    3/4 full); a bucket keeps insertion order. (Bins of 8+ colliding keys become trees in Java; with
    distinct partition paths that does not happen at the sizes we write.)
    """
    unique = list(dict.fromkeys(keys))
    capacity = 16
    while len(unique) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return [key for _, key in sorted(enumerate(unique), key=lambda item: (bucket(item[1]), item[0]))]


def in_java_hashmap_order(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {key: mapping[key] for key in java_hashmap_order(mapping)}
