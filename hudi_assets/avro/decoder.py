"""Avro binary decoding of data written with a known schema, compiled once per schema into Python code.

A clean plan holds one `HoodieCleanFileInfo` per file to delete, hundreds of thousands on a big table:
fastavro makes a dict of each, which the plan then turns into a `CleanFileInfo` tuple. The code
generated here makes the tuple directly (half the time of fastavro alone). It reads only what the
schema's own writer wrote (no resolution) and trusts nothing: any byte that does not decode raises
`Undecodable`, and the caller reads the data with fastavro instead, whose values, resolution and
errors stay the reference (tests hold the values equal to fastavro's).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any

from hudi_assets.avro.codegen import CodeGenerator

Decoder = Callable[[bytes, int], tuple[Any, int]]
_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


class Undecodable(Exception):
    """The data does not decode with this schema here; read it with fastavro."""


def read_varint(data: bytes, pos: int, first: int) -> tuple[int, int]:
    """The zig-zag varint whose first byte, `first` (>= 0x80), is just before `pos`: (raw, next pos).
    At most 10 bytes, as a long has."""
    value, shift = first & 0x7F, 7
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise Undecodable


class _Compiler(CodeGenerator):
    """Compiles a schema (JSON form) into straight-line Python: `_root(d, p) -> (value, next p)`.

    Records nest inline, so an array of small records costs no call per item; a record that
    contains itself is a function of its own. Values are fastavro's: dicts with the fields in
    schema order, lists, str, bytes, enums as their symbol. `tuples` names record types (full
    names) made as instances of a tuple class instead (fields in schema order)."""

    def __init__(self, tuples: Mapping[str, type] | None) -> None:
        super().__init__({"Undecodable": Undecodable, "_varint": read_varint, "_BOOLEANS": (False, True),
                          "_new": tuple.__new__})
        self.tuples = dict(tuples or {})
        self.records: dict[str, dict] = {}  # full name -> (definition, namespace)
        self.functions: dict[str, str] = {}  # full name -> function, for records inside themselves
        self.inlining: list[str] = []
        self.source: list[str] = []

    def root(self, schema: Any) -> Decoder:
        body = self.code(schema, "", "v", "    ")
        self.source.append("def _root(d, p):\n" + "".join(body) + "    return v, p\n")
        return self.define(self.source, "<avro decoder>", "_root")

    def code(self, schema: Any, namespace: str, v: str, ind: str) -> list[str]:
        """Lines (with `ind`) that decode the value at `d[p]` into variable `v`, advancing `p`."""
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return self.primitive(schema, v, ind)
            full = schema if "." in schema or not namespace else f"{namespace}.{schema}"
            return self.named(self.records[full if full in self.records else schema], v, ind)
        if isinstance(schema, list):
            return self.union(schema, namespace, v, ind)
        kind = schema["type"]
        if isinstance(kind, dict | list) or (kind in _PRIMITIVES and "name" not in schema):
            return self.code(kind, namespace, v, ind)
        if kind in ("record", "error", "enum", "fixed"):
            name = schema["name"]
            space = name.rpartition(".")[0] if "." in name else schema.get("namespace", namespace)
            full = f"{space}.{name.rpartition('.')[2]}" if space else name
            self.records[full] = {**schema, "full": full, "space": space}
            return self.named(self.records[full], v, ind)
        if kind in ("array", "map"):
            return self.blocks(schema, namespace, v, ind)
        raise ValueError(f"unknown Avro type {kind!r}")

    def primitive(self, kind: str, v: str, ind: str) -> list[str]:
        if kind == "null":
            return [f"{ind}{v} = None\n"]
        if kind == "boolean":  # a byte other than 0 or 1 is past the tuple's end: IndexError
            return [f"{ind}{v} = _BOOLEANS[d[p]]\n", f"{ind}p += 1\n"]
        if kind in ("int", "long"):
            return [f"{ind}{v} = d[p]\n", f"{ind}p += 1\n",
                    f"{ind}if {v} & 0x80: {v}, p = _varint(d, p, {v})\n",
                    f"{ind}{v} = ({v} >> 1) ^ -({v} & 1)\n"]
        if kind in ("float", "double"):
            unpack = self.constant(struct.Struct("<f" if kind == "float" else "<d").unpack_from)
            return [f"{ind}{v}, = {unpack}(d, p)\n", f"{ind}p += {4 if kind == 'float' else 8}\n"]
        # a length: one byte, or two (up to 8191: a file path), inline; negative: Undecodable
        size, second = self.fresh("n"), self.fresh("c")
        lines = [f"{ind}{size} = d[p]\n",
                 f"{ind}if {size} < 0x80: p += 1\n",
                 f"{ind}elif ({second} := d[p + 1]) < 0x80:\n",
                 f"{ind}    {size} = {size} & 0x7F | {second} << 7\n",
                 f"{ind}    p += 2\n",
                 f"{ind}else: {size}, p = _varint(d, p + 1, {size})\n",
                 f"{ind}if {size} & 1: raise Undecodable\n"]
        decode = ".decode()" if kind == "string" else ""  # a slice short of the data: `p` tells
        return [*lines, f"{ind}{v} = d[p:p + ({size} >> 1)]{decode}\n", f"{ind}p += {size} >> 1\n"]

    def named(self, schema: dict, v: str, ind: str) -> list[str]:
        kind, full = schema["type"], schema["full"]
        if kind == "enum":
            index = self.fresh("e")
            return [*self.primitive("long", index, ind), f"{ind}if {index} < 0: raise Undecodable\n",
                    f"{ind}{v} = {self.constant(tuple(schema['symbols']))}[{index}]\n"]
        if kind == "fixed":
            return [f"{ind}{v} = d[p:p + {schema['size']}]\n", f"{ind}p += {schema['size']}\n"]
        if full in self.inlining:  # a record inside itself: a function of its own
            if full not in self.functions:
                function = self.functions[full] = self.fresh("_r")
                body = self.fields(schema, "v", "    ")
                self.source.append(f"def {function}(d, p):\n" + "".join(body) + "    return v, p\n")
            return [f"{ind}{v}, p = {self.functions[full]}(d, p)\n"]
        self.inlining.append(full)
        try:
            return self.fields(schema, v, ind)
        finally:
            self.inlining.pop()

    def fields(self, schema: dict, v: str, ind: str) -> list[str]:
        fields = schema["fields"]
        values = [self.fresh("x") for _ in fields]
        lines = []
        for f, value in zip(fields, values, strict=True):
            lines.extend(self.code(f["type"], schema["space"], value, ind))
        shape = self.tuples.get(schema["full"])
        if shape is None:
            items = ", ".join(f"{f['name']!r}: {value}" for f, value in zip(fields, values, strict=True))
            return [*lines, f"{ind}{v} = {{{items}}}\n"]
        if len(getattr(shape, "_fields", ())) != len(fields):
            raise ValueError(f"{shape.__name__} does not hold the {len(fields)} fields of {schema['full']}")
        return [*lines, f"{ind}{v} = _new({self.constant(shape)}, ({', '.join(values)},))\n"]

    def union(self, branches: list, namespace: str, v: str, ind: str) -> list[str]:
        index = self.fresh("u")
        lines = [f"{ind}{index} = d[p]\n", f"{ind}p += 1\n"]
        for n, branch in enumerate(branches):  # indexes below 64: one byte, 2n
            lines.append(f"{ind}{'if' if not n else 'elif'} {index} == {2 * n}:\n")
            lines.extend(self.code(branch, namespace, v, ind + "    "))
        return [*lines, f"{ind}else: raise Undecodable\n"]

    def blocks(self, schema: dict, namespace: str, v: str, ind: str) -> list[str]:
        """An array or map: blocks of a count (negative: followed by the block's size) and items."""
        count, item, key, inner = self.fresh("c"), self.fresh("i"), self.fresh("k"), ind + "        "
        is_map = schema["type"] == "map"
        lines = [f"{ind}{v} = {{}}\n" if is_map else f"{ind}{v} = []\n", f"{ind}while True:\n",
                 *self.primitive("long", count, ind + "    "), f"{ind}    if not {count}: break\n",
                 f"{ind}    if {count} < 0:\n", f"{ind}        {count} = -{count}\n",
                 *self.primitive("long", self.fresh("s"), inner),
                 # an item takes a byte at least (a map's key, or any value but null or an empty
                 # record, which no schema of ours puts in an array): a count beyond the data is false
                 f"{ind}    if {count} > len(d) - p: raise Undecodable\n",
                 f"{ind}    for _ in range({count}):\n"]
        if is_map:
            return [*lines, *self.primitive("string", key, inner),
                    *self.code(schema["values"], namespace, item, inner), f"{inner}{v}[{key}] = {item}\n"]
        return [*lines, *self.code(schema["items"], namespace, item, inner), f"{inner}{v}.append({item})\n"]


def compile_decoder(schema: Mapping[str, Any] | list | str,
                    tuples: Mapping[str, type] | None = None) -> Decoder:
    """`decode(data, pos) -> (value, next pos)` for data written with `schema` (JSON form); raises
    `Undecodable` (or IndexError past the end) where it cannot. `tuples`: record types (full names)
    made as tuples of their fields in schema order, of the class named."""
    return _Compiler(tuples).root(schema)
