"""Iterate the blocks of a log file the way Hudi's `HoodieLogFileReader` does.

A block counts as intact only if its size field S points at an int64 trailer equal to S + 6 that is
followed by the next magic or by the end of the file (fewer than 6 bytes). Anything else - a torn
append, a bad size, garbage after a block - becomes one CORRUPT block spanning up to the next magic,
which scanners skip. Structural errors Hudi itself throws on (no magic at the start of the file, an
unknown block type or header key, fields that overrun an intact frame) raise `CorruptFileError`.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from typing import BinaryIO

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.logformat.block import LOG_FORMAT_VERSION, MAGIC, BlockType, HeaderKey, LogBlock

_SCAN_CHUNK = 1 << 20
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_BLOCK_TYPES = frozenset(BlockType)
_HEADER_KEYS = frozenset(HeaderKey)


def read_blocks(
    source: bytes | bytearray | memoryview | BinaryIO, path: str = "<log bytes>"
) -> Iterator[LogBlock]:
    """Yield every block of a log file (its bytes or a seekable binary stream); `path` names it in errors."""
    stream = io.BytesIO(source) if isinstance(source, bytes | bytearray | memoryview) else source
    end = stream.seek(0, io.SEEK_END)
    offset = 0
    while True:
        stream.seek(offset)
        magic = stream.read(len(MAGIC))
        if len(magic) < len(MAGIC):
            return
        if magic != MAGIC:
            raise CorruptFileError(path, f"no log block magic at offset {offset}")
        size = _intact_size(stream, offset + len(MAGIC), end)
        if size is None:
            block = _corrupt_block(stream, offset, end)
            offset += len(MAGIC) + len(block.content)
        else:
            stream.seek(offset + len(MAGIC) + 8)
            block = _parse_block(stream.read(size), path, offset)
            offset += len(MAGIC) + 8 + size
        yield block


def _java_int(value: int) -> int:
    """Java's `(int)` cast of a long: Hudi reads block and content sizes into ints."""
    return (value + 2**31) % 2**32 - 2**31


def _intact_size(stream: BinaryIO, body: int, end: int) -> int | None:
    """The size S of the block whose size field is at `body`, or None when the frame is not intact."""
    stream.seek(body)
    raw = stream.read(8)
    if len(raw) < 8:
        return None
    size = _java_int(_INT64.unpack(raw)[0])
    after = body + 8 + size
    if size < 8 or after > end:
        return None
    stream.seek(after - 8)
    if _INT64.unpack(stream.read(8))[0] - len(MAGIC) != size:
        return None
    following = stream.read(len(MAGIC))
    return size if len(following) < len(MAGIC) or following == MAGIC else None


def _corrupt_block(stream: BinaryIO, offset: int, end: int) -> LogBlock:
    """A CORRUPT block from the bytes after the magic at `offset` up to the next magic or EOF."""
    body = offset + len(MAGIC)
    next_magic = _find_magic(stream, body, end)
    stream.seek(body)
    return LogBlock(
        BlockType.CORRUPT, content=stream.read(next_magic - body), offset=offset, size=next_magic - offset
    )


def _find_magic(stream: BinaryIO, start: int, end: int) -> int:
    position = start
    while True:
        stream.seek(position)
        chunk = stream.read(_SCAN_CHUNK)
        found = chunk.find(MAGIC)
        if found >= 0:
            return position + found
        if position + len(chunk) >= end:
            return end
        position += len(chunk) - len(MAGIC) + 1


def _parse_block(body: bytes, path: str, offset: int) -> LogBlock:
    """Decode an intact block from `body`: the S bytes after its size field."""
    cursor = _Cursor(body, path, offset)
    version = cursor.int32()
    if version != LOG_FORMAT_VERSION:
        # Hudi 0.14/0.15 cannot read these either: version 0 has no block type, later ones no trailer.
        raise CorruptFileError(path, f"log block at offset {offset} has unsupported format version {version}")
    type_ordinal = cursor.int32()
    if type_ordinal not in _BLOCK_TYPES:
        raise CorruptFileError(path, f"log block at offset {offset} has unknown block type {type_ordinal}")
    header = cursor.metadata()
    content = cursor.take(_java_int(cursor.int64()))
    footer = cursor.metadata()
    cursor.int64()  # the S + 6 trailer, already checked
    if cursor.position != len(body):
        raise CorruptFileError(path, f"log block at offset {offset}: fields do not add up to its size")
    return LogBlock(BlockType(type_ordinal), header, content, footer, offset, len(MAGIC) + 8 + len(body))


class _Cursor:
    """Bounds-checked big-endian reads within one block's bytes."""

    def __init__(self, data: bytes, path: str, offset: int):
        self.data = data
        self.position = 0
        self.path = path
        self.offset = offset

    def take(self, length: int) -> bytes:
        start = self.position
        if length < 0 or start + length > len(self.data):
            raise CorruptFileError(self.path, f"log block at offset {self.offset}: a field overruns it")
        self.position = start + length
        return self.data[start : self.position]

    def int32(self) -> int:
        return _INT32.unpack(self.take(4))[0]

    def int64(self) -> int:
        return _INT64.unpack(self.take(8))[0]

    def metadata(self) -> dict[HeaderKey, str]:
        """A header/footer map; values decode like Java's `new String(bytes)` (malformed -> U+FFFD)."""
        entries: dict[HeaderKey, str] = {}
        for _ in range(self.int32()):
            ordinal = self.int32()
            if ordinal not in _HEADER_KEYS:
                raise CorruptFileError(
                    self.path, f"log block at offset {self.offset} has unknown header key {ordinal}"
                )
            entries[HeaderKey(ordinal)] = self.take(self.int32()).decode("utf-8", errors="replace")
        return entries
