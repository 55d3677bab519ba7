"""Read an HFile v3 held in memory: entries in order, point and range lookups through the block index.

Follows HBase 2.4's `HFileReaderImpl` / `HFileInfo` (load-on-open section: root data index, meta
index, file info) and `HFileBlockIndex.BlockIndexReader` (descending root -> intermediate -> leaf).
Keys are compared as Hudi's comparator does for its cells: by the row's unsigned bytes.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.hfile.block import BlockHeader, read_block, read_header
from hudi_assets.hfile.fileinfo import decode_file_info
from hudi_assets.hfile.format import (
    KEY_VALUE_VER_WITH_MEMSTORE,
    KEY_VALUE_VERSION,
    MAX_TAGS_LEN,
    TRAILER_SIZE,
    BlockType,
)
from hudi_assets.hfile.index import (
    MAX_INDEX_LEVELS,
    MID_KEY_METADATA,
    IndexEntry,
    decode_non_root_index,
    decode_root_index,
)
from hudi_assets.hfile.keyvalue import decode_cells, key_row
from hudi_assets.hfile.trailer import Trailer, read_trailer

Cell = tuple[bytes, bytes]


class HFileReader:
    """An HFile's trailer, file info, meta blocks and (row key, value) entries.

    Any structural problem raises `CorruptFileError` naming `name`; the checksums of every
    uncompressed block read are verified unless `verify_checksums` is False (a GZ block carries
    gzip's own CRC32: `read_block`).
    """

    def __init__(self, data: bytes, *, name: str = "<hfile>", verify_checksums: bool = True):
        self.name = name
        self._data = bytes(data)
        self._verify = verify_checksums
        self._index_blocks: dict[int, tuple[list[IndexEntry], list[bytes]]] = {}
        self._last_data_block: tuple[int, list[Cell]] = (-1, [])
        try:
            self.trailer: Trailer = read_trailer(self._data)
        except ValueError as e:
            raise CorruptFileError(name, str(e)) from None
        self._load_on_open()

    def _corrupt(self, problem: str) -> CorruptFileError:
        return CorruptFileError(self.name, problem)

    def _block(self, offset: int, *expected: BlockType) -> tuple[BlockHeader, bytes]:
        if not 0 <= offset < len(self._data) - TRAILER_SIZE:
            raise self._corrupt(f"block offset {offset} lies outside the blocks section")
        try:
            header, body = read_block(self._data, offset, self.trailer.compression_codec, self._verify)
        except ValueError as e:
            raise self._corrupt(str(e)) from None
        if expected and header.block_type not in expected:
            names = " or ".join(t.name for t in expected)
            raise self._corrupt(f"expected a {names} block at offset {offset}, "
                                f"found {header.block_type.name}")
        return header, body

    def _load_on_open(self) -> None:
        trailer = self.trailer
        if not 1 <= trailer.num_data_index_levels <= MAX_INDEX_LEVELS:
            raise self._corrupt(f"implausible number of data index levels {trailer.num_data_index_levels}")
        root_header, root_body = self._block(trailer.load_on_open_data_offset, BlockType.ROOT_INDEX)
        meta_offset = root_header.offset + root_header.on_disk_size_with_header
        _, meta_body = self._block(meta_offset, BlockType.ROOT_INDEX)
        _, info_body = self._block(trailer.file_info_offset, BlockType.FILE_INFO)
        try:
            self._root, rest = decode_root_index(root_body, trailer.data_index_count)
            meta_entries, _ = decode_root_index(meta_body, trailer.meta_index_count)
            self.file_info: dict[bytes, bytes] = decode_file_info(info_body)
        except ValueError as e:
            raise self._corrupt(str(e)) from None
        if rest and not (trailer.num_data_index_levels > 1 and len(rest) == MID_KEY_METADATA.size):
            raise self._corrupt(f"{len(rest)} unexpected bytes after the root data index entries")
        self._root_rows = self._rows(self._root)
        self._meta_index = {entry.key: entry for entry in meta_entries}
        self._includes_tags = MAX_TAGS_LEN in self.file_info
        # `HFileInfo`: cells carry a memstore timestamp when KEY_VALUE_VERSION says so, tags when
        # MAX_TAGS_LEN is present.
        version = self.file_info.get(KEY_VALUE_VERSION, b"")
        self._includes_mvcc = int.from_bytes(version, "big") == KEY_VALUE_VER_WITH_MEMSTORE

    @property
    def num_entries(self) -> int:
        """The number of cells, as the trailer records it."""
        return self.trailer.entry_count

    @property
    def index_levels(self) -> int:
        """Levels of the data block index: 1 for a root only, 2 with leaf blocks, more with intermediates."""
        return self.trailer.num_data_index_levels

    @property
    def meta_block_names(self) -> list[bytes]:
        return list(self._meta_index)

    def meta_block(self, name: bytes) -> bytes | None:
        """The content of the meta block `name` (Hudi's bloom filter is `bloomFilter`), or None."""
        entry = self._meta_index.get(name)
        if entry is None:
            return None
        return self._block(entry.offset, BlockType.META)[1]

    def data_block_index(self) -> list[IndexEntry]:
        """The index entries of all data blocks in order, reading every intermediate and leaf block."""
        level = self._root
        for depth in range(1, self.index_levels):
            level = [child for entry in level for child in self._index_block(entry, depth)[0]]
        return level

    def _index_block(self, entry: IndexEntry, depth: int) -> tuple[list[IndexEntry], list[bytes]]:
        """Entries and their rows of the non-root index block `entry` points to, `depth` below the root."""
        cached = self._index_blocks.get(entry.offset)
        if cached is None:
            leaf = depth == self.index_levels - 1
            expected = BlockType.LEAF_INDEX if leaf else BlockType.INTERMEDIATE_INDEX
            header, body = self._block(entry.offset, expected)
            if header.on_disk_size_with_header != entry.size:
                raise self._corrupt(f"index entry says {entry.size} bytes for the block at offset "
                                    f"{entry.offset}, its header says {header.on_disk_size_with_header}")
            try:
                entries = decode_non_root_index(body)
            except ValueError as e:
                raise self._corrupt(f"{expected.name} block at offset {entry.offset}: {e}") from None
            cached = self._index_blocks[entry.offset] = (entries, self._rows(entries))
        return cached

    def _rows(self, level: list[IndexEntry]) -> list[bytes]:
        try:
            return [key_row(entry.key) for entry in level]
        except ValueError as e:
            raise self._corrupt(f"block index: {e}") from None

    def _cells(self, offset: int) -> list[Cell]:
        if self._last_data_block[0] != offset:
            _, body = self._block(offset, BlockType.DATA)
            try:
                cells = decode_cells(body, self._includes_tags, self._includes_mvcc)
            except ValueError as e:
                raise self._corrupt(f"data block at offset {offset}: {e}") from None
            self._last_data_block = (offset, cells)
        return self._last_data_block[1]

    def entries(self) -> Iterator[Cell]:
        """Every (row key, value) in file order; raises if their number is not the trailer's."""
        count = 0
        for cell in self._scan(self.trailer.first_data_block_offset, 0):
            count += 1
            yield cell
        if count != self.num_entries:
            raise self._corrupt(f"the data blocks hold {count} cells, the trailer says {self.num_entries}")

    def _scan(self, offset: int, skip: int) -> Iterator[Cell]:
        """Cells from the data block at `offset` (its first `skip` cells left out) to the last data
        block, stepping over the leaf index blocks written between data blocks."""
        if self.num_entries == 0:
            return
        while offset <= self.trailer.last_data_block_offset:
            try:
                header = read_header(self._data, offset)
            except ValueError as e:
                raise self._corrupt(str(e)) from None
            if header.block_type == BlockType.DATA:
                cells = self._cells(offset)
                yield from cells[skip:] if skip else cells
                skip = 0
            elif header.block_type == BlockType.ENCODED_DATA:
                raise self._corrupt(f"data block encoding (block at offset {offset}) is not supported")
            offset += header.on_disk_size_with_header

    def seek_to(self, key: bytes) -> Iterator[Cell]:
        """Cells from the first whose row key is >= `key`, to the end of the file."""
        if self.num_entries == 0:
            return iter(())
        offset = self._data_block_before(key)
        cells = self._cells(offset)
        return self._scan(offset, bisect.bisect_left(cells, key, key=lambda cell: cell[0]))

    def get(self, key: bytes) -> bytes | None:
        """The value of the first cell whose row key is `key`, or None."""
        for row, value in self.seek_to(key):
            return value if row == key else None
        return None

    def _data_block_before(self, key: bytes) -> int:
        """The offset of the last data block whose index key sorts before `key`, else of the first.

        Index keys never sort after their block's first row, so the first cell >= `key` is in this
        block or opens the next one; comparing strictly also finds the first of equal rows.
        """
        entries, rows = self._root, self._root_rows
        for depth in range(1, self.index_levels + 1):
            if not entries:
                raise self._corrupt("the data block index is empty but the file has cells")
            entry = entries[max(bisect.bisect_left(rows, key) - 1, 0)]
            if depth == self.index_levels:
                break
            entries, rows = self._index_block(entry, depth)
        return entry.offset
