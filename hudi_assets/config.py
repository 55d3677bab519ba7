"""Write config: the `hoodie.*` settings maintenance reads, from every source, with Hudi's precedence.

Sources, lowest precedence first: the table's `hoodie.properties`, a properties file (`--props`), and
`key=value` overrides (`--hoodie-conf`), as in Hudi's utilities. Each setting is a `ConfigOption`
(Hudi's `ConfigProperty`: key, 1.x alternative names, default or inference, doc) declared once in
`hudi_assets.config_options`; `WriteConfig.get(option)` applies the alternatives, parses and checks the
value, and raises one clear `InvalidConfigError` naming the key, the bad value and where it came from.

Each source is read as the user meant it: a props file's byte order mark is dropped (with a warning), a
key that differs from a declared name only by invisible characters is refused, and so are two names of
one setting given different values in one source; a later source sets every name of a setting.
"""

from __future__ import annotations

import importlib
import logging
import re
import textwrap
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.properties import parse_properties

log = logging.getLogger(__name__)

TABLE_SOURCE = "hoodie.properties"
OVERRIDE_SOURCE = "--hoodie-conf"
UTF8_BOM = b"\xef\xbb\xbf"
# Unicode categories no one sees in a key: controls, format characters (zero-width spaces and joiners,
# the BOM), and space, line and paragraph separators (non-breaking spaces among them).
_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})

T = TypeVar("T")
_INTEGER = re.compile(r"[+-]?\d+")
_DECLARED: dict[str, ConfigOption] = {}  # every key and alternative name -> its option


@dataclass(frozen=True)
class SettingNames:
    """What a face calls the user's two sources of settings, for messages."""

    props_file: str
    overrides: str


CLI_NAMES = SettingNames("--props", OVERRIDE_SOURCE)
API_NAMES = SettingNames("props_file", "hoodie_conf")


@dataclass(frozen=True, kw_only=True)
class ConfigOption(Generic[T]):
    """One setting: its key, the alternative names also accepted, the default, an optional inference
    from other settings (used when the key is unset, before the default), and a one-line doc."""

    key: str
    default: T
    doc: str
    alternatives: tuple[str, ...] = ()
    infer: Callable[[WriteConfig], T | None] | None = None

    def __post_init__(self) -> None:
        for name in self.names:
            if _DECLARED.setdefault(name, self) is not self:
                raise ValueError(f"{name} is declared twice")

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


_DURATION = re.compile(r"(\d+)([smhdw])")
_SECONDS_PER_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def duration_seconds(text: str) -> int | None:
    """`36h`, `7d`, `90m`, `2w`, `30s` as whole seconds; None when `text` is not a number and a unit."""
    match = _DURATION.fullmatch(text.strip())
    return None if match is None else int(match[1]) * _SECONDS_PER_UNIT[match[2]]


@dataclass(frozen=True, kw_only=True)
class DurationOption(ConfigOption[int]):
    """A duration such as `2h`, `90m`, `7d` (units s, m, h, d, w), read as whole seconds; `0` is none."""

    def kind(self) -> str:
        return "a duration: a number and a unit (s, m, h, d, w) such as 2h, or 0"

    def parse(self, text: str) -> int:
        if text.strip() == "0":
            return 0
        seconds = duration_seconds(text)
        if seconds is None:
            raise ValueError(self.kind())
        return seconds


@dataclass(frozen=True, kw_only=True)
class StrOption(ConfigOption[str]):
    """Free text (a path, a URL, a class name), taken as written but for surrounding blanks."""

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


def read_props_file(path: str, name: str = CLI_NAMES.props_file) -> dict[str, str]:
    """The file's settings. UTF-8, as Hudi's `DFSPropertiesConfiguration` reads `--props`; a leading
    byte order mark is dropped with a warning (Java would keep it in the first key, which no one means)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidConfigError(f"{name} {path}: cannot be read ({exc.strerror or exc})") from exc
    if data.startswith(UTF8_BOM):
        log.warning("%s %s: starts with a UTF-8 byte order mark; ignored", name, path)
        data = data[len(UTF8_BOM):]
    try:
        return parse_properties(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InvalidConfigError(f"{name} {path}: not UTF-8 text (byte {exc.start})") from None


def conf_text(values: Mapping[object, object], name: str) -> dict[str, str]:
    """Settings given as Python values, as text: str as is, int and float as written, bool as Java's
    `true`/`false`; anything else (None among them) is refused naming the key."""
    result: dict[str, str] = {}
    for key, value in values.items():
        if not isinstance(key, str):
            raise InvalidConfigError(f"{name}: key {key!r} is not text")
        if not isinstance(value, str | int | float):  # bool is an int
            raise InvalidConfigError(f"{name}[{key!r}]={value!r}: expected text, a number or true/false")
        result[key] = _as_text(value)
    return result


def declared() -> Mapping[str, ConfigOption]:
    """Every declared name -> its option. The registry module declares them; it is imported here so that
    settings read before any service looked at them are checked against every name."""
    importlib.import_module("hudi_assets.config_options")
    return _DECLARED


def _invisible(ch: str) -> bool:
    return unicodedata.category(ch) in _INVISIBLE


def _describe_invisible(key: str) -> str:
    return ", ".join(dict.fromkeys(f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}"
                                   for c in key if _invisible(c)))


def check_source(values: Mapping[str, str], source: str) -> None:
    """Refuse what one source says that the user cannot have meant: an undeclared key that is a declared
    name but for invisible characters, or two names of one setting with different values."""
    names = declared()
    for key in values:
        if key in names:
            continue
        visible = "".join(c for c in key if not _invisible(c))
        if visible in names:
            raise InvalidConfigError(f"{source}: key {key!r} is not a setting: it is {visible} with "
                                     f"invisible characters ({_describe_invisible(key)}); retype the key")
    seen: dict[str, str] = {}  # option key -> the first of its names the source sets
    for key, text in values.items():
        option = names.get(key)
        if option is None:
            continue
        first = seen.setdefault(option.key, key)
        if first != key and not _same_value(option, values[first], text):
            raise InvalidConfigError(f"{source}: {first}={values[first]} and {key}={text} set one setting "
                                     "to different values; keep one of them")


def _same_value(option: ConfigOption, a: str, b: str) -> bool:
    try:
        return option.parse(a) == option.parse(b)
    except ValueError:
        return a.strip() == b.strip()


@dataclass
class WriteConfig:
    """Merged settings, remembering which source gave each key."""

    props: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, table_props: Mapping[str, str] | None = None, props_file: str | None = None,
             overrides: Sequence[str] | Mapping[str, object] = (), *,
             names: SettingNames = CLI_NAMES) -> WriteConfig:
        """`overrides` as `key=value` strings (the command line) or a mapping of Python values (the API);
        `names` says what the face calls the sources in messages."""
        config = cls()
        config.update(table_props or {}, TABLE_SOURCE)
        if props_file:
            config.update(read_props_file(props_file, names.props_file), f"{names.props_file} {props_file}")
        values = conf_text(overrides, names.overrides) if isinstance(overrides, Mapping) else \
            parse_overrides(overrides)
        config.update(values, names.overrides)
        return config

    def update(self, values: Mapping[str, str], source: str) -> None:
        """Apply one source over the earlier ones: a setting it names, by any of its names, is its."""
        check_source(values, source)
        names = declared()
        for key in values:
            option = names.get(key)
            for other in option.names if option is not None else ():
                if other not in values:
                    self.props.pop(other, None)
                    self.sources.pop(other, None)
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

    def name(self, option: ConfigOption) -> str:
        """The name the option is set under (its key when unset)."""
        found = self._find(option)
        return found[0] if found is not None else option.key

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
