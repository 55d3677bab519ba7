"""AVRO_DATA block content, as Hudi's `HoodieAvroDataBlock` writes it.

Content = int32 block version, int32 record count N, then N x (int32 length, plain Avro binary of one
record written with the block's SCHEMA header). Records are encoded by an encoder compiled once per
schema (`avro.binary`), fastavro where it must decide. Decoding is the hot path of the archived timeline,
where every block repeats the same large schema: parsed schemas are cached by their text and a whole
block is decoded in one fastavro call by re-framing its records as one Avro array.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from fastavro import parse_schema, schemaless_reader, schemaless_writer
from fastavro.types import Schema

from hudi_assets.avro.binary import Mismatch, compile_encoder, unencoded
from hudi_assets.avro.container import encode_long
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.logformat.block import BlockType, HeaderKey, LogBlock

AVRO_BLOCK_VERSION = 3  # what Hudi 0.14/0.15 write; readers accept any version

_INT32 = struct.Struct(">i")
# Top-level name without a namespace, so the wrapped schema's names resolve as when parsed alone.
_WRAPPER_NAME = "hudiAssetsAvroDataBlockRecords"
_READER_MARK = "hudiAssetsReaderSide"


def encode_avro_record(record: Mapping[str, Any], schema_text: str) -> bytes:
    """One record's plain Avro binary with `schema_text`: the encoder compiled for the schema, or
    fastavro for a value that encoder leaves to it."""
    try:
        return _record_encoder(schema_text)(record)
    except Mismatch:
        buffer = io.BytesIO()
        schemaless_writer(buffer, _record_schema(schema_text), unencoded(record))
        return buffer.getvalue()


def encode_avro_data_block(
    records: Iterable[Mapping[str, Any]], schema_text: str, header: Mapping[HeaderKey, str] | None = None
) -> LogBlock:
    """An AVRO_DATA block of `records` written with `schema_text` (Avro schema JSON).

    `header` gives the block header in entry order (default: SCHEMA only); SCHEMA is appended when
    missing and must equal `schema_text` when present.
    """
    return avro_data_block([encode_avro_record(record, schema_text) for record in records], schema_text,
                           header)


def avro_data_block(encoded: Sequence[bytes], schema_text: str,
                    header: Mapping[HeaderKey, str] | None = None) -> LogBlock:
    """An AVRO_DATA block of records already encoded with `schema_text` (`encode_avro_record`)."""
    full_header = dict(header or {})
    if full_header.setdefault(HeaderKey.SCHEMA, schema_text) != schema_text:
        raise ValueError("the header's SCHEMA differs from the schema the records are written with")
    parts = []
    for data in encoded:
        parts += (_INT32.pack(len(data)), data)
    content = b"".join((struct.pack(">ii", AVRO_BLOCK_VERSION, len(encoded)), *parts))
    return LogBlock(BlockType.AVRO_DATA, full_header, content)


def decode_avro_data_block(
    block: LogBlock, reader_schema: str | None = None, *, path: str = "<log block>"
) -> list[dict[str, Any]]:
    """The records of an AVRO_DATA block, resolved against `reader_schema` (schema JSON) when given.

    `path` names the file in the `CorruptFileError` raised for undecodable content.
    """
    where = f"AVRO_DATA block at offset {block.offset}"
    writer_text = block.header.get(HeaderKey.SCHEMA)
    if writer_text is None:
        raise CorruptFileError(path, f"{where} has no SCHEMA header")
    try:
        writer = _block_schema(writer_text)
    except Exception as exc:  # whatever json/fastavro raise for the file's schema text
        raise CorruptFileError(path, f"{where} has an unparsable SCHEMA header: {exc}") from exc
    reader = _reader_block_schema(writer_text, reader_schema)
    frames = _record_frames(block.content, path, where)
    if not frames:
        return []
    data = b"".join((encode_long(len(frames)), *frames, b"\0"))
    stream = io.BytesIO(data)
    try:
        records = schemaless_reader(stream, writer, reader)["records"]
        if stream.tell() == len(data):
            return records
    except Exception:  # the record-by-record decode below reports the real problem
        pass
    # A record shorter than its length slot (Java skips the rest) desynchronises the array framing.
    return _decode_frames_one_by_one(frames, writer_text, reader_schema, path, where)


def _record_frames(content: bytes, path: str, where: str) -> list[memoryview]:
    """The bytes of each record, bounds-checked against the content."""
    if len(content) < 8:
        raise CorruptFileError(path, f"{where}: content too short for its version and record count")
    count = _INT32.unpack_from(content, 4)[0]
    view = memoryview(content)
    frames = []
    position = 8
    for index in range(count):  # a negative count reads nothing, as in Java
        length = _INT32.unpack_from(content, position)[0] if position + 4 <= len(content) else -1
        position += 4
        if length < 0 or position + length > len(content):
            raise CorruptFileError(path, f"{where}: record {index} of {count} runs past the block content")
        frames.append(view[position : position + length])
        position += length
    return frames


def _decode_frames_one_by_one(
    frames: list[memoryview], writer_text: str, reader_text: str | None, path: str, where: str
) -> list[dict[str, Any]]:
    writer = _record_schema(writer_text)
    reader = None if reader_text is None else _record_schema(reader_text)
    records = []
    for index, frame in enumerate(frames):
        try:
            records.append(schemaless_reader(io.BytesIO(frame), writer, reader))
        except Exception as exc:  # fastavro raises many types for bad bytes or unresolvable schemas
            raise CorruptFileError(
                path, f"{where}: record {index} of {len(frames)} cannot be decoded: {exc!r}"
            ) from exc
    return records


@lru_cache(maxsize=32)
def _record_encoder(text: str) -> Callable[[Any], bytes]:
    return compile_encoder(json.loads(text))


@lru_cache(maxsize=32)
def _record_schema(text: str) -> Schema:
    return parse_schema(json.loads(text))


@lru_cache(maxsize=32)
def _block_schema(text: str, reader_side: bool = False) -> Schema:
    """A record holding an array of the block's records, so one fastavro call decodes a whole block.

    A record at the top keeps fastavro from re-parsing the schema on every call. The reader side gets an
    extra property so that fastavro's per-call `writer == reader` shortcut fails at once instead of
    deep-comparing two large schemas on every block.
    """
    wrapper: dict[str, Any] = {
        "type": "record",
        "name": _WRAPPER_NAME,
        "fields": [{"name": "records", "type": {"type": "array", "items": json.loads(text)}}],
    }
    if reader_side:
        wrapper[_READER_MARK] = True
    return parse_schema(wrapper)


def _reader_block_schema(writer_text: str, reader_text: str | None) -> Schema | None:
    """The reader-side wrapper, or None when no schema resolution is needed."""
    if reader_text is None or reader_text == writer_text or _same_schema(writer_text, reader_text):
        return None
    return _block_schema(reader_text, reader_side=True)


@lru_cache(maxsize=32)
def _same_schema(left: str, right: str) -> bool:
    """Equal once parsed: whitespace, key order and namespace spelling (Java's `toString()`) differ freely."""
    return _record_schema(left) == _record_schema(right)
