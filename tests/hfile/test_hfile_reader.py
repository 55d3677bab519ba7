"""HFileReader on every real HBase-written HFile in ../shared/reference/hfile."""

from __future__ import annotations

import bisect
import time

import pytest
from support.hfile_layout import block_headers
from support.hfile_references import named, reference_params

from hudi_assets.exceptions import CorruptFileError, HudiInputError
from hudi_assets.hfile import Compression, HFileReader
from hudi_assets.hfile.block import read_header
from hudi_assets.hfile.format import BLOCK_HEADER_SIZE, TRAILER_SIZE, BlockType
from hudi_assets.hfile.keyvalue import TYPE_MAXIMUM, TYPE_PUT, key_row

pytestmark = pytest.mark.shared


@pytest.fixture(params=reference_params())
def ref(request):
    return request.param


def _reader(ref) -> HFileReader:
    return HFileReader(ref.path.read_bytes(), name=str(ref.path))


def test_every_entry_in_order_with_its_value(ref):
    reader = _reader(ref)
    expected = ref.expected_entries()
    assert list(reader.entries()) == expected
    assert reader.num_entries == len(expected)


def test_trailer_and_block_index_shape(ref):
    data = ref.path.read_bytes()
    reader = HFileReader(data)
    assert (reader.trailer.major_version, reader.trailer.minor_version) == (3, 3)
    assert reader.trailer.compression_codec == Compression[ref.compression or "GZ"]
    assert reader.index_levels == ref.index_levels
    headers = list(block_headers(data))
    data_blocks = [h for h in headers if h.block_type == BlockType.DATA]
    index = reader.data_block_index()
    assert [(e.offset, e.size) for e in index] == [(h.offset, h.on_disk_size_with_header)
                                                   for h in data_blocks]
    leaves = [h for h in headers if h.block_type == BlockType.LEAF_INDEX]
    assert bool(leaves) == (ref.index_levels > 1)
    assert any(h.block_type == BlockType.INTERMEDIATE_INDEX for h in headers) == (ref.index_levels > 2)
    assert reader.meta_block_names == [b"bloomFilter"]
    assert reader.meta_block(b"bloomFilter")
    assert reader.meta_block(b"absent") is None


def test_point_lookups_first_middle_last_and_absent(ref):
    reader = _reader(ref)
    expected = ref.expected_entries()
    first_values = dict(reversed(expected))
    keys = sorted(first_values)
    for i in sorted({0, 1, len(keys) // 3, len(keys) // 2, len(keys) - 1}) if keys else ():
        assert reader.get(keys[i]) == first_values[keys[i]]
    probes = [b"", b"a", b"hudi-key-000000000", b"zzz"]
    probes += [probe for key in keys[:1] + keys[-1:] for probe in (key[:-1], key + b"a")]
    for absent in probes:
        if absent not in first_values:
            assert reader.get(absent) is None


def test_seek_to_lands_on_the_first_row_not_below_the_key(ref):
    reader = _reader(ref)
    expected = ref.expected_entries()
    if not expected:
        assert list(reader.seek_to(b"")) == []
        return
    keys = [key for key, _ in expected]
    for probe in (b"", keys[0][:-1], keys[0], keys[len(keys) // 2] + b"a", keys[-1][:-1], keys[-1]):
        start = bisect.bisect_left(keys, probe)
        cells = reader.seek_to(probe)
        assert [next(cells) for _ in range(min(3, len(keys) - start))] == expected[start : start + 3]
    assert list(reader.seek_to(keys[-1] + b"a")) == []


def test_lookups_at_every_data_block_boundary(ref):
    """Index keys (fake first keys included) route each block's first row and its predecessor right."""
    reader = _reader(ref)
    expected = ref.expected_entries()
    keys = [key for key, _ in expected]
    first_values = dict(reversed(expected))
    for entry in reader.data_block_index()[1:]:
        # The index key sorts after the previous block's last row and not after the block's first.
        first = bisect.bisect_left(keys, key_row(entry.key))
        for key in (keys[first - 1], keys[first]):
            assert reader.get(key) == first_values[key]
        assert next(reader.seek_to(keys[first - 1] + b"\x00")) == expected[first]


def test_fake_first_keys_are_shortened_rows_stamped_maximum():
    ref = named("hudi_1_0_hbase_2_4_13_16KB_GZ_20000_fake_first_key.hfile")
    index = _reader(ref).data_block_index()
    keys = {key for key, _ in ref.expected_entries()}
    assert key_row(index[0].key) in keys and index[0].key[-1] == TYPE_PUT  # the first block: its real key
    assert all(key_row(e.key) not in keys and e.key[-1] == TYPE_MAXIMUM for e in index[1:])
    assert key_row(index[1].key) == b"hudi-key-000000235"


def test_reading_twenty_thousand_entries_takes_well_under_a_second():
    data = named("hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile").path.read_bytes()
    start = time.perf_counter()
    assert sum(1 for _ in HFileReader(data).entries()) == 20000
    assert time.perf_counter() - start < 0.5


def _none_5000() -> tuple[bytearray, int, int]:
    """The uncompressed 5000-entry file and its first data block's offset and data end (checksums follow)."""
    data = bytearray(named("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile").path.read_bytes())
    header = read_header(bytes(data), 0)
    assert header.block_type == BlockType.DATA
    return data, header.offset, header.on_disk_data_size_with_header


@pytest.mark.parametrize("damage", ["body", "checksum", "truncate", "trailer_magic", "version"])
def test_damaged_files_raise_one_corrupt_file_error_naming_the_file(damage):
    data, offset, data_end = _none_5000()
    if damage == "body":
        data[offset + BLOCK_HEADER_SIZE + 100] ^= 0x01
    elif damage == "checksum":
        data[data_end] ^= 0x01
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "trailer_magic":
        data[-TRAILER_SIZE] = ord("X")
    else:
        data[-1] = 2
    with pytest.raises(CorruptFileError) as info:
        list(HFileReader(bytes(data), name="files/f1.hfile").entries())
    assert isinstance(info.value, HudiInputError)
    assert str(info.value).startswith("files/f1.hfile: ")
    if damage in ("body", "checksum"):
        assert "checksum" in str(info.value)


def test_unverified_read_skips_checksums_but_still_decodes():
    data, _, data_end = _none_5000()
    data[data_end] ^= 0x01  # only the stored checksum is wrong
    assert sum(1 for _ in HFileReader(bytes(data), verify_checksums=False).entries()) == 5000


def _gz_20000() -> tuple[bytearray, int]:
    """The GZ 20000-entry file and its first data block's data end (its CRC32C checksums follow)."""
    data = bytearray(named("hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile").path.read_bytes())
    header = read_header(bytes(data), 0)
    assert header.block_type == BlockType.DATA
    return data, header.on_disk_data_size_with_header


def test_gz_blocks_rely_on_gzip_crc_not_the_crc32c():
    """A GZ body carries gzip's CRC32: damage to it is still a corrupt file; the pure-Python CRC32C
    over it is not computed (a wrong stored CRC32C goes unnoticed, as in Hudi's own reader)."""
    data, data_end = _gz_20000()
    damaged = bytearray(data)
    damaged[data_end - 6] ^= 0x01  # inside the gzip trailer's CRC32
    with pytest.raises(CorruptFileError, match=r"^files/f1\.hfile: "):
        list(HFileReader(bytes(damaged), name="files/f1.hfile").entries())
    data[data_end] ^= 0x01  # only the stored CRC32C
    assert sum(1 for _ in HFileReader(bytes(data)).entries()) == 20000


def test_not_an_hfile():
    with pytest.raises(CorruptFileError, match=r"x\.hfile: .*too short"):
        HFileReader(b"PAR1", name="x.hfile")
    with pytest.raises(CorruptFileError, match="trailer magic"):
        HFileReader(bytes(5000), name="x.hfile")
