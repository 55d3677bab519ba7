"""Constants and small codecs of the HFile v3 format shared by the reader and the writer.

Values follow HBase 2.4.9 (`BlockType`, `HConstants.HFILEBLOCK_HEADER_SIZE`, `FixedFileTrailer`,
`Compression.Algorithm`, `ChecksumType`, `HFileInfo`, `HFileWriterImpl`) and Hadoop's
`WritableUtils` variable-length integers.
"""

from __future__ import annotations

import struct
from enum import Enum, IntEnum


class BlockType(Enum):
    """`BlockType`: the 8-byte magic that opens every block (and the trailer)."""

    DATA = b"DATABLK*"
    ENCODED_DATA = b"DATABLKE"
    LEAF_INDEX = b"IDXLEAF2"
    BLOOM_CHUNK = b"BLMFBLK2"
    META = b"METABLKc"
    INTERMEDIATE_INDEX = b"IDXINTE2"
    ROOT_INDEX = b"IDXROOT2"
    FILE_INFO = b"FILEINF2"
    GENERAL_BLOOM_META = b"BLMFMET2"
    DELETE_FAMILY_BLOOM_META = b"DFBLMET2"
    TRAILER = b'TRABLK"$'
    INDEX_V1 = b"IDXBLK)+"


MAGIC_LENGTH = 8

# magic, onDiskSizeWithoutHeader, uncompressedSizeWithoutHeader, prevBlockOffset, then (minor
# version >= 1) checksum type, bytesPerChecksum, onDiskDataSizeWithHeader.
BLOCK_HEADER = struct.Struct(">8siiqbii")
BLOCK_HEADER_SIZE = BLOCK_HEADER.size  # 33

MAJOR_VERSION = 3
# `HFileReaderImpl.MAX_MINOR_VERSION`: minor version 3 means a protobuf trailer and HBase checksums.
MINOR_VERSION = 3
TRAILER_SIZE = 4096  # `FixedFileTrailer.getTrailerSize()` for major version 3


class Compression(IntEnum):
    """`Compression.Algorithm`; the trailer stores the ordinal."""

    LZO = 0
    GZ = 1
    NONE = 2
    SNAPPY = 3
    LZ4 = 4
    BZIP2 = 5
    ZSTD = 6


class ChecksumType(IntEnum):
    """`ChecksumType`: the code in every block header."""

    NULL = 0
    CRC32 = 1
    CRC32C = 2


DEFAULT_BYTES_PER_CHECKSUM = 16 * 1024  # `HFile.DEFAULT_BYTES_PER_CHECKSUM`
CHECKSUM_SIZE = 4

# File-info keys HBase's writer fills in itself; user keys may not start with `hfile.`.
RESERVED_FILE_INFO_PREFIX = b"hfile."
LASTKEY = b"hfile.LASTKEY"
AVG_KEY_LEN = b"hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = b"hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = b"hfile.CREATE_TIME_TS"
MAX_TAGS_LEN = b"hfile.MAX_TAGS_LEN"
MAX_MEMSTORE_TS_KEY = b"MAX_MEMSTORE_TS_KEY"
KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
KEY_VALUE_VER_WITH_MEMSTORE = 1
PB_MAGIC = b"PBUF"  # `ProtobufMagic.PB_MAGIC`, before the file-info protobuf

# The comparator Hudi 0.14/0.15 names in the trailer of metadata-table HFiles and HFile data blocks.
HUDI_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"


def write_vlong(value: int) -> bytes:
    """Hadoop `WritableUtils.writeVLong` (also `writeVInt`): one byte for -112..127, else a length byte."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    length = -112
    if value < 0:
        value = ~value
        length = -120
    tmp = value
    while tmp:
        tmp >>= 8
        length -= 1
    size = -(length + 120) if length < -120 else -(length + 112)
    return struct.pack(">b", length) + value.to_bytes(size, "big")


def read_vlong(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Hadoop `WritableUtils.readVLong` at `pos`: (value, position after it)."""
    first = data[pos]
    first = first - 256 if first > 127 else first
    if first >= -112:
        return first, pos + 1
    size = (-119 - first) if first < -120 else (-111 - first)  # bytes including the first
    end = pos + size
    if end > len(data):
        raise ValueError("variable-length integer runs past the end")
    value = int.from_bytes(data[pos + 1 : end], "big")
    return (~value if first < -120 else value), end
