"""HFILE_DATA block content, as Hudi's `HoodieHFileDataBlock` reads and writes it (the metadata table's logs).

The content is a whole HFile: one cell per record, the record key as row and the record as plain Avro
binary written with the block's SCHEMA header as value. Writers blank the key field inside the value
(it is the row), so the key is always taken from the row.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from fastavro import parse_schema, schemaless_reader
from fastavro.types import Schema

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.hfile import HFileReader, write_hfile
from hudi_assets.logformat.block import BlockType, HeaderKey, LogBlock

_SCHEMA_KEY = b"schema"  # HoodieAvroHFileReaderImplBase.SCHEMA_KEY


def decode_hfile_records(
    reader: HFileReader, schema_text: str, *, where: str
) -> list[tuple[str, dict[str, Any]]]:
    """(record key, record) of every cell of an HFile whose values are Avro records of `schema_text`."""
    schema = avro_schema(schema_text, reader.name, where)
    records = []
    for row, value in reader.entries():
        key = row.decode("utf-8", errors="replace")
        records.append((key, decode_hfile_value(value, schema, key, reader.name, where)))
    return records


def decode_hfile_value(value: bytes, schema: Schema, key: str, path: str, where: str) -> dict[str, Any]:
    """One cell's record (plain Avro binary of `schema`); bad bytes are a corrupt file."""
    try:
        return schemaless_reader(io.BytesIO(value), schema, None)
    except Exception as exc:  # fastavro raises many kinds for bad bytes
        problem = f"{where}: the record of key {key!r} cannot be decoded: {exc!r}"
        raise CorruptFileError(path, problem) from exc


def decode_hfile_data_block(block: LogBlock, *, path: str = "<log block>") -> list[tuple[str, Any]]:
    """(record key, record) of every record of an HFILE_DATA block, in key order."""
    where = f"HFILE_DATA block at offset {block.offset}"
    schema_text = block.header.get(HeaderKey.SCHEMA)
    if schema_text is None:
        raise CorruptFileError(path, f"{where} has no SCHEMA header")
    reader = HFileReader(block.content, name=f"{path} ({where})")
    return decode_hfile_records(reader, schema_text, where=where)


def encode_hfile_data_block(records: Iterable[tuple[str, bytes]], instant_time: str, schema_text: str,
                            compression: str = "GZ") -> LogBlock:
    """`HoodieHFileDataBlock` of `records` (key, Avro value), as a metadata-table deltacommit appends it.

    Cells in key order, one per key (Hudi refuses duplicates), the schema as file info `schema`;
    header SCHEMA and INSTANT_TIME (in the order of a Java-written block), no footer.
    """
    cells: dict[bytes, bytes] = {}
    for key, value in records:
        row = key.encode("utf-8")
        if row in cells:
            raise ValueError(f"two records with key {key!r} in one HFILE_DATA block")
        cells[row] = value
    content = write_hfile(sorted(cells.items()), compression=compression,
                          file_info={_SCHEMA_KEY: schema_text.encode("utf-8")})
    header = {HeaderKey.SCHEMA: schema_text, HeaderKey.INSTANT_TIME: instant_time}
    return LogBlock(BlockType.HFILE_DATA, header, content)


def avro_schema(text: str, path: str, where: str) -> Schema:
    """The parsed writer schema of a block or base file; unparsable text is a corrupt file."""
    try:
        return _parsed(text)
    except Exception as exc:  # whatever json/fastavro raise for the file's schema text
        raise CorruptFileError(path, f"{where} has an unparsable Avro schema: {exc}") from exc


@lru_cache(maxsize=16)
def _parsed(text: str) -> Schema:
    return parse_schema(json.loads(text))
