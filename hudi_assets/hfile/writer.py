"""Write an HFile v3 as Hudi 0.14/0.15 does through HBase 2.4.9's `HFileWriterImpl`.

Hudi's `HoodieAvroHFileWriter` (metadata-table base files) and `HoodieHFileDataBlock` (HFILE_DATA
log blocks) append one `KeyValue(recordKey, null, null, value)` per record in key order, with 1 MiB
blocks (`hoodie.hfile.block.size`; fixed for log blocks), GZ compression by default, comparator
`HoodieHBaseKVComparator` and the Avro schema under file-info key `schema`; base files add the bloom
filter as meta block `bloomFilter` and `minRecordKey`, `maxRecordKey`, `bloomFilterTypeCode` to the
file info. HBase lays the file out as data blocks (leaf index blocks between them once the index
outgrows one chunk), meta blocks, intermediate index blocks if any, root data index, meta index,
file info, trailer. Output is byte-identical to Java's, GZ blocks included.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping

from hudi_assets.hfile.block import BlockWriter
from hudi_assets.hfile.fileinfo import encode_file_info
from hudi_assets.hfile.format import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    BLOCK_HEADER_SIZE,
    CREATE_TIME_TS,
    HUDI_COMPARATOR,
    KEY_VALUE_VER_WITH_MEMSTORE,
    KEY_VALUE_VERSION,
    LASTKEY,
    MAX_MEMSTORE_TS_KEY,
    RESERVED_FILE_INFO_PREFIX,
    TRAILER_SIZE,
    BlockType,
    Compression,
)
from hudi_assets.hfile.index import (
    DEFAULT_MAX_CHUNK_SIZE,
    DEFAULT_MIN_INDEX_NUM_ENTRIES,
    BlockIndexWriter,
    IndexEntry,
    encode_single_level_index,
)
from hudi_assets.hfile.keyvalue import encode_cell, encode_key, index_key
from hudi_assets.hfile.trailer import Trailer

DEFAULT_BLOCK_SIZE = 1024 * 1024  # `hoodie.hfile.block.size`, `HoodieHFileDataBlock.DEFAULT_BLOCK_SIZE`


class HFileWriter:
    """`HFileWriterImpl` for Hudi's cells: `append` rows in order, then `close` for the file's bytes."""

    def __init__(self, *, block_size: int = DEFAULT_BLOCK_SIZE, compression: Compression | str = "GZ",
                 comparator_class_name: str = HUDI_COMPARATOR,
                 max_index_chunk_size: int = DEFAULT_MAX_CHUNK_SIZE,
                 min_index_num_entries: int = DEFAULT_MIN_INDEX_NUM_ENTRIES):
        if block_size <= 0:
            raise ValueError(f"block size must be positive, got {block_size}")
        name = compression.name if isinstance(compression, Compression) else compression
        codec = Compression.__members__.get(name)
        if codec not in (Compression.GZ, Compression.NONE):
            raise ValueError(f"compression {name} is not supported (only GZ and NONE)")
        self._codec = codec
        self._block_size = block_size
        self._comparator = comparator_class_name
        self._out = bytearray()
        self._blocks = BlockWriter(codec)
        self._index = BlockIndexWriter(max_index_chunk_size, min_index_num_entries)
        self._file_info: dict[bytes, bytes] = {}
        self._meta: list[tuple[bytes, bytes]] = []
        self._block: bytearray | None = None  # the data block being filled
        self._first_row_in_block = b""
        self._last_row_of_previous_block: bytes | None = None
        self._last_row: bytes | None = None
        self._first_data_block_offset = -1
        self._last_data_block_offset = -1
        self._entry_count = 0
        self._total_key_length = 0
        self._total_value_length = 0
        self._total_uncompressed_bytes = 0

    def append_file_info(self, key: bytes, value: bytes) -> None:
        """`appendFileInfo`: a user entry; keys starting with `hfile.` are HBase's own."""
        if key.startswith(RESERVED_FILE_INFO_PREFIX):
            raise ValueError(f"file-info key {key!r}: keys starting with {RESERVED_FILE_INFO_PREFIX!r} "
                             "are HBase's")
        self._file_info[key] = value

    def append_meta_block(self, name: bytes, content: bytes) -> None:
        """`appendMetaBlock`: meta blocks are written at close, ordered by name (stable for equal names)."""
        position = next((i for i, (other, _) in enumerate(self._meta) if other > name), len(self._meta))
        self._meta.insert(position, (name, content))

    def append(self, row: bytes, value: bytes) -> None:
        """Append one cell; rows must not decrease (equal rows are kept in the same data block)."""
        if self._last_row is not None and row < self._last_row:
            raise ValueError(f"row {row!r} sorts before the previous row {self._last_row!r}")
        key = encode_key(row)
        if row != self._last_row and self._block is not None and len(self._block) >= self._block_size:
            self._finish_block()
            self._write_inline_blocks(closing=False)
        if self._block is None:
            self._block = bytearray()
            self._first_row_in_block = row
            self._last_row_of_previous_block = self._last_row
        self._block += encode_cell(key, value)
        self._total_key_length += len(key)
        self._total_value_length += len(value)
        self._last_row = row
        self._entry_count += 1

    def _emit(self, block_type: BlockType, body: bytes) -> tuple[int, int, int]:
        offset = len(self._out)
        self._out += self._blocks.encode(block_type, body, offset)
        return offset, len(self._out) - offset, len(body)

    def _finish_block(self) -> None:
        """`finishBlock`: write the data block and index it under its (possibly shortened) key."""
        if not self._block:
            return
        offset, on_disk_size, uncompressed_size = self._emit(BlockType.DATA, bytes(self._block))
        if self._first_data_block_offset == -1:
            self._first_data_block_offset = offset
        self._last_data_block_offset = offset
        self._index.add_entry(index_key(self._last_row_of_previous_block, self._first_row_in_block),
                              offset, on_disk_size)
        self._total_uncompressed_bytes += BLOCK_HEADER_SIZE + uncompressed_size
        self._block = None

    def _write_inline_blocks(self, closing: bool) -> None:
        self._total_uncompressed_bytes += self._index.write_inline_blocks(self._emit, closing)

    def close(self) -> bytes:
        """`close`: the rest of the file after the data blocks; returns the whole file."""
        self._finish_block()
        self._write_inline_blocks(closing=True)
        meta_entries = []
        for name, content in self._meta:
            offset, on_disk_size, uncompressed_size = self._emit(BlockType.META, content)
            self._total_uncompressed_bytes += BLOCK_HEADER_SIZE + uncompressed_size
            meta_entries.append(IndexEntry(name, offset, on_disk_size))
        load_on_open_offset = self._index.write_index_blocks(self._emit)
        _, _, meta_index_size = self._emit(BlockType.ROOT_INDEX, encode_single_level_index(meta_entries))
        self._total_uncompressed_bytes += BLOCK_HEADER_SIZE + meta_index_size
        file_info = encode_file_info(self._finish_file_info())
        file_info_offset, _, file_info_size = self._emit(BlockType.FILE_INFO, file_info)
        self._total_uncompressed_bytes += BLOCK_HEADER_SIZE + file_info_size
        trailer = Trailer(
            file_info_offset=file_info_offset,
            load_on_open_data_offset=load_on_open_offset,
            uncompressed_data_index_size=self._index.total_uncompressed_size,
            total_uncompressed_bytes=self._total_uncompressed_bytes + TRAILER_SIZE,
            data_index_count=len(self._index.root.entries),
            meta_index_count=len(meta_entries),
            entry_count=self._entry_count,
            num_data_index_levels=self._index.num_levels,
            first_data_block_offset=self._first_data_block_offset,
            last_data_block_offset=self._last_data_block_offset,
            comparator_class_name=self._comparator,
            compression_codec=self._codec,
        )
        self._out += trailer.serialize()
        return bytes(self._out)

    def _finish_file_info(self) -> dict[bytes, bytes]:
        """The user entries plus HBase's: memstore/KeyValue version, last key, averages, create time 0."""
        info = dict(self._file_info)
        info[MAX_MEMSTORE_TS_KEY] = struct.pack(">q", 0)
        info[KEY_VALUE_VERSION] = struct.pack(">i", KEY_VALUE_VER_WITH_MEMSTORE)
        if self._last_row is not None:
            info[LASTKEY] = encode_key(self._last_row)
        count = self._entry_count
        info[AVG_KEY_LEN] = struct.pack(">i", self._total_key_length // count if count else 0)
        info[CREATE_TIME_TS] = struct.pack(">q", 0)  # Hudi's HFileContext never sets a create time
        info[AVG_VALUE_LEN] = struct.pack(">i", self._total_value_length // count if count else 0)
        return info


def write_hfile(entries: Iterable[tuple[bytes, bytes]], *, block_size: int = DEFAULT_BLOCK_SIZE,
                compression: Compression | str = "GZ", file_info: Mapping[bytes, bytes] | None = None,
                meta_blocks: Mapping[bytes, bytes] | None = None,
                comparator_class_name: str = HUDI_COMPARATOR,
                max_index_chunk_size: int = DEFAULT_MAX_CHUNK_SIZE,
                min_index_num_entries: int = DEFAULT_MIN_INDEX_NUM_ENTRIES) -> bytes:
    """The bytes of an HFile holding `entries` (row key, value), which must be in key order.

    The defaults are Hudi's; the index chunk settings are HBase's `hfile.index.block.max.size` and
    `hfile.index.block.min.entries`, which Hudi leaves at their defaults.
    """
    writer = HFileWriter(block_size=block_size, compression=compression,
                         comparator_class_name=comparator_class_name,
                         max_index_chunk_size=max_index_chunk_size,
                         min_index_num_entries=min_index_num_entries)
    for key, value in (file_info or {}).items():
        writer.append_file_info(key, value)
    for name, content in (meta_blocks or {}).items():
        writer.append_meta_block(name, content)
    for row, value in entries:
        writer.append(row, value)
    return writer.close()
