"""Java `.properties` text: the format of `hoodie.properties` and of `--props` files.

Parsing follows `java.util.Properties.load` (comments, `=`/`:`/blank separators, backslash escapes,
`\\uXXXX`, line continuations); writing follows `Properties.store` escaping so that Hudi reads back
exactly the values we wrote.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
# Java's separators and line ends only: Python's \s and str.splitlines also take Unicode spaces and
# separators (U+00A0, U+2028, ...), which Java keeps inside keys and values.
_SEPARATOR = re.compile(r"(?<!\\)(?:\\\\)*[=: \t\f]")
_LINE_END = re.compile(r"\r\n|\r|\n")


def _logical_lines(text: str) -> list[str]:
    """Join continuation lines (odd number of trailing backslashes) and drop comments/blank lines."""
    lines: list[str] = []
    pending = ""
    for raw in _LINE_END.split(text):
        line = raw.lstrip(" \t\f")
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def _split_key_value(line: str) -> tuple[str, str]:
    match = _SEPARATOR.search(line)
    if match is None:
        return line, ""
    key_end = match.end() - 1
    rest = line[key_end:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return line[:key_end], rest


def parse_properties(text: str) -> dict[str, str]:
    """Parse `.properties` text into an insertion-ordered dict (later keys win, as in Java)."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        props[_unescape(key)] = _unescape(value)
    return props


def _escape(text: str, is_key: bool) -> str:
    out: list[str] = []
    for i, ch in enumerate(text):
        if ch == " " and (is_key or i == 0):
            out.append("\\ ")
        elif ch in "\\=:#!":
            out.append("\\" + ch)
        elif ch in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[ch])
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def format_properties(props: Mapping[str, str], comments: list[str] | None = None) -> str:
    """Render properties the way `Properties.store` does (ISO-8859-1 safe, `\\uXXXX` escapes)."""
    lines = [f"#{c}" for c in comments or []]
    lines += [f"{_escape(k, True)}={_escape(v, False)}" for k, v in props.items()]
    return "\n".join(lines) + "\n"
