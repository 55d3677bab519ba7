"""Avro object container files holding one timeline record (`.clean.requested`, `.rollback`, ...).

Hudi writes them with `TimelineMetadataUtils.serializeAvroMetadata` (Java `DataFileWriter`): null codec,
a header whose metadata holds only `avro.schema`, one data block with exactly one record. We write the
same layout, and the same schema text (see `java_schema_json`), so only the random sync marker differs.
Hudi reads them with its compiled class as reader schema; we read with ours, so files written by other
Hudi versions resolve the same way (unknown writer fields skipped, missing ones defaulted).
"""

from __future__ import annotations

import functools
import io
import os
import struct
from collections.abc import Callable, Mapping
from typing import Any

import fastavro
from fastavro.read import SchemaResolutionError

from hudi_assets.avro.binary import Mismatch, compile_encoder, encode_long
from hudi_assets.avro.decoder import Decoder, Undecodable, compile_decoder
from hudi_assets.avro.schemas import (
    NAMESPACE,
    SCHEMAS,
    SCHEMAS_1X,
    field_names,
    java_schema_json,
    java_text,
    parsed,
    parsed_1x,
)
from hudi_assets.exceptions import CorruptFileError

MAGIC = b"Obj\x01"
_MAX_DETAIL = 300


def _bytes(value: bytes) -> bytes:
    return encode_long(len(value)) + value


Tuples = Mapping[str, type]
"""Record types (short names) given or made as instances of a tuple class holding the record's
fields in schema order, instead of dicts: a plan's `CleanFileInfo`, one per file to delete."""


def serialize_metadata(schema_name: str, record: dict[str, Any], tuples: Tuples | None = None) -> bytes:
    """Encode `record` as a container file exactly as Hudi's Java writer lays it out.

    Fields missing from `record` take their schema default; a record that does not fit the schema,
    including one with a field the schema lacks (a typo would otherwise vanish silently), raises
    ValueError: a bug of ours, not a bad table.
    """
    shapes = _shapes(tuples)
    try:
        data = _strict_encoder(schema_name, shapes)(record)
    except Mismatch:  # fastavro decides, and names what does not fit
        if shapes:
            record = _as_dicts(record, {shape: field_names(name) for name, shape in shapes})
        body = io.BytesIO()
        try:
            fastavro.schemaless_writer(body, parsed(schema_name), record, strict_allow_default=True)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"record does not fit {schema_name}: {exc}") from exc
        data = body.getvalue()
    return _container(java_schema_json(schema_name), data, os.urandom(16))


def serialize_1x(schema_name: str, record: dict[str, Any]) -> bytes:
    """Encode `record` as a container file as Hudi 1.x writes it (its schema text, `SCHEMAS_1X`),
    with a random sync marker as Java's."""
    body = io.BytesIO()
    try:
        fastavro.schemaless_writer(body, parsed_1x(schema_name), record, strict_allow_default=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"record does not fit {schema_name}: {exc}") from exc
    return _container(java_text(SCHEMAS_1X[schema_name]), body.getvalue(), os.urandom(16))


def _container(schema_text: str, data: bytes, sync: bytes) -> bytes:
    """The container file of one encoded record, laid out as Java's DataFileWriter writes it."""
    schema_entry = _bytes(b"avro.schema") + _bytes(schema_text.encode())
    header = MAGIC + encode_long(1) + schema_entry + encode_long(0) + sync  # metadata: one entry, end
    # one block: count, size, data, sync; joined once (a plan's data runs to tens of megabytes)
    return b"".join((header, encode_long(1), encode_long(len(data)), data, sync))


def _shapes(tuples: Tuples | None) -> tuple[tuple[str, type], ...]:
    """`tuples` as a key of the caches below."""
    return tuple(sorted((tuples or {}).items(), key=lambda item: item[0]))


def _full_names(shapes: tuple[tuple[str, type], ...]) -> dict[str, type]:
    return {f"{NAMESPACE}.{name}": shape for name, shape in shapes}


@functools.cache
def _strict_encoder(schema_name: str, shapes: tuple[tuple[str, type], ...]) -> Callable[[Any], bytes]:
    return compile_encoder(SCHEMAS[schema_name], strict=True, tuples=_full_names(shapes))


@functools.cache
def _decoder(schema_name: str, shapes: tuple[tuple[str, type], ...]) -> Decoder:
    return compile_decoder(SCHEMAS[schema_name], _full_names(shapes))


def _as_dicts(value: Any, fields: Mapping[type, list[str]]) -> Any:
    """`value` with the records given as tuples (`fields`: their classes) turned into dicts, as
    fastavro takes them."""
    names = fields.get(type(value))
    if names is not None:
        return {name: _as_dicts(item, fields) for name, item in zip(names, value, strict=True)}
    if isinstance(value, dict):
        return {key: _as_dicts(item, fields) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_as_dicts(item, fields) for item in value]
    return value


_HEADER = compile_decoder({"type": "map", "values": "bytes"})
_LONG = compile_decoder("long")


def _read_as_written(data: bytes, schema_name: str, tuples: Tuples | None) -> Any | None:
    """The record of a container file laid out as Hudi and we write them (null codec, our exact
    schema text, one block of one record), by the decoder compiled for the schema; None for any
    other file, or one that does not decode here: fastavro reads those, and names what is wrong."""
    try:
        metadata, pos = _HEADER(data, len(MAGIC))
        if metadata.get("avro.schema") != java_schema_json(schema_name).encode() or \
                metadata.get("avro.codec", b"null") != b"null":
            return None
        sync = data[pos:pos + 16]
        count, pos = _LONG(data, pos + 16)
        size, pos = _LONG(data, pos)
        if count != 1 or pos + size + len(sync) != len(data) or data[pos + size:] != sync:
            return None
        record, end = _decoder(schema_name, _shapes(tuples))(data, pos)
    except (Undecodable, IndexError, ValueError, struct.error):
        return None
    return record if end == pos + size else None


def _open(data: bytes, path: str, reader_schema: dict[str, Any] | None) -> fastavro.reader:
    if not data.startswith(MAGIC):
        size = "empty file" if not data else f"{len(data)} bytes without the 'Obj\\x01' magic"
        raise CorruptFileError(path, f"not an Avro container file ({size})")
    try:
        return fastavro.reader(io.BytesIO(data), reader_schema=reader_schema)
    except Exception as exc:  # fastavro raises many kinds on garbage; all mean the same to us
        raise CorruptFileError(path, f"unreadable Avro container header: {_detail(exc)}") from exc


def _detail(exc: Exception) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL] + "..."


def _writer_name(reader: fastavro.reader) -> str:
    schema = reader.writer_schema
    name = schema.get("name", schema.get("type")) if isinstance(schema, dict) else schema
    return str(name).rsplit(".", 1)[-1]


def _single_record(reader: fastavro.reader, name: str, path: str) -> dict[str, Any]:
    try:
        records = list(reader)
    except SchemaResolutionError as exc:
        raise CorruptFileError(path, f"record does not match {name}: {_detail(exc)}") from exc
    except Exception as exc:  # truncated or garbled block: fastavro's exception kind varies
        raise CorruptFileError(path, f"corrupt or truncated {name} data block: {_detail(exc)}") from exc
    if len(records) != 1:
        raise CorruptFileError(path, f"expected exactly one {name} record, found {len(records)}")
    return records[0]


def deserialize_metadata(data: bytes, schema_name: str, path: str,
                         tuples: Tuples | None = None) -> dict[str, Any]:
    """Decode the single `schema_name` record of a container file; `path` only names it in errors.
    `tuples`: record types the decoder compiled for our schema text makes as tuples; files written
    with other schema text are read by fastavro, whose records are dicts throughout.

    Raises CorruptFileError for anything Hudi could not read either: no container, truncation, a
    different record type, zero or several records.
    """
    if data.startswith(MAGIC):
        record = _read_as_written(data, schema_name, tuples)
        if record is not None:
            return record
    reader = _open(data, path, None)
    found = _writer_name(reader)
    if found != schema_name:
        raise CorruptFileError(path, f"expected a {schema_name} record, found {found}")
    if reader.metadata.get("avro.schema") != java_schema_json(schema_name):
        # Written with another version of the schema: resolved against ours. With our very schema
        # there is nothing to resolve, and reading without resolution takes half the time.
        reader = _open(data, path, parsed(schema_name))
    return _single_record(reader, schema_name, path)


def deserialize_any(data: bytes, path: str, hudi_1x: bool = False) -> tuple[str, dict[str, Any]]:
    """Decode a container file of unknown type: (short record name, record).

    Known record types are read with our schema (`hudi_1x`: as Hudi 1.x defines them), so the record
    has that field set; others with the writer's schema.
    """
    reader = _open(data, path, None)
    name = _writer_name(reader)
    if name in (SCHEMAS_1X if hudi_1x else SCHEMAS):
        reader = _open(data, path, parsed_1x(name) if hudi_1x else parsed(name))
    return name, _single_record(reader, name, path)
