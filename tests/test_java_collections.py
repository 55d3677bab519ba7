"""Batched `String.hashCode()` and HashMap order: the same as one call per key."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_assets.java_collections import (
    NUMPY_MIN_STRINGS,
    JavaHashMap,
    java_hashmap_orders,
    java_string_hash,
    java_string_hash_array,
    java_string_hashes,
)


def test_batched_hashes_equal_one_call_each():
    rng = random.Random(7)
    texts = ["", "hello", "Aa", "BB", "déjà vu", "\U0001F600", "2024/01/01"]
    texts += ["".join(rng.choice("abcdef0123456789-_.") for _ in range(rng.choice([8, 36, 90])))
              for _ in range(4000)]  # numpy's batches above NUMPY_MIN_STRINGS, one call each below
    assert len(texts) > NUMPY_MIN_STRINGS
    for some in (texts, texts[:50]):
        assert java_string_hashes(some) == [java_string_hash(t) & 0xFFFFFFFF for t in some]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=70), min_size=1, max_size=20))
def test_hash_array_is_string_hash_code_of_str_and_of_ascii_bytes(texts):
    """Any text (NULs, trailing ones too, and beyond ASCII one call each), and ASCII as bytes."""
    expected = [java_string_hash(t) & 0xFFFFFFFF for t in texts]
    assert java_string_hash_array(texts).tolist() == expected
    ascii_texts = [t for t in texts if t.isascii()]
    if ascii_texts:
        assert java_string_hash_array([t.encode() for t in ascii_texts]).tolist() == [
            java_string_hash(t) & 0xFFFFFFFF for t in ascii_texts]


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


def test_orders_of_many_maps_hashed_in_one_batch_equal_each_map_on_its_own():
    """Maps under NUMPY_MIN_STRINGS each, over it together (as the partitions of a metadata read)."""
    rng = random.Random(11)
    maps = [[f"{rng.getrandbits(64):016x}-{n}_0-1-0_2024{m:04d}.parquet"
             for n in range(rng.randrange(0, 900))] for m in range(8)]
    maps += [["déjà-vu.parquet", "b.parquet", "a.parquet"], [], ["", "x"]]
    assert sum(map(len, maps)) > NUMPY_MIN_STRINGS

    def alone(keys: list[str]) -> list[str]:
        table = JavaHashMap()
        for key in keys:
            table.put(key)
        mask = table.capacity - 1
        bucket = {k: (h ^ (h >> 16)) & mask for k in keys for h in [java_string_hash(k) & 0xFFFFFFFF]}
        return sorted(keys, key=lambda k: (bucket[k], keys.index(k)))

    assert java_hashmap_orders(maps) == [alone(keys) for keys in maps]


def test_put_each_is_put_in_turn():
    rng = random.Random(3)
    for size in (0, 1, 12, 13, 100, 3000):
        keys = [f"k{rng.randrange(size or 1)}" for _ in range(size)]  # repeats too
        for initial in (None, 5, 64):
            one, each = JavaHashMap(initial), JavaHashMap(initial)
            for key in keys:
                one.put(key)
            each.put_each(keys)
            assert (each.capacity, each.order()) == (one.capacity, one.order())
