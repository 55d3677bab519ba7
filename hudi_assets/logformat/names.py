"""Log file names: `.<fileId>_<baseInstant>.log.<version>_<writeToken>` (MOR logs) and the archived
timeline's `.commits_.archive.<N>_<writeToken>` (hudi-format.md section 3, Hudi's `FSUtils`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# re.ASCII: Java's \d is [0-9]; Python's would also take other scripts' digits.
LOG_FILE_PATTERN = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(.cdc)?)?", re.ASCII)
LOG_EXTENSION = "log"
ARCHIVE_EXTENSION = "archive"
CDC_SUFFIX = ".cdc"
# The token of writers that run outside a Spark task (rollback, archiver).
DEFAULT_WRITE_TOKEN = "1-0-1"


@dataclass(frozen=True)
class LogFileName:
    """The parts of a log file name; `extension` is `log` or `archive` (no dot)."""

    file_id: str
    base_instant: str
    extension: str
    version: int
    write_token: str | None
    is_cdc: bool = False

    def __post_init__(self) -> None:
        if self.extension not in (LOG_EXTENSION, ARCHIVE_EXTENSION):
            raise ValueError(f"log file extension must be 'log' or 'archive', not {self.extension!r}")
        if self.is_cdc and not self.write_token:
            raise ValueError("a CDC log file name needs a write token")

    @classmethod
    def parse(cls, name: str) -> LogFileName | None:
        """Parse a bare file name; None when it is not a log file name.

        Like Hudi (`Matcher.find` with an anchored pattern), text after the match is ignored, and the
        CDC suffix matches any character before `cdc` (older builds wrote `-cdc`).
        """
        match = LOG_FILE_PATTERN.match(name)
        if match is None:
            return None
        return cls(match[1], match[2], match[3], int(match[4]), match[6], match[10] is not None)

    def format(self) -> str:
        """The file name, as Hudi's `FSUtils.makeLogFileName` (plus the CDC suffix) builds it."""
        token = f"_{self.write_token}" if self.write_token else ""
        cdc = CDC_SUFFIX if self.is_cdc else ""
        return f".{self.file_id}_{self.base_instant}.{self.extension}.{self.version}{token}{cdc}"
