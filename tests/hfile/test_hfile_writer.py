"""write_hfile: what it writes decodes back, with HBase's layout, and bad input is refused."""

from __future__ import annotations

import dataclasses
import struct

import pytest
from support.hfile_layout import block_headers, block_kinds

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.hfile import HUDI_COMPARATOR, Compression, HFileReader
from hudi_assets.hfile.format import TRAILER_SIZE, BlockType
from hudi_assets.hfile.keyvalue import encode_key, key_row
from hudi_assets.hfile.trailer import read_trailer
from hudi_assets.hfile.writer import HFileWriter, write_hfile

HBASE_FILE_INFO_KEYS = {b"KEY_VALUE_VERSION", b"MAX_MEMSTORE_TS_KEY", b"hfile.AVG_KEY_LEN",
                        b"hfile.AVG_VALUE_LEN", b"hfile.CREATE_TIME_TS", b"hfile.LASTKEY"}


def _cells(count: int, key_format: str = "hudi-key-{:09d}") -> list[tuple[bytes, bytes]]:
    return [(key_format.format(i).encode(), f"hudi-value-{i:09d}".encode()) for i in range(count)]


@pytest.mark.parametrize("count", [0, 1, 20_000])
@pytest.mark.parametrize("compression", ["GZ", "NONE"])
def test_round_trip(count, compression):
    cells = _cells(count)
    data = write_hfile(cells, block_size=16 * 1024, compression=compression, file_info={b"schema": b"{}"})
    reader = HFileReader(data)
    assert list(reader.entries()) == cells
    assert reader.num_entries == count
    assert reader.trailer.compression_codec == Compression[compression]
    assert reader.trailer.comparator_class_name == HUDI_COMPARATOR
    assert reader.file_info[b"schema"] == b"{}"
    hbase_keys = HBASE_FILE_INFO_KEYS if count else HBASE_FILE_INFO_KEYS - {b"hfile.LASTKEY"}
    assert set(reader.file_info) == hbase_keys | {b"schema"}
    if count:
        assert key_row(reader.file_info[b"hfile.LASTKEY"]) == cells[-1][0]
        assert struct.unpack(">i", reader.file_info[b"hfile.AVG_KEY_LEN"]) == (len(encode_key(cells[0][0])),)
        assert struct.unpack(">i", reader.file_info[b"hfile.AVG_VALUE_LEN"]) == (20,)
        for i in (0, count // 2, count - 1):
            assert reader.get(cells[i][0]) == cells[i][1]
    assert reader.get(b"hudi-key-1") is None


def test_layout_is_hbases():
    """Data blocks, meta blocks, root data index, meta index, file info, v3 trailer."""
    data = write_hfile(_cells(20_000), block_size=16 * 1024, meta_blocks={b"bloomFilter": b"bits"})
    assert block_kinds(data) == ["DATA", "META", "ROOT_INDEX", "FILE_INFO"]
    headers = list(block_headers(data))
    root, meta_index, file_info = headers[-3:]
    assert (root.block_type, meta_index.block_type, file_info.block_type) == (
        BlockType.ROOT_INDEX, BlockType.ROOT_INDEX, BlockType.FILE_INFO)
    data_blocks = [h for h in headers if h.block_type == BlockType.DATA]
    # prevBlockOffset links blocks of one type; the meta index points back at the data index root.
    assert [h.prev_block_offset for h in data_blocks] == [-1] + [h.offset for h in data_blocks[:-1]]
    assert meta_index.prev_block_offset == root.offset
    assert {(h.checksum_type, h.bytes_per_checksum) for h in headers} == {(2, 16384)}
    # A block closes once its cells reach the block size: 59-byte cells, 278 to a 16 KiB block.
    assert {h.uncompressed_size_without_header for h in data_blocks[:-1]} == {278 * 59}
    reader = HFileReader(data)
    assert (reader.trailer.major_version, reader.trailer.minor_version) == (3, 3)
    assert reader.meta_block(b"bloomFilter") == b"bits"
    assert reader.trailer.total_uncompressed_bytes == (
        sum(33 + h.uncompressed_size_without_header for h in headers if h != root) + 4096)


def test_long_keys_force_a_multi_level_index_with_hbase_defaults():
    cells = _cells(300, "hudi-key-" + "k" * 1000 + "-{:09d}")
    data = write_hfile(cells, block_size=1024)
    reader = HFileReader(data)
    assert reader.index_levels == 2
    assert "LEAF_INDEX" in block_kinds(data)
    assert list(reader.entries()) == cells
    for key, value in cells[::7]:
        assert reader.get(key) == value
        assert reader.get(key + b"-") is None


def test_small_index_chunks_give_intermediate_levels():
    cells = _cells(3000, "hudi-key-" + "a" * 100 + "-{:09d}")
    data = write_hfile(cells, block_size=1024, max_index_chunk_size=2048, min_index_num_entries=4)
    reader = HFileReader(data)
    assert reader.index_levels == 3
    assert {"LEAF_INDEX", "INTERMEDIATE_INDEX"} <= set(block_kinds(data))
    assert list(reader.entries()) == cells
    for key, value in cells[::37] + cells[-1:]:
        assert reader.get(key) == value
    assert list(reader.seek_to(cells[1500][0][:-1])) == cells[1500:]


def test_equal_rows_never_straddle_a_block_boundary():
    """HBase only checks the block size before a key that differs from the previous one."""
    cells = [(f"k{i:03d}".encode(), f"v{i}_{j}".encode()) for i in range(50) for j in range(21)]
    data = write_hfile(cells, block_size=64)
    reader = HFileReader(data)
    assert list(reader.entries()) == cells
    first_rows = [key_row(entry.key) for entry in reader.data_block_index()]
    assert len(first_rows) == 50
    for i in range(50):
        key = f"k{i:03d}".encode()
        assert reader.get(key) == f"v{i}_0".encode()
        assert [v for _, v in reader.seek_to(key)][:21] == [f"v{i}_{j}".encode() for j in range(21)]


def test_meta_blocks_are_written_in_name_order():
    data = write_hfile(_cells(3), meta_blocks={b"zeta": b"z", b"alpha": b"a"})
    reader = HFileReader(data)
    assert reader.meta_block_names == [b"alpha", b"zeta"]
    assert [reader.meta_block(n) for n in reader.meta_block_names] == [b"a", b"z"]


def test_bad_input_is_refused():
    writer = HFileWriter()
    writer.append(b"b", b"1")
    with pytest.raises(ValueError, match="sorts before"):
        writer.append(b"a", b"2")
    with pytest.raises(ValueError, match="HBase's"):
        writer.append_file_info(b"hfile.LASTKEY", b"x")
    for codec in ("SNAPPY", Compression.LZ4, "gzip"):
        with pytest.raises(ValueError, match="only GZ and NONE"):
            HFileWriter(compression=codec)
    with pytest.raises(ValueError, match="exceeds"):
        write_hfile([(b"k" * 40_000, b"v")])


def test_a_file_in_an_unsupported_codec_is_refused_naming_it():
    data = write_hfile([(b"a", b"1")], compression="NONE")
    trailer = dataclasses.replace(read_trailer(data), compression_codec=Compression.SNAPPY)
    with pytest.raises(CorruptFileError, match=r"^f\.hfile: compression SNAPPY is not supported"):
        HFileReader(data[:-TRAILER_SIZE] + trailer.serialize(), name="f.hfile")
