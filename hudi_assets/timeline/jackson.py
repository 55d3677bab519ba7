"""JSON text as Hudi's Jackson `writerWithDefaultPrettyPrinter` writes it.

Readers only need valid JSON, but writing the same layout as Hudi keeps files diffable against
Java-written ones: `"key" : value`, objects indented two spaces per level, arrays inline (`[ {`),
empty containers as `{ }` and `[ ]`, no trailing newline.
"""

from __future__ import annotations

import json
from typing import Any


def dumps(value: Any) -> str:
    out: list[str] = []
    _write(value, 0, out)
    return "".join(out)


def _write(value: Any, level: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{ }")
            return
        pad = "  " * (level + 1)
        out.append("{\n")
        for n, (key, item) in enumerate(value.items()):
            if n:
                out.append(",\n")
            out.append(f"{pad}{json.dumps(str(key), ensure_ascii=False)} : ")
            _write(item, level + 1, out)
        out.append("\n" + "  " * level + "}")
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
        out.append(json.dumps(value, ensure_ascii=False))
