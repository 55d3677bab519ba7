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

import functools
import struct
from collections.abc import Callable, Mapping
from typing import Any

from hudi_assets.avro.codegen import CodeGenerator


def encode_long(value: int) -> bytes:
    """Avro's zig-zag varint encoding of a long. Up to four bytes (values below 2**27: sizes, counts
    and times of write stats, millions per archive run) made at once, without a loop."""
    zigzag = (value << 1) ^ (value >> 63)
    if zigzag < 0x4000:
        return bytes((zigzag,)) if zigzag < 0x80 else bytes((zigzag & 0x7F | 0x80, zigzag >> 7))
    if zigzag < 0x200000:
        return bytes((zigzag & 0x7F | 0x80, zigzag >> 7 & 0x7F | 0x80, zigzag >> 14))
    if zigzag < 0x10000000:
        return bytes((zigzag & 0x7F | 0x80, zigzag >> 7 & 0x7F | 0x80, zigzag >> 14 & 0x7F | 0x80,
                      zigzag >> 21))
    out = bytearray()
    while zigzag > 0x7F:
        out.append((zigzag & 0x7F) | 0x80)
        zigzag >>= 7
    out.append(zigzag)
    return bytes(out)


Encoder = Callable[[Any, list[bytes]], None]
# The encodings of 0 to 8191 (one or two bytes), made directly: string lengths, counts and most
# values of Hudi's records are among them, and a lookup costs a tenth of `encode_long`.
_VARINTS = [bytes((2 * n,)) for n in range(64)] + \
    [bytes((2 * n & 0x7F | 0x80, n >> 6)) for n in range(64, 8192)]
_VARINT_CHARS = [varint.decode("latin-1") for varint in _VARINTS]
_END = _VARINTS[0]
_UNION1_VARINTS = [b"\x02" + varint for varint in _VARINTS]  # after the index of `["null", T]`'s T
_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
# The Python types fastavro's validation accepts for each kind of schema (bool is not an int there).
_ACCEPTS: dict[str, tuple[type, ...]] = {
    "null": (type(None),), "boolean": (bool,), "int": (int,), "long": (int,), "float": (int, float),
    "double": (int, float), "bytes": (bytes, bytearray), "string": (str,), "enum": (str,),
    "fixed": (bytes, bytearray), "array": (list, tuple), "map": (dict,), "record": (dict,),
}
_TYPE_NAMES = {bool: "bool", int: "int", float: "float", bytes: "bytes", bytearray: "bytearray", str: "str",
               list: "list", tuple: "tuple", dict: "dict"}
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


class Mismatch(Exception):
    """The value does not fit this encoder's fast path; encode it with fastavro."""


class Encoded(bytes):
    """An array (not a union's branch) encoded beforehand, column by column (`record_arrays`); the
    generated encoder writes it as it is. `plain()` makes the array itself, for fastavro when the
    record around it falls back (`unencoded`)."""

    plain: Callable[[], list]


def unencoded(value: Any) -> Any:
    """`value` with every `Encoded` array inside it made plain again (only on fastavro's path)."""
    if type(value) is Encoded:
        return value.plain()
    if type(value) is dict:
        return {k: unencoded(v) for k, v in value.items()}
    if type(value) is list:
        return [unencoded(v) for v in value]
    return value


def _nullable_string(value: Any) -> bytes:
    if value is None:
        return b"\x00"
    if type(value) is not str:
        raise Mismatch
    data = value.encode()
    return b"\x02" + encode_long(len(data)) + data


def _nullable_long(value: Any) -> bytes:
    if value is None:
        return b"\x00"
    if type(value) is not int:
        raise Mismatch
    return b"\x02" + _long(value)


def nullable_string_column(values: list) -> list[bytes]:
    """The encodings of a `["null", "string"]` field in each record: C-level maps when all are
    strings shorter than 8192 bytes (file ids and paths), a call per value otherwise."""
    if set(map(type, values)) == {str}:
        data = list(map(str.encode, values))
        try:
            return list(map(bytes.__add__, map(_UNION1_VARINTS.__getitem__, map(len, data)), data))
        except IndexError:
            pass
    return list(map(_nullable_string, values))


def nullable_long_column(values: list) -> list[bytes]:
    """The encodings of a `["null", "long"]` field in each record: a table lookup per value from 0 to
    8191, a call per other value (`Mismatch` beyond a long or for a value that is no int)."""
    if set(map(type, values)) != {int}:
        return list(map(_nullable_long, values))
    return [_UNION1_VARINTS[v] if 0 <= v < 8192 else _union1_long(v) for v in values]


def _union1_long(value: int) -> bytes:
    """Union index 1 and the varint of `value`, made in one piece up to four varint bytes (a
    commit's sizes and counts: a third less time per commit than index and varint apart)."""
    zigzag = (value << 1) ^ (value >> 63)
    if zigzag < 0x4000:
        return bytes((2, zigzag)) if zigzag < 0x80 else bytes((2, zigzag & 0x7F | 0x80, zigzag >> 7))
    if zigzag < 0x200000:
        return bytes((2, zigzag & 0x7F | 0x80, zigzag >> 7 & 0x7F | 0x80, zigzag >> 14))
    if zigzag < 0x10000000:
        return bytes((2, zigzag & 0x7F | 0x80, zigzag >> 7 & 0x7F | 0x80, zigzag >> 14 & 0x7F | 0x80,
                      zigzag >> 21))
    return b"\x02" + _long(value)  # Mismatch beyond a long


def record_arrays(columns: list[list[bytes]], counts: list[int],
                  plain: Callable[[int], list]) -> list[Encoded]:
    """Arrays of records whose fields' encodings are `columns` (one list per field, in schema order,
    one item per record), the first `counts[0]` records in the first array and so on: one C-level
    join per record, none per field. `plain(n)` makes array n itself (`Encoded.plain`)."""
    records = list(map(b"".join, zip(*columns, strict=True)))
    arrays, start = [], 0
    for n, count in enumerate(counts):
        encoded = Encoded((_VARINTS[count] if count < 8192 else encode_long(count)) +
                          b"".join(records[start:start + count]) + _END if count else _END)
        encoded.plain = functools.partial(plain, n)
        arrays.append(encoded)
        start += count
    return arrays


def _long(value: int) -> bytes:
    if not _INT64[0] <= value <= _INT64[1]:
        raise Mismatch
    return encode_long(value)


def _int(value: int) -> bytes:
    if not _INT32[0] <= value <= _INT32[1]:
        raise Mismatch
    return encode_long(value)


def _bytes(value: Any, out: list[bytes]) -> None:
    if not isinstance(value, bytes | bytearray):
        raise Mismatch
    out.append(encode_long(len(value)))
    out.append(bytes(value))


def _strings(values: list | tuple) -> list[bytes]:
    """The encoding of each string of a non-empty array, length and UTF-8, as one list made by
    C-level maps (no Python step per string: arrays of file names run to millions of strings).
    ASCII strings shorter than 8192 characters come as one piece: their lengths' varints taken as
    Latin-1 characters, joined with them and encoded at once (one part, not two per string, for
    the caller's final join)."""
    try:
        if "".join(values).isascii():
            return ["".join(map(str.__add__, map(_VARINT_CHARS.__getitem__, map(len, values)), values)
                            ).encode("latin-1")]
    except TypeError:  # not a str
        raise Mismatch from None
    except IndexError:  # a string of 8192 characters or more
        pass
    data = list(map(str.encode, values))
    try:
        sizes = list(map(_VARINTS.__getitem__, map(len, data)))
    except IndexError:
        sizes = [encode_long(len(d)) for d in data]
    parts = data + data
    parts[::2] = sizes
    parts[1::2] = data
    return parts


class _Compiler(CodeGenerator):
    """Compiles a schema (JSON form) into the source of one Python function per named record and a
    root function: each field is straight-line code, without a call per field or per primitive
    (measured: a third less time than nested closures per archived entry or plan), and a record
    that is an array's item or a map's value is written inline, without a call per item. Enums and
    fixed types, rare in Hudi's schemas, stay small closures the generated code calls.

    `tuples` names record types (full names) given as instances of a tuple class whose items are
    the record's fields in schema order (a plan's `CleanFileInfo`), instead of dicts.
    """

    def __init__(self, strict: bool = False, tuples: Mapping[str, type] | None = None) -> None:
        super().__init__({"Mismatch": Mismatch, "_V": _VARINTS, "_V1": _UNION1_VARINTS, "_END": _END,
                          "_enc": encode_long, "_long": _long, "_int": _int, "_bytes": _bytes,
                          "_strings": _strings, "_Encoded": Encoded})
        self.strict = strict
        self.tuples = dict(tuples or {})
        self.named: dict[str, str] = {}  # full name -> name of its function in `env`
        self.records: dict[str, tuple[list, str]] = {}  # full name -> fields, their namespace
        self.inlining: list[str] = []  # records whose fields are being written out
        self.kinds: dict[str, str] = {}  # full name -> record / enum / fixed
        self.functions: list[str] = []

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
        root = self.define(self.functions, "<avro encoder>", "_root")
        if set(self.tuples) - set(self.named):
            raise ValueError(f"no record named {sorted(set(self.tuples) - set(self.named))} in the schema")
        return root

    def code(self, schema: Any, namespace: str, v: str, ind: str, typed: bool = False) -> list[str]:
        """Lines (with `ind`) that append the encoding of the value in variable `v` via `ap`;
        `typed`: a union has already checked the value's Python type."""
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return self.primitive(schema, v, ind, typed)
            full = self.full_name(schema, namespace)
            return [f"{ind}{self.named[full if full in self.named else schema]}({v}, out)\n"]
        if isinstance(schema, list):
            return self.union(schema, namespace, v, ind)
        kind = schema["type"]
        if isinstance(kind, dict | list) or (kind in _PRIMITIVES and "name" not in schema):
            return self.code(kind, namespace, v, ind, typed)
        if kind in ("record", "error", "enum", "fixed"):
            return [f"{ind}{self.named_type(schema, namespace)}({v}, out)\n"]
        check = self.check(v, ("list", "tuple"), ind, typed)
        if kind == "array" and schema["items"] == "string":
            return [*check, f"{ind}if {v}:\n", *self.length(f"len({v})", ind + "    "),
                    f"{ind}    out += _strings({v})\n", f"{ind}ap(_END)\n"]
        if kind == "array":  # an array made beforehand (`Encoded`), unless a union has checked it is a list
            item, body = self.fresh("i"), ind if typed else ind + "    "
            lines = [*self.check(v, ("list", "tuple"), body, typed), f"{body}if {v}:\n",
                     *self.length(f"len({v})", body + "    "), f"{body}    for {item} in {v}:\n",
                     *self.item(schema["items"], namespace, item, body + "        "), f"{body}ap(_END)\n"]
            return lines if typed else [f"{ind}if type({v}) is _Encoded: ap({v})\n", f"{ind}else:\n", *lines]
        if kind == "map":
            key, item = self.fresh("k"), self.fresh("i")
            check = self.check(v, ("dict",), ind, typed)
            return [*check, f"{ind}if {v}:\n", *self.length(f"len({v})", ind + "    "),
                    f"{ind}    for {key}, {item} in {v}.items():\n",
                    *self.primitive("string", key, ind + "        "),
                    *self.item(schema["values"], namespace, item, ind + "        "), f"{ind}ap(_END)\n"]
        raise ValueError(f"unknown Avro type {kind!r}")

    @staticmethod
    def check(v: str, types: tuple[str, ...], ind: str, typed: bool) -> list[str]:
        """The test that the value's type is one of `types` (by name), unless a union made it."""
        test = " and ".join(f"type({v}) is not {name}" for name in types)
        return [] if typed else [f"{ind}if {test}: raise Mismatch\n"]

    def length(self, expression: str, ind: str, union1: bool = False) -> list[str]:
        """Append a varint (`union1`: after union index 1, in one piece)."""
        size = self.fresh("n")
        table, slow = ("_V1", "b'\\x02' + _enc") if union1 else ("_V", "_enc")
        return [f"{ind}{size} = {expression}\n",
                f"{ind}ap({table}[{size}] if {size} < 8192 else {slow}({size}))\n"]

    def primitive(self, kind: str, v: str, ind: str, typed: bool = False, union1: bool = False) -> list[str]:
        """`union1`: the value is the second branch of a union, whose index (1) goes with it."""
        if kind == "null":
            return [] if typed else [f"{ind}if {v} is not None: raise Mismatch\n"]
        if kind == "boolean":
            if union1:
                return [f"{ind}ap(b'\\x02\\x01' if {v} else b'\\x02\\x00')\n"]
            if typed:
                return [f"{ind}ap(b'\\x01' if {v} else b'\\x00')\n"]
            return [f"{ind}if {v} is True: ap(b'\\x01')\n", f"{ind}elif {v} is False: ap(b'\\x00')\n",
                    f"{ind}else: raise Mismatch\n"]
        if kind in ("int", "long"):  # out of range: the slow path raises Mismatch
            table, slow = ("_V1", "b'\\x02' + _") if union1 else ("_V", "_")
            check = self.check(v, ("int",), ind, typed)
            return [*check, f"{ind}ap({table}[{v}] if 0 <= {v} < 8192 else {slow}{kind}({v}))\n"]
        if kind in ("float", "double"):
            pack = self.constant(struct.Struct("<f" if kind == "float" else "<d").pack)
            return [*self.check(v, ("int", "float"), ind, typed), f"{ind}ap({pack}({v}))\n"]
        if kind == "bytes":
            return [f"{ind}_bytes({v}, out)\n"]
        data = self.fresh("b")
        return [*self.check(v, ("str",), ind, typed), f"{ind}{data} = {v}.encode()\n",
                *self.length(f"len({data})", ind, union1), f"{ind}ap({data})\n"]

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
        self.records[full] = (schema["fields"], namespace)
        self.inlining.append(full)  # a reference inside itself calls the function
        body = self.fields(full, "v", "    ")
        self.inlining.pop()
        self.functions.append(f"def {function}(v, out):\n    ap = out.append\n" + "".join(body))
        return function

    def fields(self, full: str, v: str, ind: str) -> list[str]:
        """Lines that append the encoding of record `full` in variable `v`."""
        fields, namespace = self.records[full]
        values = [self.fresh("x") for _ in fields]
        shape = self.tuples.get(full)
        if shape is not None:
            if len(getattr(shape, "_fields", ())) != len(fields):
                raise ValueError(f"{shape.__name__} does not hold the {len(fields)} fields of {full}")
            lines = [f"{ind}if type({v}) is not {self.constant(shape)}: raise Mismatch\n"]
            if fields:
                lines.append(f"{ind}{', '.join(values)}, = {v}\n")
        else:
            lines = [f"{ind}if type({v}) is not dict: raise Mismatch\n"]
            if self.strict:  # fastavro's strict mode names the field
                known = self.constant(frozenset(f["name"] for f in fields))
                required = self.constant(frozenset(f["name"] for f in fields if "default" not in f))
                keys = f"{v}.keys()"
                lines.append(f"{ind}if not ({keys} <= {known} and {required} <= {keys}): raise Mismatch\n")
            if fields:  # all looked up by one C-level map (absent: the default, None without one)
                names = self.constant(tuple(f["name"] for f in fields))
                defaults = self.constant(tuple(f.get("default") for f in fields))
                lines.append(f"{ind}{', '.join(values)}, = map({v}.get, {names}, {defaults})\n")
        for f, value in zip(fields, values, strict=True):
            lines.extend(self.code(f["type"], namespace, value, ind))
        return lines

    def item(self, schema: Any, namespace: str, v: str, ind: str) -> list[str]:
        """An array's item or a map's value: a record's fields inline (no call per item: a plan's
        `HoodieCleanFileInfo`, a commit's write stats), unless inside that record itself."""
        if isinstance(schema, dict) and schema.get("type") in ("record", "error"):
            self.named_type(schema, namespace)
            full = self.full_name(schema["name"], schema.get("namespace", namespace))
        elif isinstance(schema, str) and schema not in _PRIMITIVES:
            full = self.full_name(schema, namespace)
            full = full if full in self.named else schema
        else:
            return self.code(schema, namespace, v, ind)
        if full not in self.records or full in self.inlining:  # enum, fixed, or recursion
            return self.code(full, namespace, v, ind)
        self.inlining.append(full)
        try:
            return self.fields(full, v, ind)
        finally:
            self.inlining.pop()

    def union(self, branches: list, namespace: str, v: str, ind: str) -> list[str]:
        """A branch per Python type, where exactly one branch takes that type (else `Mismatch`)."""
        by_type: dict[type, int | None] = {}
        for index, branch in enumerate(branches):
            for python_type in _ACCEPTS[self.kind(branch, namespace)]:
                by_type[python_type] = None if python_type in by_type else index
        lines = []
        keyword = "if"
        for index, branch in enumerate(branches):
            types = [t for t, chosen in by_type.items() if chosen == index]
            if not types:
                continue
            test = " or ".join(f"{v} is None" if t is type(None) else f"type({v}) is {_TYPE_NAMES[t]}"
                               for t in types)
            lines.append(f"{ind}{keyword} {test}:\n")
            kind = self.kind(branch, namespace)
            if index == 1 and kind in ("string", "int", "long", "boolean"):  # `["null", T]`: with the value
                lines.extend(self.primitive(kind, v, ind + "    ", typed=True, union1=True))
                keyword = "elif"
                continue
            lines.append(f"{ind}    ap({encode_long(index)!r})\n")
            if kind != "null":
                lines.extend(self.code(branch, namespace, v, ind + "    ", typed=True))
            keyword = "elif"
        lines.append(f"{ind}else: raise Mismatch\n" if keyword == "elif" else f"{ind}raise Mismatch\n")
        return lines


def _raise() -> bytes:
    raise Mismatch


def compile_encoder(schema: Mapping[str, Any] | list | str, strict: bool = False,
                    tuples: Mapping[str, type] | None = None) -> Callable[[Any], bytes]:
    """`encode(record) -> bytes` for one schema (JSON form); raises `Mismatch` where fastavro must
    decide. `strict`: a record with a field its schema lacks, or without one that has no default,
    is a `Mismatch` too (fastavro's `strict_allow_default`). `tuples`: record types (full names)
    given as tuples of their fields in schema order, of the class named (fastavro takes only dicts:
    on `Mismatch`, the caller encodes the record's dict form)."""
    root = _Compiler(strict, tuples).root(schema)

    def encode(record: Any) -> bytes:
        out: list[bytes] = []
        root(record, out)
        return b"".join(out)
    return encode
