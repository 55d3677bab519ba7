"""Avro binary encoding of records, compiled once per schema into generated Python code.

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


def _bytes(value: Any, out: list[bytes]) -> None:
    if not isinstance(value, bytes | bytearray):
        raise Mismatch
    out.append(encode_long(len(value)))
    out.append(bytes(value))


class _Compiler:
    """Compiles a schema (JSON form) into the source of one Python function per named record and a
    root function: each field is straight-line code, without a call per field or per primitive
    (measured: a third less time than nested closures per archived entry or plan). Enums and fixed
    types, rare in Hudi's schemas, stay small closures the generated code calls."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self.named: dict[str, str] = {}  # full name -> name of its function in `env`
        self.kinds: dict[str, str] = {}  # full name -> record / enum / fixed
        self.env: dict[str, Any] = {"Mismatch": Mismatch, "_SMALL": _SMALL, "_END": _END,
                                    "_enc": encode_long, "_bytes": _bytes}
        self.functions: list[str] = []
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def constant(self, value: Any) -> str:
        name = self.fresh("_c")
        self.env[name] = value
        return name

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

    def root(self, schema: Any) -> Encoder:
        body = self.code(schema, "", "v", "    ")
        self.functions.append("def _root(v, out):\n    ap = out.append\n" + "".join(body))
        exec(compile("\n".join(self.functions), "<avro encoder>", "exec"), self.env)
        return self.env["_root"]

    def code(self, schema: Any, namespace: str, v: str, ind: str) -> list[str]:
        """Lines (with `ind`) that append the encoding of the value in variable `v` via `ap`."""
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return self.primitive(schema, v, ind)
            full = self.full_name(schema, namespace)
            return [f"{ind}{self.named[full if full in self.named else schema]}({v}, out)\n"]
        if isinstance(schema, list):
            return self.union(schema, namespace, v, ind)
        kind = schema["type"]
        if isinstance(kind, dict | list) or (kind in _PRIMITIVES and "name" not in schema):
            return self.code(kind, namespace, v, ind)
        if kind in ("record", "error", "enum", "fixed"):
            return [f"{ind}{self.named_type(schema, namespace)}({v}, out)\n"]
        if kind == "array":
            item = self.fresh("i")
            return [f"{ind}if type({v}) is not list and type({v}) is not tuple: raise Mismatch\n",
                    f"{ind}if {v}:\n", f"{ind}    ap(_enc(len({v})))\n", f"{ind}    for {item} in {v}:\n",
                    *self.code(schema["items"], namespace, item, ind + "        "), f"{ind}ap(_END)\n"]
        if kind == "map":
            key, item = self.fresh("k"), self.fresh("i")
            return [f"{ind}if type({v}) is not dict: raise Mismatch\n", f"{ind}if {v}:\n",
                    f"{ind}    ap(_enc(len({v})))\n", f"{ind}    for {key}, {item} in {v}.items():\n",
                    *self.primitive("string", key, ind + "        "),
                    *self.code(schema["values"], namespace, item, ind + "        "), f"{ind}ap(_END)\n"]
        raise ValueError(f"unknown Avro type {kind!r}")

    def primitive(self, kind: str, v: str, ind: str) -> list[str]:
        if kind == "null":
            return [f"{ind}if {v} is not None: raise Mismatch\n"]
        if kind == "boolean":
            return [f"{ind}if {v} is True: ap(b'\\x01')\n", f"{ind}elif {v} is False: ap(b'\\x00')\n",
                    f"{ind}else: raise Mismatch\n"]
        if kind in ("int", "long"):
            low, high = _INT32 if kind == "int" else _INT64
            return [f"{ind}if type({v}) is not int or not {low} <= {v} <= {high}: raise Mismatch\n",
                    f"{ind}ap(_SMALL[{v} + 64] if -64 <= {v} < 64 else _enc({v}))\n"]
        if kind in ("float", "double"):
            pack = self.constant(struct.Struct("<f" if kind == "float" else "<d").pack)
            return [f"{ind}if type({v}) is not int and type({v}) is not float: raise Mismatch\n",
                    f"{ind}ap({pack}({v}))\n"]
        if kind == "bytes":
            return [f"{ind}_bytes({v}, out)\n"]
        data, size = self.fresh("b"), self.fresh("n")
        return [f"{ind}if type({v}) is not str: raise Mismatch\n", f"{ind}{data} = {v}.encode()\n",
                f"{ind}{size} = len({data})\n",
                f"{ind}ap(_SMALL[{size} + 64] if {size} < 64 else _enc({size}))\n", f"{ind}ap({data})\n"]

    def named_type(self, schema: dict, namespace: str) -> str:
        """The function name of a record, enum or fixed type, defined on the way."""
        full = self.full_name(schema["name"], schema.get("namespace", namespace))
        function = self.fresh("_t")
        self.named[full] = function  # before the fields: they may refer to it
        kind = schema["type"]
        if kind == "enum":
            symbols = {symbol: encode_long(n) for n, symbol in enumerate(schema["symbols"])}
            self.kinds[full] = "enum"
            self.env[function] = lambda value, out: out.append(
                symbols[value] if type(value) is str and value in symbols else _raise())
            return function
        if kind == "fixed":
            size = schema["size"]
            self.kinds[full] = "fixed"
            self.env[function] = lambda value, out: out.append(
                bytes(value) if isinstance(value, bytes | bytearray) and len(value) == size else _raise())
            return function
        self.kinds[full] = "record"
        namespace = schema.get("namespace", namespace) if "." not in schema["name"] else \
            schema["name"].rpartition(".")[0]
        lines = [f"def {function}(v, out):\n", "    if type(v) is not dict: raise Mismatch\n",
                 "    ap = out.append\n"]
        if self.strict:  # fastavro's strict mode names the field
            known = self.constant(frozenset(f["name"] for f in schema["fields"]))
            required = self.constant(frozenset(f["name"] for f in schema["fields"] if "default" not in f))
            lines.append(f"    if not (v.keys() <= {known} and {required} <= v.keys()): raise Mismatch\n")
        for f in schema["fields"]:
            value = self.fresh("x")
            default = f.get("default")
            literal = repr(default) if default is None or type(default) in (bool, int, str) else \
                self.constant(default)
            lines.append(f"    {value} = v.get({f['name']!r}, {literal})\n")
            lines.extend(self.code(f["type"], namespace, value, "    "))
        self.functions.append("".join(lines))
        return function

    def union(self, branches: list, namespace: str, v: str, ind: str) -> list[str]:
        """A branch per Python type, where exactly one branch takes that type (else `Mismatch`)."""
        by_type: dict[type, int | None] = {}
        for index, branch in enumerate(branches):
            for python_type in _ACCEPTS[self.kind(branch, namespace)]:
                by_type[python_type] = None if python_type in by_type else index
        kind = self.fresh("t")
        lines = [f"{ind}{kind} = type({v})\n"]
        keyword = "if"
        for index, branch in enumerate(branches):
            types = [t for t, chosen in by_type.items() if chosen == index]
            if not types:
                continue
            test = " or ".join(f"{kind} is {self.constant(t)}" for t in types)
            lines.append(f"{ind}{keyword} {test}:\n")
            lines.append(f"{ind}    ap({encode_long(index)!r})\n")
            if branch != "null":
                lines.extend(self.code(branch, namespace, v, ind + "    "))
            keyword = "elif"
        lines.append(f"{ind}else: raise Mismatch\n" if keyword == "elif" else f"{ind}raise Mismatch\n")
        return lines


def _raise() -> bytes:
    raise Mismatch


def compile_encoder(schema: Mapping[str, Any] | list | str, strict: bool = False) -> Callable[[Any], bytes]:
    """`encode(record) -> bytes` for one schema (JSON form); raises `Mismatch` where fastavro must
    decide. `strict`: a record with a field its schema lacks, or without one that has no default,
    is a `Mismatch` too (fastavro's `strict_allow_default`)."""
    root = _Compiler(strict).root(schema)

    def encode(record: Any) -> bytes:
        out: list[bytes] = []
        root(record, out)
        return b"".join(out)
    return encode
