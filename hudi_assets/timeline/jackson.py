"""JSON text as Hudi's Jackson `writerWithDefaultPrettyPrinter` writes it.

Readers only need valid JSON, but writing the same layout as Hudi keeps files identical to
Java-written ones: `"key" : value`, objects indented two spaces per level, arrays inline (`[ {`),
empty containers as `{ }` and `[ ]`, no trailing newline. Commits of large writes hold many
thousands of write stats, so the common cases are inlined in the loop over object keys.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Strings that `json.dumps(..., ensure_ascii=False)` prints verbatim between quotes.
_PLAIN = re.compile(r'[^"\\\x00-\x1f\x7f]*')


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    kind = type(value)
    if kind is int:
        return str(value)
    if kind is str and _PLAIN.fullmatch(value):
        return f'"{value}"'
    return json.dumps(value, ensure_ascii=False)


_KEY_PREFIXES: dict[int, dict[str, str]] = {}  # level -> key -> `,\n<indent>"key" : `
_CONTAINERS = (dict, list, tuple)


def _write(value: Any, level: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{ }")
            return
        prefixes = _KEY_PREFIXES.setdefault(level, {})
        append = out.append
        append("{\n")
        first = len(out)
        for key, item in value.items():  # the hot loop of huge commits: common cases inline
            prefix = prefixes.get(key)
            if prefix is None:
                prefix = prefixes[key] = f",\n{'  ' * (level + 1)}{_scalar(str(key))} : "
            append(prefix)
            kind = type(item)
            if kind is int:
                append(str(item))
            elif item is None:
                append("null")
            elif kind is str and _PLAIN.fullmatch(item):
                append(f'"{item}"')
            elif kind in _CONTAINERS or isinstance(item, _CONTAINERS):
                _write(item, level + 1, out)
            else:
                append(_scalar(item))
        out[first] = out[first][2:]
        append("\n" + "  " * level + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[ ]")
            return
        out.append("[ ")
        for n, item in enumerate(value):
            if n:
                out.append(", ")
            _write(item, level, out)
        out.append(" ]")
    else:
        out.append(_scalar(value))


def dumps(value: Any) -> str:
    out: list[str] = []
    _write(value, 0, out)
    return "".join(out)
