"""Hudi's DYNAMIC_V0 bloom filter, as its writers put it into every base file's parquet footer and
into the `bloomFilter` meta block of the metadata table's HFile base files.

Hudi's bloom index reads `org.apache.hudi.bloomfilter` from a base file's footer to decide which keys
the file might hold; a file without it (or with wrong bits) makes a later upsert by Hudi miss its keys.
This reproduces `HoodieDynamicBoundedBloomFilter` (a Hadoop `DynamicBloomFilter` with Hadoop's
MurmurHash) bit for bit: `serialize` gives the same Base64 text a Java writer gives for the same keys
and configuration (`hoodie.index.bloom.num_entries`, `hoodie.index.bloom.fpp`).
"""

from __future__ import annotations

import base64
import math
import struct
from functools import lru_cache

TYPE_CODE = "DYNAMIC_V0"
DEFAULT_NUM_ENTRIES = 60_000  # hoodie.index.bloom.num_entries
DEFAULT_FPP = 0.000000001  # hoodie.index.bloom.fpp
DEFAULT_MAX_ENTRIES = 100_000  # hoodie.bloom.index.filter.dynamic.max.entries
_MURMUR_HASH = 1  # org.apache.hadoop.util.hash.Hash.MURMUR_HASH
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def _signed_byte(b: int) -> int:
    return b - 256 if b > 127 else b


def murmur_hash(data: bytes, seed: int) -> int:
    """Hadoop's `org.apache.hadoop.util.hash.MurmurHash.hash` (a signed Java int)."""
    length = len(data)
    h = (seed ^ length) & _MASK
    end = length & ~3
    for k in struct.unpack_from(f"<{end >> 2}I", data):
        k = (k * _M) & _MASK
        k ^= k >> 24
        h = ((h * _M) & _MASK) ^ ((k * _M) & _MASK)
    left = length - end
    if left:
        # Java sign-extends the bytes here (`h ^= data[i] << 16`): keep that quirk.
        if left >= 3:
            h ^= (_signed_byte(data[end + 2]) << 16) & _MASK
        if left >= 2:
            h ^= (_signed_byte(data[end + 1]) << 8) & _MASK
        h ^= _signed_byte(data[end]) & _MASK
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


@lru_cache(maxsize=262_144)  # a copy-on-write rewrite puts the same keys into every new version
def _positions(key: str, num_hashes: int, vector_size: int) -> tuple[int, ...]:
    """Hadoop `HashFunction.hash`: chained seeds, `Math.abs(h % size)` with Java's remainder."""
    data = key.encode()
    out = []
    seed = 0
    for _ in range(num_hashes):
        seed = murmur_hash(data, seed)
        out.append(abs(seed) % vector_size)
    return tuple(out)


def sizing(num_entries: int, fpp: float) -> tuple[int, int]:
    """Hudi's `BloomFilterUtils`: (bit size, number of hash functions)."""
    bits = math.ceil(num_entries * (-math.log(fpp) / (math.log(2) ** 2)))
    return bits, math.ceil(math.log(2) * bits / num_entries)


def serialize(keys: list[str], num_entries: int = DEFAULT_NUM_ENTRIES, fpp: float = DEFAULT_FPP,
              max_entries: int = DEFAULT_MAX_ENTRIES) -> str:
    """The footer value Hudi writes for a file holding `keys` (in write order)."""
    bits, num_hashes = sizing(num_entries, fpp)
    rows: list[bytearray] = [bytearray((bits + 7) // 8)]
    current = 0  # records in the active row
    for key in keys:
        # Past max_entries Hudi cycles through the rows; files that large are out of our scope.
        if current >= num_entries and len(rows) * num_entries < max_entries:
            rows.append(bytearray((bits + 7) // 8))
            current = 0
        row = rows[-1]
        for pos in _positions(key, num_hashes, bits):
            row[pos >> 3] |= 1 << (pos & 7)
        current += 1
    header = struct.pack(">iibi", -1, num_hashes, _MURMUR_HASH, bits)
    out = [header, struct.pack(">iii", num_entries, current, len(rows))]
    for row in rows:
        out.append(header)
        out.append(bytes(row))
    return base64.b64encode(b"".join(out)).decode()
