"""The fixed 4096-byte trailer closing an HFile v3 (`FixedFileTrailer`).

Trailer magic, the delimited protobuf `FileTrailerProto`, zero padding, and last a big-endian int
`majorVersion | minorVersion << 24`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from hudi_assets.hfile import protobuf
from hudi_assets.hfile.format import (
    MAGIC_LENGTH,
    MAJOR_VERSION,
    MINOR_VERSION,
    TRAILER_SIZE,
    BlockType,
    Compression,
)

_VERSION_SIZE = 4


@dataclass(frozen=True)
class Trailer:
    """`FixedFileTrailer` fields, named as in `FileTrailerProto`. Offsets are -1 when unset."""

    file_info_offset: int = 0
    load_on_open_data_offset: int = 0
    uncompressed_data_index_size: int = 0
    total_uncompressed_bytes: int = 0
    data_index_count: int = 0
    meta_index_count: int = 0
    entry_count: int = 0
    num_data_index_levels: int = 1
    first_data_block_offset: int = -1
    last_data_block_offset: int = -1
    comparator_class_name: str = ""
    compression_codec: Compression = Compression.NONE
    major_version: int = MAJOR_VERSION
    minor_version: int = MINOR_VERSION

    def serialize(self) -> bytes:
        """`FixedFileTrailer.serialize`: every field set, in field-number order, as HBase does."""
        message = b"".join((
            protobuf.varint_field(1, self.file_info_offset),
            protobuf.varint_field(2, self.load_on_open_data_offset),
            protobuf.varint_field(3, self.uncompressed_data_index_size),
            protobuf.varint_field(4, self.total_uncompressed_bytes),
            protobuf.varint_field(5, self.data_index_count),
            protobuf.varint_field(6, self.meta_index_count),
            protobuf.varint_field(7, self.entry_count),
            protobuf.varint_field(8, self.num_data_index_levels),
            protobuf.varint_field(9, self.first_data_block_offset),
            protobuf.varint_field(10, self.last_data_block_offset),
            protobuf.bytes_field(11, self.comparator_class_name.encode("utf-8")),
            protobuf.varint_field(12, self.compression_codec),
        ))
        body = BlockType.TRAILER.value + protobuf.delimited(message)
        padding = TRAILER_SIZE - _VERSION_SIZE - len(body)
        if padding < 0:
            raise ValueError("trailer protobuf exceeds the fixed trailer size")
        return body + bytes(padding) + struct.pack(">i", self.major_version | self.minor_version << 24)


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


_INT_FIELDS = {
    1: "file_info_offset", 2: "load_on_open_data_offset", 3: "uncompressed_data_index_size",
    4: "total_uncompressed_bytes", 5: "data_index_count", 6: "meta_index_count", 7: "entry_count",
    8: "num_data_index_levels", 9: "first_data_block_offset", 10: "last_data_block_offset",
}


def read_trailer(data: bytes | memoryview) -> Trailer:
    """Parse the trailer at the end of `data`; ValueError when it is missing or not version 3."""
    if len(data) < TRAILER_SIZE:
        raise ValueError(f"{len(data)} bytes is too short for an HFile (the trailer alone is {TRAILER_SIZE})")
    start = len(data) - TRAILER_SIZE
    version = int.from_bytes(data[-_VERSION_SIZE:], "big")
    major, minor = version & 0x00FFFFFF, version >> 24
    if bytes(data[start : start + MAGIC_LENGTH]) != BlockType.TRAILER.value:
        raise ValueError("no HFile trailer magic at the end of the file")
    if major != MAJOR_VERSION:
        raise ValueError(f"HFile major version {major} is not supported (only {MAJOR_VERSION})")
    message, _ = protobuf.read_delimited(data[start + MAGIC_LENGTH : len(data) - _VERSION_SIZE], 0)
    values: dict[str, object] = {"major_version": major, "minor_version": minor}
    for number, value in protobuf.fields(message):
        if number in _INT_FIELDS and isinstance(value, int):
            values[_INT_FIELDS[number]] = _signed64(value)
        elif number == 11 and isinstance(value, bytes):
            values["comparator_class_name"] = value.decode("utf-8", "replace")
        elif number == 12 and isinstance(value, int):
            try:
                values["compression_codec"] = Compression(value)
            except ValueError:
                raise ValueError(f"unknown compression codec {value} in the trailer") from None
        elif number == 13:
            raise ValueError("the HFile is encrypted, which is not supported")
    return Trailer(**values)  # type: ignore[arg-type]
