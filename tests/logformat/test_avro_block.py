"""AVRO_DATA block content: byte-exact re-encoding, schema resolution and damaged content."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.logformat import (
    BlockType,
    HeaderKey,
    LogBlock,
    avro_block,
    decode_avro_data_block,
    encode_avro_data_block,
    encode_block,
    read_blocks,
)

SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "Trip",
        "namespace": "test",
        "fields": [
            {"name": "key", "type": "string"},
            {"name": "fare", "type": ["null", "double"], "default": None},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
        ],
    }
)
TRIPS = [{"key": "a", "fare": 1.5, "tags": ["x"]}, {"key": "b", "fare": None, "tags": []}]


def test_real_block_re_encodes_byte_for_byte_from_its_records(log_file) -> None:
    name, data = log_file("avro_data")
    (block,) = read_blocks(data, name)
    rebuilt = encode_avro_data_block(
        decode_avro_data_block(block), block.header[HeaderKey.SCHEMA], block.header
    )
    assert rebuilt.content == block.content
    assert rebuilt == block
    assert encode_block(rebuilt) == data


def test_content_layout() -> None:
    block = encode_avro_data_block(TRIPS[:1], SCHEMA)
    assert block.block_type == BlockType.AVRO_DATA
    assert block.header == {HeaderKey.SCHEMA: SCHEMA}
    # "a"; union branch 1 and the double; an array block of one "x", then the end-of-array 0
    record = b"\x02a" + b"\x02" + struct.pack("<d", 1.5) + b"\x02\x02x\x00"
    assert block.content == struct.pack(">iii", 3, 1, len(record)) + record


def test_header_schema_is_appended_or_checked() -> None:
    block = encode_avro_data_block(TRIPS, SCHEMA, {HeaderKey.INSTANT_TIME: "001"})
    assert list(block.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
    with pytest.raises(ValueError, match="SCHEMA"):
        encode_avro_data_block(TRIPS, SCHEMA, {HeaderKey.SCHEMA: "{}"})


def test_reader_schema_resolution_adds_defaults_and_drops_fields() -> None:
    evolved = json.loads(SCHEMA)
    evolved["fields"] = [evolved["fields"][0], {"name": "city", "type": "string", "default": "sf"}]
    records = decode_avro_data_block(encode_avro_data_block(TRIPS, SCHEMA), json.dumps(evolved))
    assert records == [{"key": "a", "city": "sf"}, {"key": "b", "city": "sf"}]


def test_a_reader_schema_spelled_differently_needs_no_resolution() -> None:
    # Java's `Schema.toString()` spells names as namespace + short name; resolving would be slower.
    full_names = json.loads(SCHEMA)
    full_names["name"] = "test.Trip"
    del full_names["namespace"]
    block = encode_avro_data_block(TRIPS, SCHEMA)
    for reader_schema in (SCHEMA, json.dumps(json.loads(SCHEMA), indent=2), json.dumps(full_names)):
        assert avro_block._reader_block_schema(SCHEMA, reader_schema) is None
        assert decode_avro_data_block(block, reader_schema) == TRIPS


def test_a_record_slot_longer_than_its_record_is_read_like_java() -> None:
    # Java decodes each record from the start of its slot and then skips the whole slot.
    content = encode_avro_data_block(TRIPS, SCHEMA).content
    first_length = struct.unpack_from(">i", content, 8)[0]
    first_end = 12 + first_length
    padded = (
        content[:8]
        + struct.pack(">i", first_length + 3)
        + content[12:first_end]
        + b"\x7f\x7f\x7f"
        + content[first_end:]
    )
    assert decode_avro_data_block(LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: SCHEMA}, padded)) == TRIPS


def test_record_count_bounds_what_is_read() -> None:
    content = bytearray(encode_avro_data_block(TRIPS, SCHEMA).content)
    for count, expected in ((1, TRIPS[:1]), (0, []), (-1, [])):
        struct.pack_into(">i", content, 4, count)
        block = LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: SCHEMA}, bytes(content))
        assert decode_avro_data_block(block) == expected


@pytest.mark.parametrize(
    ("header", "content", "problem"),
    [
        ({}, b"", "no SCHEMA header"),
        ({HeaderKey.SCHEMA: "{not json"}, b"", "unparsable SCHEMA"),
        ({HeaderKey.SCHEMA: SCHEMA}, b"\x00\x00\x00\x03", "too short"),
        ({HeaderKey.SCHEMA: SCHEMA}, struct.pack(">iii", 3, 2, 1) + b"\x02", "record 1 of 2 runs past"),
        (
            {HeaderKey.SCHEMA: SCHEMA},
            struct.pack(">iii", 3, 1, 2) + b"\x7f\x00",
            "record 0 of 1 cannot be decoded",
        ),
    ],
)
def test_undecodable_content_names_the_file(header: dict, content: bytes, problem: str) -> None:
    with pytest.raises(CorruptFileError, match=f"the/file: .*{problem}"):
        decode_avro_data_block(LogBlock(BlockType.AVRO_DATA, header, content), path="the/file")


_trips = st.lists(
    st.fixed_dictionaries(
        {
            "key": st.text(),
            "fare": st.none() | st.floats(allow_nan=False),
            "tags": st.lists(st.text(max_size=5), max_size=4),
        }
    ),
    max_size=20,
)


@given(_trips)
def test_records_round_trip_through_encoded_blocks(records: list[dict]) -> None:
    (block,) = read_blocks(encode_block(encode_avro_data_block(records, SCHEMA)))
    assert decode_avro_data_block(block) == records
