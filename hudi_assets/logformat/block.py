"""One Hudi log block (log format version 1) and its byte encoding.

A log file is a plain sequence of blocks, each framed as (big-endian, Java `DataOutputStream`):
magic `#HUDI#`, int64 size S of what follows, int32 format version, int32 block type, header map,
int64 content length, content, footer map, int64 S + 6 (a reverse pointer that readers also use to
detect torn writes). See hudi-format.md section 6.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1

# Java reads sizes into an `int`, so nothing larger is readable by Hudi.
_MAX_BLOCK_SIZE = 2**31 - 1


class BlockType(IntEnum):
    """`HoodieLogBlock.HoodieLogBlockType`; serialized as the ordinal."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(IntEnum):
    """`HoodieLogBlock.HeaderMetadataType`; serialized as the ordinal. Footers use the same keys."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    # Hudi 1.x only: 0.14/0.15 readers fail on these ordinals, so they are read but never written.
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


WRITABLE_HEADER_KEYS = frozenset(k for k in HeaderKey if k <= HeaderKey.BLOCK_IDENTIFIER)

# `HoodieCommandBlock.HoodieCommandBlockTypeEnum.ROLLBACK_BLOCK.ordinal()`.
ROLLBACK_COMMAND = "0"


@dataclass(frozen=True)
class LogBlock:
    """A log block. Header and footer keep their entry order so files can be reproduced byte for byte.

    `offset` (position of the magic) and `size` (bytes on disk, magic to trailer) are set for blocks
    read from a file and ignored by equality. A CORRUPT block's content is the skipped bytes after
    its magic, as in Hudi's `HoodieCorruptBlock`.
    """

    block_type: BlockType
    header: dict[HeaderKey, str] = field(default_factory=dict)
    content: bytes = b""
    footer: dict[HeaderKey, str] = field(default_factory=dict)
    offset: int | None = field(default=None, compare=False)
    size: int | None = field(default=None, compare=False)


def encode_metadata(entries: Mapping[HeaderKey, str]) -> bytes:
    """Encode a header or footer map: int32 count, then per entry int32 ordinal, int32 length, UTF-8."""
    parts = [struct.pack(">i", len(entries))]
    for key, value in entries.items():
        if key not in WRITABLE_HEADER_KEYS:
            raise ValueError(f"header key {HeaderKey(key).name} is Hudi 1.x only; 0.14/0.15 cannot read it")
        data = value.encode("utf-8")
        parts.append(struct.pack(">ii", key, len(data)))
        parts.append(data)
    return b"".join(parts)


def encode_block(block: LogBlock) -> bytes:
    """Encode `block` as Hudi's `HoodieLogFormatWriter.appendBlocks` does (format version 1)."""
    if block.block_type == BlockType.CORRUPT:
        raise ValueError("CORRUPT blocks are a reader's artefact and are never written")
    header = encode_metadata(block.header)
    footer = encode_metadata(block.footer)
    size = 4 + 4 + len(header) + 8 + len(block.content) + len(footer) + 8
    if size + len(MAGIC) > _MAX_BLOCK_SIZE:
        raise ValueError(f"log block of {size} bytes is too large for Hudi's int-sized reader")
    return b"".join(
        (
            MAGIC,
            struct.pack(">qii", size, LOG_FORMAT_VERSION, block.block_type),
            header,
            struct.pack(">q", len(block.content)),
            block.content,
            footer,
            struct.pack(">q", size + len(MAGIC)),
        )
    )


def rollback_command_block(instant_time: str, target_instant_time: str) -> LogBlock:
    """The command block a rollback appends to log out the blocks written by `target_instant_time`.

    Header order follows a real Hudi-written rollback log (any order is valid: Java uses a HashMap).
    """
    return LogBlock(
        BlockType.COMMAND,
        {
            HeaderKey.INSTANT_TIME: instant_time,
            HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND,
            HeaderKey.TARGET_INSTANT_TIME: target_instant_time,
        },
    )
