"""Batched `String.hashCode()` and HashMap order: the same as one call per key."""

from __future__ import annotations

import random

from hudi_assets.java_collections import NUMPY_MIN_STRINGS, JavaHashMap, java_string_hash, java_string_hashes


def test_batched_hashes_equal_one_call_each():
    rng = random.Random(7)
    texts = ["", "hello", "Aa", "BB", "déjà vu", "\U0001F600", "2024/01/01"]
    texts += ["".join(rng.choice("abcdef0123456789-_.") for _ in range(rng.choice([8, 36, 90])))
              for _ in range(4000)]  # numpy's batches above NUMPY_MIN_STRINGS, one call each below
    assert len(texts) > NUMPY_MIN_STRINGS
    for some in (texts, texts[:50]):
        assert java_string_hashes(some) == [java_string_hash(t) & 0xFFFFFFFF for t in some]


def test_order_with_collisions_keeps_insertion_order_within_a_bucket():
    keys = [f"file-{n}_0-1-0_2024.parquet" for n in range(500)]
    table = JavaHashMap()
    for key in keys:
        table.put(key)
    mask = table.capacity - 1

    def bucket(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & mask

    expected = sorted(keys, key=lambda k: (bucket(k), keys.index(k)))
    assert table.order() == expected
    assert table.order(keys[::7]) == [k for k in expected if k in set(keys[::7])]
