"""Findings: what a check of the settings found, as data every face renders with the same wording.

Severity is decided once, where the rule is (`config_options.check`): an ERROR refuses the operation in
every face; a WARN refuses only where a face says so (`--strict`, `strict=True`, or a documented policy
of the face, as the Dagster face's on `retained_below_keep_min`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from hudi_assets.exceptions import InvalidConfigError


class Severity(Enum):
    ERROR = "ERROR"
    WARN = "WARN"


@dataclass(frozen=True)
class Finding:
    """One rule's verdict: `message` names the settings with their values and sources; `keys` are the
    names as set (or the keys, for defaults)."""

    rule: str
    severity: Severity
    message: str
    keys: tuple[str, ...]


def refused(findings: Iterable[Finding], strict: bool = False) -> list[Finding]:
    """The findings that refuse: every ERROR, and every WARN too when `strict`."""
    return [f for f in findings if strict or f.severity is Severity.ERROR]


class SettingsRefusedError(InvalidConfigError):
    """The settings were refused (exit 2): the message is the refusing findings' messages in one line,
    a WARN marked as refused by the strict switch named `strict_name`."""

    def __init__(self, findings: Sequence[Finding], strict_name: str = "strict"):
        super().__init__("; ".join(f.message if f.severity is Severity.ERROR
                                   else f"{f.message} (a warning, refused by {strict_name})"
                                   for f in findings))
        self.findings = list(findings)


def raise_if_refused(findings: Sequence[Finding], strict: bool = False, strict_name: str = "strict") -> None:
    refusing = refused(findings, strict)
    if refusing:
        raise SettingsRefusedError(refusing, strict_name)
