"""The small codecs under the HFile format, against published vectors and Java's encodings."""

from __future__ import annotations

import gzip
import random

import pytest

from hudi_assets.hfile.checksum import checksum_size, chunked_checksums, crc32c
from hudi_assets.hfile.compression import compress, decompress
from hudi_assets.hfile.fileinfo import decode_file_info, encode_file_info
from hudi_assets.hfile.format import ChecksumType, Compression, read_vlong, write_vlong
from hudi_assets.hfile.keyvalue import TYPE_MAXIMUM, TYPE_PUT, encode_key, index_key, key_row
from hudi_assets.hfile.protobuf import decode_varint, encode_varint
from hudi_assets.hfile.trailer import Trailer, read_trailer


@pytest.mark.parametrize(("value", "encoded"), [
    (0, "00"), (127, "7f"), (-112, "90"), (128, "8f80"), (-113, "8770"), (255, "8fff"), (256, "8e0100"),
    (-1, "ff"), (2**63 - 1, "887fffffffffffffff"), (-(2**63), "807fffffffffffffff"),
])
def test_hadoop_vlong_matches_writable_utils(value, encoded):
    assert write_vlong(value).hex() == encoded
    assert read_vlong(bytes.fromhex(encoded) + b"\x00", 0) == (value, len(encoded) // 2)


def test_hadoop_vlong_round_trips():
    rng = random.Random(7)
    for value in [rng.randrange(-(2**63), 2**63) >> rng.randrange(64) for _ in range(2000)]:
        assert read_vlong(write_vlong(value), 0) == (value, len(write_vlong(value)))


def test_protobuf_varint():
    assert encode_varint(300).hex() == "ac02"
    assert encode_varint(-1).hex() == "ff" * 9 + "01"  # int64 -1, as HBase writes an unset offset
    assert decode_varint(encode_varint(-1), 0) == (2**64 - 1, 10)
    with pytest.raises(ValueError, match="truncated"):
        decode_varint(b"\xff\xff", 0)


def test_crc32c_vectors():
    """The CRC-32C check value and RFC 3720 B.4 vectors."""
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    data = random.Random(1).randbytes(40_000)
    sums = chunked_checksums(data, ChecksumType.CRC32C, 16384)
    assert len(sums) == checksum_size(len(data), 16384) == 12
    assert sums[4:8] == crc32c(data[16384:32768]).to_bytes(4, "big")


def test_gz_blocks_are_one_gzip_member_with_javas_header():
    data = b"hudi-key-000000001hudi-value-000000001" * 100
    packed = compress(data, Compression.GZ)
    assert packed[:10] == bytes.fromhex("1f8b0800000000000000")  # no mtime, OS byte 0
    assert gzip.decompress(packed) == data
    assert decompress(packed, Compression.GZ, len(data)) == data
    with pytest.raises(ValueError, match="header says"):
        decompress(packed, Compression.GZ, len(data) + 1)


def test_index_keys_follow_hbase_get_midpoint():
    assert index_key(None, b"abc") == encode_key(b"abc")
    assert index_key(b"abc", b"abc") == encode_key(b"abc")
    cases = {
        (b"hudi-key-000000277", b"hudi-key-000000278"): b"hudi-key-000000278",  # +1 would equal right
        (b"hudi-key-000019459", b"hudi-key-000019460"): b"hudi-key-00001946",
        (b"a1", b"a5"): b"a2",
        (b"ab", b"abc"): b"abc",  # left is a prefix of right
        (b"a\xff", b"b"): b"b",
        (b"\xfe\x00", b"\xff\x00"): b"\xff",
    }
    for (left, right), row in cases.items():
        key = index_key(left, right)
        assert key_row(key) == row and key[-1] == TYPE_MAXIMUM
        assert left < row <= right
    assert encode_key(b"r")[-1] == TYPE_PUT


def test_file_info_is_sorted_by_key_behind_pbuf():
    encoded = encode_file_info({b"b": b"2", b"a": b"1", b"\xff": b""})
    assert encoded.startswith(b"PBUF")
    assert list(decode_file_info(encoded).items()) == [(b"a", b"1"), (b"b", b"2"), (b"\xff", b"")]


def test_trailer_round_trips_with_unset_offsets():
    trailer = Trailer(file_info_offset=661, load_on_open_data_offset=530, total_uncompressed_bytes=436019,
                      meta_index_count=1, comparator_class_name="c", compression_codec=Compression.GZ)
    data = trailer.serialize()
    assert len(data) == 4096 and data[-4:] == bytes.fromhex("03000003")
    assert read_trailer(data) == trailer
