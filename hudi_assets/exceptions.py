"""Domain errors. Every error names the table or file it concerns and what was wrong with it.

The command line maps `HudiInputError` (bad input, refused table, unsafe plan) to exit code 2 and
any other `HudiAssetsError` (a failure while working, a busy table: retry later) to exit code 1.
"""

from __future__ import annotations


class HudiAssetsError(Exception):
    """Base of every error this package raises on purpose."""


class HudiInputError(HudiAssetsError):
    """The input is bad or refused: nothing was written or deleted."""


class TableNotFoundError(HudiInputError):
    """The base path does not exist or holds no `.hoodie/hoodie.properties`."""


class UnsupportedTableError(HudiInputError):
    """The table is of a version or kind we refuse to touch (for example table version 8)."""


class CorruptFileError(HudiInputError):
    """A file of the table cannot be decoded; `path` names it and `problem` says why."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class PathOutsideTableError(HudiInputError):
    """A path resolves outside the table's base path; refused before any I/O."""


class InvalidConfigError(HudiInputError):
    """A configuration value is missing, malformed or contradicts another."""


class UnsafePlanError(HudiInputError):
    """A pending plan would delete a file a reader still needs; refused whole, nothing deleted.

    `plan_file` names the plan's state file and `path` the first offending path."""

    def __init__(self, plan_file: str, path: str, problem: str, hint: str = ""):
        super().__init__(f"{plan_file}: unsafe plan: {path}: {problem}" + (f". {hint}" if hint else ""))
        self.plan_file = plan_file
        self.path = path
        self.problem = problem


class CleanAbortedError(HudiAssetsError):
    """The timeline changed under a clean plan so that its deletes are unsafe; nothing was deleted."""


class ArchiveMergeError(HudiAssetsError):
    """Merging small archive files stopped on a file it could not read; the sources were kept and the
    merge plan removed. The message says what the run did before that."""


class StorageError(HudiAssetsError):
    """A file could not be written (permission, disk full, unreachable store); nothing half-written
    is left behind."""


class MetadataTableNotFoundError(HudiInputError):
    """The table has no (usable) metadata table."""


class TableBusyError(HudiAssetsError):
    """Another run holds the table's maintenance lock: nothing was changed; retry later."""


class DeleteFailedError(HudiAssetsError):
    """Files could not be deleted; `paths` names them. The work that could be done was recorded."""

    def __init__(self, message: str, paths: list[str]):
        super().__init__(message)
        self.paths = paths


class MissingExtraError(HudiInputError, ImportError):
    """A feature needs an optional dependency that is not installed; the message names the extra
    that brings it. Raised before anything is written, so it is input (exit 2) and an ImportError."""
