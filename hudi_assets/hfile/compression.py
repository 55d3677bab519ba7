"""Block compression: NONE, or GZ as HBase's `ReusableStreamGzipCodec` writes it.

Each compressed block is one complete gzip member: the fixed 10-byte header HBase's
`ReusableGzipOutputStream` writes (no mtime, OS byte 0), a raw deflate stream at
`java.util.zip.Deflater`'s default level (6, window 15, memLevel 8), and the CRC32 / size trailer.
"""

from __future__ import annotations

import struct
import zlib

from hudi_assets.hfile.format import Compression

_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"
_DEFAULT_LEVEL = 6


def compress(data: bytes, codec: Compression) -> bytes:
    """The on-disk bytes of a block body `data` under `codec`."""
    if codec == Compression.NONE:
        return data
    if codec == Compression.GZ:
        deflater = zlib.compressobj(_DEFAULT_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS, 8)
        body = deflater.compress(data) + deflater.flush()
        return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    raise ValueError(f"compression {codec.name} is not supported (only GZ and NONE)")


def decompress(data: bytes | memoryview, codec: Compression, uncompressed_size: int) -> bytes:
    """The block body from its on-disk bytes; raises ValueError when it does not decode to the size."""
    if codec == Compression.NONE:
        out = bytes(data)
    elif codec == Compression.GZ:
        try:
            out = zlib.decompress(data, 16 + zlib.MAX_WBITS)
        except zlib.error as e:
            raise ValueError(f"gzip data does not decode: {e}") from None
    else:
        raise ValueError(f"compression {codec.name} is not supported (only GZ and NONE)")
    if len(out) != uncompressed_size:
        raise ValueError(f"block decodes to {len(out)} bytes, header says {uncompressed_size}")
    return out
