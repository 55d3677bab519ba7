"""What Java's strings and HashMaps do that Hudi's file contents depend on: the iteration order of
`HashMap<String, ?>` decides the key order of the maps Hudi writes (plans, commit JSON, metadata)."""

from __future__ import annotations

import array
import operator
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any

_UTF16 = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"  # native order, as array reads it
_POWERS_OF_31: list[int] = [1]  # 31**k mod 2**32, grown on demand
# Fewer strings are hashed one call each: a few milliseconds, where importing numpy takes a tenth of
# a second.
NUMPY_MIN_STRINGS = 2048


def java_string_hash(text: str) -> int:
    """`String.hashCode()` (over UTF-16 code units), as a signed 32-bit int.

    s[0]*31^(n-1) + ... + s[n-1] mod 2^32, summed in C over the code units (one call per key of every
    map Hudi writes, and per file id of a partition when the cleaner orders its files)."""
    units = text.encode() if text.isascii() else array.array("H", text.encode(_UTF16))
    n = len(units)
    while len(_POWERS_OF_31) < n:
        _POWERS_OF_31.append(_POWERS_OF_31[-1] * 31 & 0xFFFFFFFF)
    h = sum(map(operator.mul, units, reversed(_POWERS_OF_31[:n]))) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_string_hashes(texts: list[str]) -> list[int]:
    """`java_string_hash` of many strings, as unsigned 32-bit ints (see `java_string_hash_array`)."""
    if len(texts) < NUMPY_MIN_STRINGS:
        return [java_string_hash(text) & 0xFFFFFFFF for text in texts]
    return java_string_hash_array(texts).tolist()


def java_string_hash_array(texts: Sequence[str] | Sequence[bytes]):
    """The unsigned `String.hashCode()` of each of `texts` as a numpy uint32 array (bytes are taken
    one code unit a byte; a str that is not ASCII is hashed one call each).

    All of them are one matrix of bytes, zero-padded on the right to the longest, hashed a column at
    a time (h * 31 + c, in uint32 arithmetic, which wraps modulo 2^32 as Java's int does); a padded
    row's hash is the string's times 31 per padding byte, which multiplying by 31's inverse modulo
    2^32 as often undoes. Measured on 1,000,000 file names: 4.5 times less CPU than one uint64 matrix
    product (which also held 0.55 GB), 1.4 times less than a matrix per length of string."""
    import numpy as np  # here, not at the top: most commands hash few strings, and numpy's import is slow

    given, others = texts, []
    if texts and isinstance(texts[0], str) and not "".join(texts).isascii():
        others = [n for n, text in enumerate(texts) if not text.isascii()]
        texts = [text if text.isascii() else "" for text in texts]
    matrix = np.array(texts, dtype=np.bytes_)
    width = matrix.itemsize
    units = matrix.view(np.uint8).reshape(len(texts), width)
    hashes = np.zeros(len(texts), dtype=np.uint32)
    thirty_one = np.uint32(31)
    for column in range(width):
        hashes *= thirty_one
        hashes += units[:, column]
    lengths = np.fromiter(map(len, texts), dtype=np.intp, count=len(texts))  # a trailing NUL counts
    hashes *= _inverse_powers_of_31(width)[width - lengths]
    for n in others:
        hashes[n] = java_string_hash(given[n]) & 0xFFFFFFFF
    return hashes


@cache
def _inverse_powers_of_31(width: int):
    """31**-d modulo 2**32 for each padding d in 0..width, as a numpy uint32 array."""
    import numpy as np

    inverse = pow(31, -1, 1 << 32)
    return np.array([pow(inverse, d, 1 << 32) for d in range(width + 1)], dtype=np.uint32)


def _table_size_for(capacity: int) -> int:
    """HashMap.tableSizeFor: the least power of two >= `capacity` (1 for 1 or less)."""
    return 1 << (capacity - 1).bit_length() if capacity > 1 else 1


class JavaHashMap:
    """The key order of a `java.util.HashMap` (JDK 8 to 17) after the calls that filled it.

    Iteration goes by bucket `(h ^ h >>> 16) & (capacity - 1)`; a bucket keeps insertion order (bins of
    8+ colliding keys become trees in Java; with distinct partition paths and file ids that does not
    happen at the sizes we write). The capacity depends on how the map was filled: `put` alone starts at
    16 and doubles while the map is more than 3/4 full, but `new HashMap<>(n)` and a `putAll` into an
    empty map size the table up front. `hash_code` is the key's `hashCode()`.
    """

    def __init__(self, initial_capacity: int | None = None,
                 hash_code: Callable[[Any], int] = java_string_hash):
        self._keys: dict[Any, None] = {}
        self._hash = hash_code
        self.capacity = 0  # no table yet
        self._threshold = 0 if initial_capacity is None else _table_size_for(initial_capacity)

    def put(self, key: Any) -> None:
        if key in self._keys:
            return
        if not self.capacity:
            self._resize()
        self._keys[key] = None
        if len(self._keys) > self._threshold:
            self._resize()

    def put_each(self, keys: Iterable[Any]) -> None:
        """`put` of each key in turn, in one step: the same keys in the same order and the same
        capacity (each resize doubles once as the size passes the threshold)."""
        self._keys.update(dict.fromkeys(keys))
        if self._keys and not self.capacity:
            self._resize()
        while len(self._keys) > self._threshold:
            self._resize()

    def put_all(self, keys: Iterable[Any]) -> None:
        """`putAll` of a map holding `keys` in this iteration order."""
        keys = list(keys)
        if not keys:
            return
        if not self.capacity:  # pre-size for (int) (size / 0.75f + 1)
            self._threshold = max(self._threshold, _table_size_for((4 * len(keys) + 3) // 3))
        elif len(keys) > self._threshold:
            self._resize()
        for key in keys:
            self.put(key)

    def _resize(self) -> None:
        self.capacity = self.capacity * 2 if self.capacity else self._threshold or 16
        self._threshold = self.capacity * 3 // 4

    def order(self, keys: Iterable[Any] | None = None, hashes: Iterable[int] | None = None) -> list[Any]:
        """The iteration order of the keys (of those in `keys` only, when given: fewer hashes).
        `hashes`: the unsigned hash of each key in insertion order, when computed already."""
        wanted = self._keys if keys is None else set(keys)
        ordered = list(self._keys) if keys is None else [key for key in self._keys if key in wanted]
        mask = self.capacity - 1
        if hashes is None:
            if self._hash is java_string_hash:
                hashes = java_string_hashes(ordered)
            else:
                hashes = [self._hash(key) & 0xFFFFFFFF for key in ordered]
        buckets = [(h ^ (h >> 16)) & mask for h in hashes]
        return [key for _, _, key in sorted(zip(buckets, range(len(ordered)), ordered, strict=True))]


def java_hashmap_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of a `java.util.HashMap<String, ?>` filled by `put` in the given order."""
    return java_hashmap_orders([keys])[0]


def java_hashmap_orders(key_lists: Iterable[Iterable[str]]) -> list[list[str]]:
    """`java_hashmap_order` of each of many maps, their keys hashed in one batch: maps of a thousand
    keys each stay under `NUMPY_MIN_STRINGS` one by one (a million one-at-a-time hashes for a
    million files), while together they take the numpy path."""
    tables = []
    for keys in key_lists:
        table = JavaHashMap()
        table.put_each(keys)
        tables.append(table)
    every_key = [key for table in tables for key in table._keys]
    if len(every_key) < NUMPY_MIN_STRINGS:
        hashes = java_string_hashes(every_key)
        orders, start = [], 0
        for table in tables:
            end = start + len(table._keys)
            orders.append(table.order(hashes=hashes[start:end]))
            start = end
        return orders
    import numpy as np

    hashes, orders, start = java_string_hash_array(every_key), [], 0
    for table in tables:
        end = start + len(table._keys)
        if start == end:  # an empty map has no table yet
            orders.append([])
            continue
        mixed = hashes[start:end]
        buckets = (mixed ^ (mixed >> 16)) & (table.capacity - 1)
        # A stable sort by bucket keeps insertion order within a bucket, as `order` does.
        orders.append(list(map(every_key.__getitem__, (np.argsort(buckets, kind="stable") + start).tolist())))
        start = end
    return orders


def in_java_hashmap_order(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {key: mapping[key] for key in java_hashmap_order(mapping)}
