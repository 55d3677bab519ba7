"""Write config: the `hoodie.*` settings maintenance reads, from every source, with Hudi's precedence.

Sources, lowest precedence first: the table's `hoodie.properties`, a properties file (`--props`), and
`key=value` overrides (`--hoodie-conf`), as in Hudi's utilities. Typed getters accept Hudi's
alternative key names (1.x renames such as `hoodie.clean.commits.retained`) and raise one clear
`InvalidConfigError` naming the key, the bad value and where it came from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.properties import parse_properties

TABLE_SOURCE = "hoodie.properties"
OVERRIDE_SOURCE = "--hoodie-conf"


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

    def find(self, key: str, alternatives: Sequence[str] = ()) -> tuple[str, str] | None:
        """(key actually set, its value) for `key` or the first alternative set, else None."""
        for name in (key, *alternatives):
            if name in self.props:
                return name, self.props[name]
        return None

    def is_set(self, key: str, alternatives: Sequence[str] = ()) -> bool:
        return self.find(key, alternatives) is not None

    def _invalid(self, name: str, value: str, expected: str) -> InvalidConfigError:
        source = self.sources.get(name, "default")
        return InvalidConfigError(f"{name}={value!r} (from {source}): expected {expected}")

    def get_str(self, key: str, default: str, alternatives: Sequence[str] = ()) -> str:
        found = self.find(key, alternatives)
        return default if found is None else found[1]

    def get_int(self, key: str, default: int, alternatives: Sequence[str] = (),
                minimum: int | None = None) -> int:
        found = self.find(key, alternatives)
        if found is None:
            return default
        name, value = found
        try:
            number = int(value.strip())
        except ValueError:
            raise self._invalid(name, value, "an integer") from None
        if minimum is not None and number < minimum:
            raise self._invalid(name, value, f"an integer >= {minimum}")
        return number

    def get_bool(self, key: str, default: bool, alternatives: Sequence[str] = ()) -> bool:
        found = self.find(key, alternatives)
        if found is None:
            return default
        name, value = found
        lowered = value.strip().lower()
        if lowered not in ("true", "false"):
            raise self._invalid(name, value, "true or false")
        return lowered == "true"

    def get_enum(self, key: str, default: str, choices: Sequence[str],
                 alternatives: Sequence[str] = ()) -> str:
        """An enum name, matched case-insensitively as Hudi's config enums are."""
        found = self.find(key, alternatives)
        if found is None:
            return default
        name, value = found
        upper = value.strip().upper()
        if upper not in choices:
            raise self._invalid(name, value, f"one of {', '.join(choices)}")
        return upper
