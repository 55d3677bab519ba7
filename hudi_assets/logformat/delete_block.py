"""DELETE block content, as Hudi's `HoodieDeleteBlock` writes it from log block version 3 on.

Content = int32 version, int32 length, then one `HoodieDeleteRecordList` in plain Avro binary. Hudi
0.14-1.0 write the ordering value as a union of value wrappers; Hudi 1.1 wraps that union in an
array. Versions 1 and 2 are Java-serialized (Kryo) objects, which only a JVM can read.
"""

from __future__ import annotations

import io
import struct
from functools import cache
from typing import Any

from fastavro import parse_schema, schemaless_reader
from fastavro.types import Schema

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.logformat.block import LogBlock

_WRAPPED_TYPES = (
    ("BooleanWrapper", "boolean"), ("IntWrapper", "int"), ("LongWrapper", "long"),
    ("FloatWrapper", "float"), ("DoubleWrapper", "double"), ("BytesWrapper", "bytes"),
    ("StringWrapper", "string"), ("DateWrapper", "int"), ("DecimalWrapper", "bytes"),
    ("TimeMicrosWrapper", "long"), ("TimestampMicrosWrapper", "long"),
)


def decode_delete_block(block: LogBlock, *, path: str = "<log block>") -> list[str | None]:
    """The record keys a DELETE block deletes, in block order."""
    where = f"DELETE block at offset {block.offset}"
    content = block.content
    if len(content) < 8:
        raise CorruptFileError(path, f"{where}: content too short for its version and length")
    version, length = struct.unpack_from(">ii", content)
    if version < 3:
        raise CorruptFileError(path, f"{where} is of version {version}, Java-serialized: only a JVM reads it")
    data = content[8 : 8 + length]
    if length < 0 or len(data) != length:
        raise CorruptFileError(path, f"{where}: its length field overruns the block content")
    for wrapped_in_array in (False, True):
        records = _decode(data, _schema(wrapped_in_array))
        if records is not None:
            return [record["recordKey"] for record in records]
    raise CorruptFileError(path, f"{where}: content is not a HoodieDeleteRecordList")


def _decode(data: bytes, schema: Schema) -> list[dict[str, Any]] | None:
    stream = io.BytesIO(data)
    try:
        records = schemaless_reader(stream, schema, None)["deleteRecordList"]
    except Exception:  # the other layout, or garbage: the caller decides
        return None
    return records if stream.tell() == len(data) else None


@cache
def _schema(wrapped_in_array: bool) -> Schema:
    wrappers: list[Any] = ["null"] + [
        {"type": "record", "name": name, "fields": [{"name": "value", "type": type_}]}
        for name, type_ in _WRAPPED_TYPES
    ]
    ordering: Any = ["null", {"type": "array", "items": wrappers}] if wrapped_in_array else wrappers
    record = {
        "type": "record", "name": "HoodieDeleteRecord",
        "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "type": ordering, "default": None},
        ],
    }
    return parse_schema({
        "type": "record", "name": "HoodieDeleteRecordList", "namespace": "org.apache.hudi.avro.model",
        "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": record}}],
    })
