"""Avro binary encoding of records, compiled once per schema into nested closures.

Archiving writes tens of thousands of `HoodieArchivedMetaEntry` records, each a union-heavy tree;
fastavro picks every union branch by validating the value against each branch in turn (a whole
nested record for a `["null", Record]` field), which made encoding most of an archive run's time.
Here each union picks its branch from the value's Python type, decided once per schema. Where that
is not decisive (two branches taking the same kind of value) or a value does not fit, `Mismatch` is
raised and the caller encodes that record with fastavro instead, so the bytes and the errors stay
fastavro's. Avro's binary encoding is canonical: equal bytes to fastavro's for every record both
accept (tests hold them equal).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any


def encode_long(value: int) -> bytes:
    """Avro's zig-zag varint encoding of a long."""
    zigzag = (value << 1) ^ (value >> 63)
    out = bytearray()
    while zigzag > 0x7F:
        out.append((zigzag & 0x7F) | 0x80)
        zigzag >>= 7
    out.append(zigzag)
    return bytes(out)

Encoder = Callable[[Any, list[bytes]], None]
_SMALL = [encode_long(n) for n in range(-64, 64)]  # one byte each: counts, lengths, small values
_END = encode_long(0)
_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
# The Python types fastavro's validation accepts for each kind of schema (bool is not an int there).
_ACCEPTS: dict[str, tuple[type, ...]] = {
    "null": (type(None),), "boolean": (bool,), "int": (int,), "long": (int,), "float": (int, float),
    "double": (int, float), "bytes": (bytes, bytearray), "string": (str,), "enum": (str,),
    "fixed": (bytes, bytearray), "array": (list, tuple), "map": (dict,), "record": (dict,),
}
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


class Mismatch(Exception):
    """The value does not fit this encoder's fast path; encode it with fastavro."""


def _long(value: Any, out: list[bytes], bounds: tuple[int, int] = _INT64) -> None:
    if type(value) is not int or not bounds[0] <= value <= bounds[1]:
        raise Mismatch
    out.append(_SMALL[value + 64] if -64 <= value < 64 else encode_long(value))


def _string(value: Any, out: list[bytes]) -> None:
    if type(value) is not str:
        raise Mismatch
    data = value.encode()
    size = len(data)
    out.append(_SMALL[size + 64] if size < 64 else encode_long(size))
    out.append(data)


def _bytes(value: Any, out: list[bytes]) -> None:
    if not isinstance(value, bytes | bytearray):
        raise Mismatch
    out.append(encode_long(len(value)))
    out.append(bytes(value))


def _null(value: Any, out: list[bytes]) -> None:
    if value is not None:
        raise Mismatch


def _boolean(value: Any, out: list[bytes]) -> None:
    if type(value) is not bool:
        raise Mismatch
    out.append(b"\x01" if value else b"\x00")


def _float_encoder(fmt: str) -> Encoder:
    pack = struct.Struct(fmt).pack

    def encode(value: Any, out: list[bytes]) -> None:
        if type(value) not in (int, float):
            raise Mismatch
        out.append(pack(value))
    return encode


_PRIMITIVE_ENCODERS: dict[str, Encoder] = {
    "null": _null, "boolean": _boolean, "int": lambda v, out: _long(v, out, _INT32), "long": _long,
    "float": _float_encoder("<f"), "double": _float_encoder("<d"), "bytes": _bytes, "string": _string,
}


class _Compiler:
    """Compiles a parsed-or-plain schema (JSON form) into an `Encoder`, named types once each."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self.named: dict[str, Encoder] = {}
        self.kinds: dict[str, str] = {}  # full name -> record / enum / fixed

    def full_name(self, name: str, namespace: str) -> str:
        return name if "." in name or not namespace else f"{namespace}.{name}"

    def kind(self, schema: Any, namespace: str) -> str:
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return schema
            return self.kinds.get(self.full_name(schema, namespace)) or self.kinds[schema]
        if isinstance(schema, list):
            return "union"
        return schema["type"] if isinstance(schema["type"], str) and schema["type"] != "error" else "record"

    def compile(self, schema: Any, namespace: str = "") -> Encoder:
        if isinstance(schema, str):
            if schema in _PRIMITIVE_ENCODERS:
                return _PRIMITIVE_ENCODERS[schema]
            full = self.full_name(schema, namespace)
            name = full if full in self.named else schema
            named = self.named
            return lambda value, out: named[name](value, out)  # resolved late: types may recurse
        if isinstance(schema, list):
            return self.union(schema, namespace)
        kind = schema["type"]
        if isinstance(kind, dict | list) or (kind in _PRIMITIVE_ENCODERS and "name" not in schema):
            return self.compile(kind, namespace)
        if kind in ("record", "error"):
            return self.record(schema, namespace)
        if kind == "enum":
            symbols = {symbol: encode_long(n) for n, symbol in enumerate(schema["symbols"])}
            return self.register(schema, namespace, "enum", lambda value, out: out.append(
                symbols[value] if type(value) is str and value in symbols else _raise()))
        if kind == "fixed":
            size = schema["size"]
            return self.register(schema, namespace, "fixed", lambda value, out: out.append(
                bytes(value) if isinstance(value, bytes | bytearray) and len(value) == size else _raise()))
        if kind == "array":
            return self.array(self.compile(schema["items"], namespace))
        if kind == "map":
            return self.map(self.compile(schema["values"], namespace))
        raise ValueError(f"unknown Avro type {kind!r}")

    def register(self, schema: dict, namespace: str, kind: str, encoder: Encoder) -> Encoder:
        full = self.full_name(schema["name"], schema.get("namespace", namespace))
        self.named[full] = encoder
        self.kinds[full] = kind
        return encoder

    def record(self, schema: dict, namespace: str) -> Encoder:
        namespace = schema.get("namespace", namespace) if "." not in schema["name"] else \
            schema["name"].rpartition(".")[0]
        fields: list[tuple[str, Any, Encoder]] = []
        known = frozenset(f["name"] for f in schema["fields"])
        required = frozenset(f["name"] for f in schema["fields"] if "default" not in f)
        strict = self.strict

        def encode(value: Any, out: list[bytes]) -> None:
            if type(value) is not dict:
                raise Mismatch
            if strict and not (value.keys() <= known and required <= value.keys()):
                raise Mismatch  # fastavro's strict mode names the field
            for name, default, field_encoder in fields:
                field_encoder(value.get(name, default), out)

        self.register(schema, namespace, "record", encode)  # before the fields: they may refer to it
        fields.extend((f["name"], f.get("default"), self.compile(f["type"], namespace))
                      for f in schema["fields"])
        return encode

    @staticmethod
    def array(items: Encoder) -> Encoder:
        def encode(value: Any, out: list[bytes]) -> None:
            if type(value) not in (list, tuple):
                raise Mismatch
            if value:
                out.append(encode_long(len(value)))
                for item in value:
                    items(item, out)
            out.append(_END)
        return encode

    @staticmethod
    def map(values: Encoder) -> Encoder:
        def encode(value: Any, out: list[bytes]) -> None:
            if type(value) is not dict:
                raise Mismatch
            if value:
                out.append(encode_long(len(value)))
                for key, item in value.items():
                    _string(key, out)
                    values(item, out)
            out.append(_END)
        return encode

    def union(self, branches: list, namespace: str) -> Encoder:
        """A branch per Python type, where exactly one branch takes that type (else `Mismatch`)."""
        by_type: dict[type, tuple[bytes, Encoder] | None] = {}
        encoders = []
        for index, branch in enumerate(branches):
            encoder = self.compile(branch, namespace)
            encoders.append(encoder)
            for python_type in _ACCEPTS[self.kind(branch, namespace)]:
                by_type[python_type] = None if python_type in by_type else (encode_long(index), encoder)

        def encode(value: Any, out: list[bytes]) -> None:
            chosen = by_type.get(type(value))
            if chosen is None:
                raise Mismatch
            out.append(chosen[0])
            chosen[1](value, out)
        return encode


def _raise() -> bytes:
    raise Mismatch


def compile_encoder(schema: Mapping[str, Any] | list | str, strict: bool = False) -> Callable[[Any], bytes]:
    """`encode(record) -> bytes` for one schema (JSON form); raises `Mismatch` where fastavro must
    decide. `strict`: a record with a field its schema lacks, or without one that has no default,
    is a `Mismatch` too (fastavro's `strict_allow_default`)."""
    root = _Compiler(strict).compile(schema)

    def encode(record: Any) -> bytes:
        out: list[bytes] = []
        root(record, out)
        return b"".join(out)
    return encode
