"""Block indexes (`HFileBlockIndex`): root, intermediate and leaf levels, and how HBase builds them.

An index entry is (first key of the block, block offset, block on-disk size with header).
Root format: per entry long offset, int size, vint key length, key; a multi-level data index's root
ends with the mid-key metadata (long offset, int size, int entry of the middle leaf entry).
Non-root format (leaf and intermediate blocks): int entry count, count + 1 int offsets of the
entries relative to the end of that "secondary index", then per entry long offset, int size, key.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable
from dataclasses import dataclass

from hudi_assets.hfile.format import BLOCK_HEADER_SIZE, BlockType, read_vlong, write_vlong

DEFAULT_MAX_CHUNK_SIZE = 128 * 1024  # `hfile.index.block.max.size`
DEFAULT_MIN_INDEX_NUM_ENTRIES = 16  # `hfile.index.block.min.entries`
MAX_INDEX_LEVELS = 16

_OFFSET_SIZE = struct.Struct(">qi")
_SECONDARY_INDEX_ENTRY_OVERHEAD = _OFFSET_SIZE.size
MID_KEY_METADATA = struct.Struct(">qii")


@dataclass(frozen=True)
class IndexEntry:
    """One index entry: the first key of a lower-level block, its offset and on-disk size."""

    key: bytes
    offset: int
    size: int


def decode_root_index(body: bytes, count: int) -> tuple[list[IndexEntry], bytes]:
    """`count` root-format entries and whatever follows them (mid-key metadata or nothing)."""
    entries, pos = [], 0
    for _ in range(count):
        if pos + _OFFSET_SIZE.size > len(body):
            raise ValueError(f"root index block ends before its {count} entries")
        offset, size = _OFFSET_SIZE.unpack_from(body, pos)
        key_length, pos = read_vlong(body, pos + _OFFSET_SIZE.size)
        if key_length < 0 or pos + key_length > len(body):
            raise ValueError("root index entry key runs past the block")
        entries.append(IndexEntry(body[pos : pos + key_length], offset, size))
        pos += key_length
    return entries, body[pos:]


def decode_non_root_index(body: bytes) -> list[IndexEntry]:
    """The entries of a leaf or intermediate index block."""
    if len(body) < 4:
        raise ValueError("non-root index block is too short for its entry count")
    count = int.from_bytes(body[:4], "big")
    entries_start = 4 * (count + 2)
    if count <= 0 or entries_start > len(body):
        raise ValueError(f"non-root index block has a bad entry count {count}")
    marks = struct.unpack_from(f">{count + 1}i", body, 4)
    entries = []
    for i in range(count):
        start, end = entries_start + marks[i], entries_start + marks[i + 1]
        if not entries_start <= start <= end - _SECONDARY_INDEX_ENTRY_OVERHEAD or end > len(body):
            raise ValueError(f"non-root index entry {i} lies outside its block")
        offset, size = _OFFSET_SIZE.unpack_from(body, start)
        entries.append(IndexEntry(body[start + _SECONDARY_INDEX_ENTRY_OVERHEAD : end], offset, size))
    return entries


class BlockIndexChunk:
    """`HFileBlockIndex.BlockIndexChunk`: entries of one index block being written."""

    def __init__(self) -> None:
        self.entries: list[IndexEntry] = []
        # Cumulative number of data blocks under entries 0..i; kept by the root of a multi-level
        # index only, to locate the mid-key.
        self.num_sub_entries_at: list[int] = []
        self.root_size = 0
        self._non_root_entries_size = 0

    def add(self, key: bytes, offset: int, size: int, total_sub_entries: int | None = None) -> None:
        self.entries.append(IndexEntry(key, offset, size))
        self._non_root_entries_size += _SECONDARY_INDEX_ENTRY_OVERHEAD + len(key)
        self.root_size += _SECONDARY_INDEX_ENTRY_OVERHEAD + len(write_vlong(len(key))) + len(key)
        if total_sub_entries is not None:
            self.num_sub_entries_at.append(total_sub_entries)

    @property
    def non_root_size(self) -> int:
        return 4 + 4 * (len(self.entries) + 1) + self._non_root_entries_size

    def encode_root(self) -> bytes:
        return b"".join(_OFFSET_SIZE.pack(e.offset, e.size) + write_vlong(len(e.key)) + e.key
                        for e in self.entries)

    def encode_non_root(self) -> bytes:
        marks, position = [], 0
        for entry in self.entries:
            marks.append(position)
            position += _SECONDARY_INDEX_ENTRY_OVERHEAD + len(entry.key)
        marks.append(position)
        return (struct.pack(f">{len(marks) + 1}i", len(self.entries), *marks)
                + b"".join(_OFFSET_SIZE.pack(e.offset, e.size) + e.key for e in self.entries))

    def mid_key_metadata(self) -> bytes:
        """`getMidKeyMetadata`: where the middle data block's index entry sits among the leaves."""
        total = self.num_sub_entries_at[-1]
        mid_sub_entry = (total - 1) // 2
        mid_entry = bisect.bisect_right(self.num_sub_entries_at, mid_sub_entry)
        before = self.num_sub_entries_at[mid_entry - 1] if mid_entry > 0 else 0
        entry = self.entries[mid_entry]
        return MID_KEY_METADATA.pack(entry.offset, entry.size, mid_sub_entry - before)


# Writes one block and returns (offset, on-disk size with header, uncompressed size without header).
EmitBlock = Callable[[BlockType, bytes], tuple[int, int, int]]


class BlockIndexWriter:
    """`HFileBlockIndex.BlockIndexWriter` for the data index: leaf blocks are written inline between
    data blocks once big enough; at close, levels are stacked until the root is small enough."""

    def __init__(self, max_chunk_size: int = DEFAULT_MAX_CHUNK_SIZE,
                 min_index_num_entries: int = DEFAULT_MIN_INDEX_NUM_ENTRIES):
        if max_chunk_size <= 0 or min_index_num_entries < 2:
            raise ValueError("index chunks need a positive size and at least 2 entries")
        self.max_chunk_size = max_chunk_size
        self.min_index_num_entries = min_index_num_entries
        self.root = BlockIndexChunk()
        self._inline: BlockIndexChunk | None = BlockIndexChunk()
        self.num_levels = 1
        self.total_uncompressed_size = 0
        self._total_entries = 0

    def add_entry(self, key: bytes, offset: int, size: int) -> None:
        """Index one data block."""
        if self._inline is None:
            raise ValueError("the block index is closed")
        self._inline.add(key, offset, size)
        self._total_entries += 1

    def write_inline_blocks(self, emit: EmitBlock, closing: bool) -> int:
        """Write the pending leaf block if due (`shouldWriteBlock`); the uncompressed bytes written,
        headers included (the file's total counts leaf blocks, unlike the other index blocks)."""
        written = 0
        while self._should_write_block(closing):
            leaf, self._inline = self._inline, BlockIndexChunk()
            offset, on_disk_size, uncompressed_size = emit(BlockType.LEAF_INDEX, leaf.encode_non_root())
            self.total_uncompressed_size += uncompressed_size
            if not self.root.entries:
                self.num_levels = 2
            self.root.add(leaf.entries[0].key, offset, on_disk_size, self._total_entries)
            written += BLOCK_HEADER_SIZE + uncompressed_size
        return written

    def _should_write_block(self, closing: bool) -> bool:
        if self._inline is None or not self._inline.entries:  # closed, or nothing pending
            return False
        if not closing:
            return self._inline.non_root_size >= self.max_chunk_size
        if not self.root.entries:
            # Too few entries for a leaf block: they become the root, a single-level index.
            self.root, self._inline = self._inline, None
            return False
        return True

    def write_index_blocks(self, emit: EmitBlock) -> int:
        """`writeIndexBlocks`: intermediate levels as needed, then the root; the root's offset."""
        mid_key_metadata = self.root.mid_key_metadata() if self.num_levels > 1 else b""
        if self._inline is not None:
            while (self.root.root_size > self.max_chunk_size
                   and len(self.root.entries) > self.min_index_num_entries
                   and self.num_levels < MAX_INDEX_LEVELS):
                self.root = self._write_intermediate_level(emit, self.root)
                self.num_levels += 1
        offset, _, uncompressed_size = emit(BlockType.ROOT_INDEX, self.root.encode_root() + mid_key_metadata)
        self.total_uncompressed_size += uncompressed_size
        return offset

    def _write_intermediate_level(self, emit: EmitBlock, level: BlockIndexChunk) -> BlockIndexChunk:
        parent, chunk = BlockIndexChunk(), BlockIndexChunk()
        for i, entry in enumerate(level.entries):
            chunk.add(entry.key, entry.offset, entry.size)
            # HBase compares the position in the whole level, not in the chunk, with the minimum.
            if i >= self.min_index_num_entries and chunk.root_size >= self.max_chunk_size:
                self._write_intermediate_block(emit, parent, chunk)
                chunk = BlockIndexChunk()
        if chunk.entries:
            self._write_intermediate_block(emit, parent, chunk)
        return parent

    def _write_intermediate_block(self, emit: EmitBlock, parent: BlockIndexChunk,
                                  chunk: BlockIndexChunk) -> None:
        offset, on_disk_size, uncompressed_size = emit(BlockType.INTERMEDIATE_INDEX, chunk.encode_non_root())
        self.total_uncompressed_size += uncompressed_size
        parent.add(chunk.entries[0].key, offset, on_disk_size)


def encode_single_level_index(entries: list[IndexEntry]) -> bytes:
    """The meta-block index (`writeSingleLevelIndex`): root format, no levels."""
    chunk = BlockIndexChunk()
    for entry in entries:
        chunk.add(entry.key, entry.offset, entry.size)
    return chunk.encode_root()
