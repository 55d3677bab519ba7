"""Block encoding: the header map layout, the rollback command block, and encode/read round trips."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_assets.logformat import (
    MAGIC,
    BlockType,
    HeaderKey,
    LogBlock,
    encode_block,
    encode_metadata,
    read_blocks,
    rollback_command_block,
)
from hudi_assets.logformat.block import WRITABLE_HEADER_KEYS


def test_metadata_map_layout_keeps_entry_order() -> None:
    encoded = encode_metadata({HeaderKey.SCHEMA: "é", HeaderKey.INSTANT_TIME: "001"})
    assert encoded == (
        struct.pack(">i", 2) + struct.pack(">ii", 2, 2) + "é".encode() + struct.pack(">ii", 0, 3) + b"001"
    )
    assert encode_metadata({}) == b"\x00\x00\x00\x00"


def test_block_layout_and_size_fields() -> None:
    encoded = encode_block(LogBlock(BlockType.DELETE, {HeaderKey.INSTANT_TIME: "7"}, b"abc"))
    size = 4 + 4 + (4 + 8 + 1) + 8 + 3 + 4 + 8
    assert encoded[:6] == MAGIC
    assert struct.unpack_from(">qii", encoded, 6) == (size, 1, BlockType.DELETE)
    assert struct.unpack_from(">q", encoded, len(encoded) - 8)[0] == size + 6
    assert len(encoded) == 6 + 8 + size


def test_rollback_command_block_reproduces_a_hudi_written_file(log_file) -> None:
    name, data = log_file("rollback")
    (block,) = read_blocks(data, name)
    rebuilt = rollback_command_block(
        block.header[HeaderKey.INSTANT_TIME], block.header[HeaderKey.TARGET_INSTANT_TIME]
    )
    assert rebuilt == block
    assert list(rebuilt.header) == list(block.header)
    assert encode_block(rebuilt) == data


def test_corrupt_blocks_are_never_written() -> None:
    with pytest.raises(ValueError, match="CORRUPT"):
        encode_block(LogBlock(BlockType.CORRUPT, content=b"x"))


@pytest.mark.parametrize("key", [HeaderKey.IS_PARTIAL, HeaderKey.BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS])
def test_hudi_1x_header_keys_are_never_written(key: HeaderKey) -> None:
    with pytest.raises(ValueError, match=key.name):
        encode_block(LogBlock(BlockType.AVRO_DATA, {key: "true"}))


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_metadata = st.dictionaries(st.sampled_from(sorted(WRITABLE_HEADER_KEYS)), _text, max_size=7)
_blocks = st.builds(
    LogBlock,
    block_type=st.sampled_from([t for t in BlockType if t != BlockType.CORRUPT]),
    header=_metadata,
    content=st.binary(max_size=300),
    footer=_metadata,
)


@given(st.lists(_blocks, max_size=5))
def test_encoded_blocks_read_back_equal(blocks: list[LogBlock]) -> None:
    encoded = [encode_block(block) for block in blocks]
    read = list(read_blocks(b"".join(encoded)))
    assert read == blocks
    assert [list(b.header) for b in read] == [list(b.header) for b in blocks]
    assert [b.size for b in read] == [len(e) for e in encoded]
    assert [b.offset for b in read] == [sum(len(e) for e in encoded[:i]) for i in range(len(encoded))]
