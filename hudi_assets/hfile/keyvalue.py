"""HBase `KeyValue` cells as Hudi writes them: the record key as row, empty family and qualifier.

A cell in a data block: int key length, int value length, key, value, then (HFile v3) a short tags
length if the file has tags, and the memstore timestamp as a Hadoop vlong if the file has them.
A key: short row length, row, byte family length, family, qualifier, long timestamp, byte type.
Hudi's `new KeyValue(recordKey, null, null, value)` stamps `HConstants.LATEST_TIMESTAMP` and `Put`,
so keys differ only by row and Hudi's comparator (`HoodieHBaseKVComparator`, a
`CellComparatorImpl`) orders them by the row's unsigned bytes.
"""

from __future__ import annotations

import struct

from hudi_assets.hfile.format import read_vlong

LATEST_TIMESTAMP = (1 << 63) - 1
TYPE_PUT = 4
TYPE_MAXIMUM = 255  # `KeyValue.Type.Maximum`: what `createFirstOnRow` stamps on index-only keys
KEY_INFRASTRUCTURE_SIZE = 12  # row length + family length + timestamp + type
MAX_ROW_LENGTH = 0x7FFF  # `Short.MAX_VALUE`

_CELL_LENGTHS = struct.Struct(">ii")


def encode_key(row: bytes, key_type: int = TYPE_PUT) -> bytes:
    """The serialized key of a cell on `row` with empty family and qualifier, latest timestamp."""
    if len(row) > MAX_ROW_LENGTH:
        raise ValueError(f"row key of {len(row)} bytes exceeds HBase's limit of {MAX_ROW_LENGTH}")
    return struct.pack(">H", len(row)) + row + struct.pack(">BqB", 0, LATEST_TIMESTAMP, key_type)


def encode_cell(key: bytes, value: bytes) -> bytes:
    """A cell as `NoneEncoder` writes it without tags, with memstore timestamp 0 (one vlong byte)."""
    return _CELL_LENGTHS.pack(len(key), len(value)) + key + value + b"\x00"


def key_row(key: bytes) -> bytes:
    """The row of a serialized key (index keys of Hudi 1.1's own writer stop after the row)."""
    if len(key) < 2:
        raise ValueError(f"a {len(key)}-byte key is too short for a row length")
    row_length = int.from_bytes(key[:2], "big")
    if 2 + row_length > len(key):
        raise ValueError(f"key row length {row_length} exceeds the {len(key)}-byte key")
    return key[2 : 2 + row_length]


def index_key(previous_row: bytes | None, first_row: bytes) -> bytes:
    """`HFileWriterImpl.getMidpoint` for Hudi cells: the block index key of a data block.

    The first block is indexed by its first key. Later blocks get a "fake" key on the shortest row
    that sorts after the previous block's last row and not after the block's first row, stamped
    `Maximum` so it sorts before every real cell of that row. Equal rows cannot be shortened.
    """
    if previous_row is None:
        return encode_key(first_row)
    if previous_row == first_row:
        return encode_key(first_row)
    if previous_row > first_row:
        raise ValueError("left row sorts after right row")
    return encode_key(_minimum_midpoint(previous_row, first_row), TYPE_MAXIMUM)


def _minimum_midpoint(left: bytes, right: bytes) -> bytes:
    """`HFileWriterImpl.getMinimumMidpointArray` for rows left < right."""
    common = min(len(left), len(right))
    diff = 0
    while diff < common and left[diff] == right[diff]:
        diff += 1
    if diff < common and left[diff] < 0xFF and left[diff] + 1 < right[diff]:
        return left[:diff] + bytes((left[diff] + 1,))
    return right[: diff + 1]


def decode_cells(body: bytes, includes_tags: bool, includes_mvcc: bool) -> list[tuple[bytes, bytes]]:
    """(row, value) of every cell in an unencoded data block body, in order."""
    cells = []
    pos, end = 0, len(body)
    unpack_lengths = _CELL_LENGTHS.unpack_from
    while pos < end:
        if pos + 8 > end:
            raise ValueError(f"truncated cell at byte {pos} of a data block")
        key_length, value_length = unpack_lengths(body, pos)
        key_start = pos + 8
        value_start = key_start + key_length
        pos = value_start + value_length
        if key_length < KEY_INFRASTRUCTURE_SIZE or value_length < 0 or pos > end:
            raise ValueError(f"cell at byte {key_start - 8} of a data block has bad lengths "
                             f"(key {key_length}, value {value_length})")
        row_length = (body[key_start] << 8) | body[key_start + 1]
        if row_length + KEY_INFRASTRUCTURE_SIZE > key_length:
            raise ValueError(f"cell at byte {key_start - 8} of a data block has row length {row_length} "
                             f"beyond its {key_length}-byte key")
        cells.append((body[key_start + 2 : key_start + 2 + row_length], body[value_start:pos]))
        if includes_tags:
            if pos + 2 > end:
                raise ValueError("truncated tags length in a data block")
            pos += 2 + ((body[pos] << 8) | body[pos + 1])
        if includes_mvcc:
            if pos >= end:
                raise ValueError("truncated memstore timestamp in a data block")
            pos = pos + 1 if body[pos] < 0x80 else read_vlong(body, pos)[1]
    if pos != end:
        raise ValueError("the last cell of a data block runs past its end")
    return cells
