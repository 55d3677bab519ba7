"""HBase block checksums: CRC32C over fixed-size chunks of header + on-disk data (`ChecksumUtil`).

HBase 2.4 computes them with Hadoop's `DataChecksum` (CRC32C, the Castagnoli polynomial) and
writes one big-endian int per `bytesPerChecksum` chunk after the block's data. Python's standard
library has no CRC32C, so it is computed here with lookup tables.
"""

from __future__ import annotations

import struct
import zlib

from hudi_assets.hfile.format import CHECKSUM_SIZE, ChecksumType


def _crc32c_tables() -> tuple[tuple[int, ...], ...]:
    """The byte table of the reflected Castagnoli polynomial and the 7 derived slicing-by-8 tables."""
    base = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        base.append(crc)
    tables = [tuple(base)]
    for _ in range(7):
        previous = tables[-1]
        tables.append(tuple((previous[n] >> 8) ^ base[previous[n] & 0xFF] for n in range(256)))
    return tuple(tables)


_T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7 = _crc32c_tables()
_WORDS = struct.Struct("<II")


def crc32c(data: bytes | memoryview) -> int:
    """CRC32C (iSCSI, RFC 3720) of `data`, eight bytes per step ("slicing-by-8")."""
    view = memoryview(data).cast("B")
    whole = len(view) - len(view) % 8
    crc = 0xFFFFFFFF
    t0, t1, t2, t3, t4, t5, t6, t7 = _T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7
    for low, high in _WORDS.iter_unpack(view[:whole]):
        low ^= crc
        crc = (t7[low & 0xFF] ^ t6[(low >> 8) & 0xFF] ^ t5[(low >> 16) & 0xFF] ^ t4[low >> 24]
               ^ t3[high & 0xFF] ^ t2[(high >> 8) & 0xFF] ^ t1[(high >> 16) & 0xFF] ^ t0[high >> 24])
    for byte in view[whole:]:
        crc = t0[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


_ALGORITHMS = {ChecksumType.CRC32C: crc32c, ChecksumType.CRC32: zlib.crc32}


def checksum_size(data_size: int, bytes_per_checksum: int) -> int:
    """`ChecksumUtil.numBytes`: bytes of checksums for `data_size` bytes of header + data."""
    chunks = -(-data_size // bytes_per_checksum)
    return chunks * CHECKSUM_SIZE


def chunked_checksums(data: bytes | memoryview, checksum_type: ChecksumType,
                      bytes_per_checksum: int) -> bytes:
    """`ChecksumUtil.generateChecksums`: one big-endian checksum per chunk (CRC32 or CRC32C)."""
    algorithm = _ALGORITHMS[checksum_type]
    view = memoryview(data)
    return b"".join(
        algorithm(view[start : start + bytes_per_checksum]).to_bytes(CHECKSUM_SIZE, "big")
        for start in range(0, len(view), bytes_per_checksum)
    )
