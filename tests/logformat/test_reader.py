"""Reading log files: real Hudi-written files, and corrupt-block detection as in `HoodieLogFileReader`."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.logformat import (
    MAGIC,
    BlockType,
    HeaderKey,
    LogBlock,
    LogFileName,
    decode_avro_data_block,
    encode_block,
    read_blocks,
    reader,
)


def test_avro_data_file(log_file) -> None:
    name, data = log_file("avro_data")
    (block,) = read_blocks(data, name)
    assert block.block_type == BlockType.AVRO_DATA
    assert list(block.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
    assert block.header[HeaderKey.INSTANT_TIME] == "20250316025828811"
    assert '"name":"trips_quickstart_mor_avro_record"' in block.header[HeaderKey.SCHEMA]
    assert block.footer == {}
    (record,) = decode_avro_data_block(block, path=name)
    assert record["_hoodie_record_key"] == "334e26e9-8355-45cc-97c6-c31daf0df330"
    assert (record["rider"], record["fare"], record["city"]) == ("rider-A", 29.1, "san_francisco")


def test_parquet_data_file(log_file) -> None:
    name, data = log_file("parquet_data")
    (block,) = read_blocks(data, name)
    assert block.block_type == BlockType.PARQUET_DATA
    assert list(block.header) == [HeaderKey.SCHEMA, HeaderKey.INSTANT_TIME]
    assert block.header[HeaderKey.INSTANT_TIME] == "20250113230424191"
    table = pq.read_table(io.BytesIO(block.content))
    assert table.num_rows == 1
    assert table.column("rider").to_pylist() == ["rider-A"]


def test_delete_file(log_file) -> None:
    name, data = log_file("delete")
    (block,) = read_blocks(data, name)
    assert block.block_type == BlockType.DELETE
    assert block.header[HeaderKey.INSTANT_TIME] == "20250618054714114"
    assert HeaderKey.SCHEMA in block.header
    # Delete block v3: int32 version, int32 length, Avro array of 3 (zig-zag 0x06) deleted keys.
    assert struct.unpack_from(">i", block.content)[0] == 3
    assert block.content[8] == 0x06
    assert block.content.count(b"city=san_francisco") == 3


def test_rollback_file(log_file) -> None:
    name, data = log_file("rollback")
    (block,) = read_blocks(data, name)
    assert block.block_type == BlockType.COMMAND
    assert block.header == {
        HeaderKey.INSTANT_TIME: "20250126040936578",
        HeaderKey.COMMAND_BLOCK_TYPE: "0",
        HeaderKey.TARGET_INSTANT_TIME: "20250126040826878",
    }
    assert block.content == b""
    assert (block.offset, block.size) == (0, len(data))


@pytest.mark.parametrize("kind", ["avro_data", "parquet_data", "delete", "rollback"])
def test_real_files_re_encode_byte_for_byte(log_file, kind: str) -> None:
    name, data = log_file(kind)
    assert b"".join(encode_block(block) for block in read_blocks(data, name)) == data


def test_every_log_file_of_the_real_v6_tables_re_encodes_byte_for_byte(shared_dir: Path) -> None:
    checked = 0
    for archive in sorted((shared_dir / "tables").glob("*__v6_*.zip")):
        with zipfile.ZipFile(archive) as tables:
            for member in tables.namelist():
                if member.startswith("__MACOSX/") or LogFileName.parse(member.rsplit("/", 1)[-1]) is None:
                    continue
                data = tables.read(member)
                blocks = list(read_blocks(data, member))
                assert all(block.block_type != BlockType.CORRUPT for block in blocks), member
                assert b"".join(encode_block(block) for block in blocks) == data, member
                checked += 1
    assert checked >= 7


def _block(instant: str, content: bytes = b"payload") -> bytes:
    return encode_block(LogBlock(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: instant}, content))


def _types(data: bytes) -> list[BlockType]:
    return [block.block_type for block in read_blocks(data)]


def test_truncated_file_yields_the_good_blocks_then_a_corrupt_one() -> None:
    first, second, third = _block("1"), _block("2"), _block("3")
    data = first + second + third[: len(third) // 2]
    blocks = list(read_blocks(data))
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA, BlockType.AVRO_DATA, BlockType.CORRUPT]
    corrupt = blocks[2]
    assert (corrupt.offset, corrupt.size) == (len(first + second), len(third) // 2)
    assert corrupt.content == third[len(MAGIC) : len(third) // 2]


@pytest.mark.parametrize("cut", [len(MAGIC), len(MAGIC) + 3, len(MAGIC) + 8, -1])
def test_truncation_anywhere_in_a_block_is_a_corrupt_tail(cut: int) -> None:
    good, torn = _block("1"), _block("2")
    assert _types(good + torn[:cut]) == [BlockType.AVRO_DATA, BlockType.CORRUPT]


def test_a_torn_real_file_keeps_no_exception(log_file) -> None:
    name, data = log_file("avro_data")
    assert [b.block_type for b in read_blocks(data + data[:700], name)] == [
        BlockType.AVRO_DATA,
        BlockType.CORRUPT,
    ]


def test_garbage_between_blocks_corrupts_the_block_before_it_and_the_next_block_is_read() -> None:
    # Hudi checks that a block's trailer is followed by magic or EOF, so the garbage takes the
    # preceding block with it into one CORRUPT block ending at the next magic.
    first, garbage, second = _block("1"), b"\x00garbage\xff" * 3, _block("2")
    blocks = list(read_blocks(first + garbage + second))
    assert [b.block_type for b in blocks] == [BlockType.CORRUPT, BlockType.AVRO_DATA]
    assert blocks[0].content == first[len(MAGIC) :] + garbage
    assert blocks[1].header == {HeaderKey.INSTANT_TIME: "2"}
    assert blocks[1].offset == len(first + garbage)


def test_fewer_than_six_trailing_bytes_are_ignored_more_corrupt_the_last_block() -> None:
    block = _block("1")
    assert _types(block + b"\x01\x02\x03\x04\x05") == [BlockType.AVRO_DATA]
    assert _types(block + b"\x01\x02\x03\x04\x05\x06") == [BlockType.CORRUPT]


@pytest.mark.parametrize("size_delta", [1, -1, 10**6, -(10**6)])
def test_a_wrong_size_field_makes_a_corrupt_block(size_delta: int) -> None:
    first, second = bytearray(_block("1")), _block("2")
    size = struct.unpack_from(">q", first, len(MAGIC))[0]
    struct.pack_into(">q", first, len(MAGIC), size + size_delta)
    blocks = list(read_blocks(bytes(first) + second))
    assert [b.block_type for b in blocks] == [BlockType.CORRUPT, BlockType.AVRO_DATA]
    assert blocks[1].header == {HeaderKey.INSTANT_TIME: "2"}


def test_a_wrong_trailer_makes_a_corrupt_block() -> None:
    first = bytearray(_block("1"))
    struct.pack_into(">q", first, len(first) - 8, 12345)
    assert _types(bytes(first) + _block("2")) == [BlockType.CORRUPT, BlockType.AVRO_DATA]


def test_the_magic_scan_finds_magic_across_read_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "_SCAN_CHUNK", 7)
    torn = _block("1")[:30]
    for padding in range(8):
        data = torn + b"x" * padding + _block("2")
        assert _types(data) == [BlockType.CORRUPT, BlockType.AVRO_DATA]


def test_streams_read_like_bytes(tmp_path: Path) -> None:
    data = _block("1") + _block("2")[:20]
    path = tmp_path / ".f_1.log.1_0-1-2"
    path.write_bytes(data)
    with path.open("rb") as stream:
        assert list(read_blocks(stream, str(path))) == list(read_blocks(data))


def test_an_empty_file_has_no_blocks() -> None:
    assert list(read_blocks(b"")) == []


def test_a_file_not_starting_with_magic_is_unreadable() -> None:
    with pytest.raises(CorruptFileError, match="some/path: no log block magic at offset 0"):
        list(read_blocks(b"not a log" + _block("1"), "some/path"))


def _with_int32_at(data: bytes, offset: int, value: int) -> bytes:
    patched = bytearray(data)
    struct.pack_into(">i", patched, offset, value)
    return bytes(patched)


@pytest.mark.parametrize(
    ("offset", "value", "problem"),
    [
        (14, 0, "unsupported format version 0"),
        (14, 2, "unsupported format version 2"),
        (18, 7, "unknown block type 7"),
        (26, 9, "unknown header key 9"),
        (30, 999, "overruns"),
    ],
)
def test_an_intact_frame_with_bad_fields_is_unreadable(offset: int, value: int, problem: str) -> None:
    # Hudi throws on these too; offsets: version 14, type 18, header count 22, first key 26, its length 30.
    data = _with_int32_at(_block("1"), offset, value)
    with pytest.raises(CorruptFileError, match=problem):
        list(read_blocks(data, "f"))
