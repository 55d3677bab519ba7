"""Write config: the `hoodie.*` settings maintenance reads, from every source, with Hudi's precedence.

Sources, lowest precedence first: the table's `hoodie.properties`, a properties file (`--props`), and
`key=value` overrides (`--hoodie-conf`), as in Hudi's utilities. Each setting is a `ConfigOption`
(Hudi's `ConfigProperty`: key, 1.x alternative names, default or inference, doc) declared once in
`hudi_assets.config_options`; `WriteConfig.get(option)` applies the alternatives, parses and checks the
value, and raises one clear `InvalidConfigError` naming the key, the bad value and where it came from.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.properties import parse_properties

TABLE_SOURCE = "hoodie.properties"
OVERRIDE_SOURCE = "--hoodie-conf"

T = TypeVar("T")
_INTEGER = re.compile(r"[+-]?\d+")


@dataclass(frozen=True, kw_only=True)
class ConfigOption(Generic[T]):
    """One setting: its key, the alternative names also accepted, the default, an optional inference
    from other settings (used when the key is unset, before the default), and a one-line doc."""

    key: str
    default: T
    doc: str
    alternatives: tuple[str, ...] = ()
    infer: Callable[[WriteConfig], T | None] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return (self.key, *self.alternatives)

    def parse(self, text: str) -> T:
        """The typed value of `text`; `ValueError` saying what was expected when it is not one."""
        raise NotImplementedError

    def kind(self) -> str:
        """The values accepted, in words."""
        raise NotImplementedError

    def help(self) -> str:
        """`key=default (or alternatives)`, then what is accepted and the doc, for help texts."""
        also = f"  (or {', '.join(self.alternatives)})" if self.alternatives else ""
        text = textwrap.fill(f"{self.doc} ({self.kind()})", width=100, initial_indent=" " * 6,
                             subsequent_indent=" " * 6)
        return f"  {self.key}={_as_text(self.default)}{also}\n{text}"


@dataclass(frozen=True, kw_only=True)
class IntOption(ConfigOption[int]):
    minimum: int | None = None

    def kind(self) -> str:
        return "an integer" if self.minimum is None else f"an integer >= {self.minimum}"

    def parse(self, text: str) -> int:
        if not _INTEGER.fullmatch(text.strip()):
            raise ValueError(self.kind())
        number = int(text)
        if self.minimum is not None and number < self.minimum:
            raise ValueError(self.kind())
        return number


@dataclass(frozen=True, kw_only=True)
class BoolOption(ConfigOption[bool]):
    def kind(self) -> str:
        return "true or false"

    def parse(self, text: str) -> bool:
        # Stricter than Java's Boolean.parseBoolean, which reads any typo as false.
        lowered = text.strip().lower()
        if lowered not in ("true", "false"):
            raise ValueError(self.kind())
        return lowered == "true"


@dataclass(frozen=True, kw_only=True)
class EnumOption(ConfigOption[str]):
    """An enum name, matched case-insensitively as Hudi's config enums are."""

    choices: tuple[str, ...]

    def kind(self) -> str:
        return f"one of {', '.join(self.choices)}"

    def parse(self, text: str) -> str:
        upper = text.strip().upper()
        if upper not in self.choices:
            raise ValueError(self.kind())
        return upper


@dataclass(frozen=True, kw_only=True)
class StringOption(ConfigOption[str]):
    """Free text, stripped; `""` stands for unset where a setting has no default."""

    def kind(self) -> str:
        return "text"

    def parse(self, text: str) -> str:
        return text.strip()


def parse_overrides(pairs: Iterable[str]) -> dict[str, str]:
    """`key=value` strings into a dict; a pair without `=` or without a key is an error."""
    result: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidConfigError(f"{OVERRIDE_SOURCE} {pair!r}: expected key=value")
        result[key.strip()] = value.strip()
    return result


def read_props_file(path: str) -> dict[str, str]:
    try:
        text = Path(path).read_text(encoding="latin-1")
    except OSError as exc:
        raise InvalidConfigError(f"--props {path}: cannot be read ({exc.strerror or exc})") from exc
    return parse_properties(text)


@dataclass
class WriteConfig:
    """Merged settings, remembering which source gave each key."""

    props: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, table_props: Mapping[str, str] | None = None, props_file: str | None = None,
             overrides: Sequence[str] | Mapping[str, str] = ()) -> WriteConfig:
        config = cls()
        config.update(table_props or {}, TABLE_SOURCE)
        if props_file:
            config.update(read_props_file(props_file), f"--props {props_file}")
        config.update(overrides if isinstance(overrides, Mapping) else parse_overrides(overrides),
                      OVERRIDE_SOURCE)
        return config

    def update(self, values: Mapping[str, str], source: str) -> None:
        for key, value in values.items():
            self.props[key] = value
            self.sources[key] = source

    def _find(self, option: ConfigOption) -> tuple[str, str] | None:
        """(name actually set, its text) for the option's key or its first alternative set."""
        return next(((name, self.props[name]) for name in option.names if name in self.props), None)

    def is_set(self, option: ConfigOption) -> bool:
        return self._find(option) is not None

    def get(self, option: ConfigOption[T]) -> T:
        """The option's typed value: as set (parsed and checked), else inferred, else its default."""
        found = self._find(option)
        if found is None:
            return self._unset(option)[0]
        name, text = found
        try:
            return option.parse(text)
        except ValueError as exc:
            raise InvalidConfigError(f"{name}={text!r} (from {self.sources[name]}): expected {exc}") from None

    def text(self, option: ConfigOption) -> str:
        """The option's value as written, unparsed (inferred or default when unset)."""
        found = self._find(option)
        return found[1] if found is not None else _as_text(self._unset(option)[0])

    def describe(self, option: ConfigOption) -> str:
        """`name=value (from source)` for messages: the name as set, else the key, `inferred` or `default`."""
        found = self._find(option)
        if found is not None:
            return f"{found[0]}={found[1]} (from {self.sources[found[0]]})"
        value, source = self._unset(option)
        return f"{option.key}={_as_text(value)} ({source})"

    def _unset(self, option: ConfigOption[T]) -> tuple[T, str]:
        inferred = option.infer(self) if option.infer else None
        return (option.default, "default") if inferred is None else (inferred, "inferred")


def _as_text(value: object) -> str:
    """A value as a properties file spells it (Java's `true`/`false`)."""
    return str(value).lower() if isinstance(value, bool) else str(value)
