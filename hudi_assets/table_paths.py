"""One rule for every path a plan, a marker or our own code is about to delete.

`table_relative` turns each form a path arrives in (relative to the base path, absolute, a URI of
the table's store, with `..` segments, through symbolic links on local storage) into one
normalised path relative to the base path, or refuses it. Hudi writes Hive-style partition values
without URL encoding, so a path is a file-system path: `#`, `?`, `%`, `=`, spaces and non-ASCII
letters are characters of a name, never a query, a fragment or an escape.

On that one form the predicates decide per purpose what may go:
- a clean: data files directly inside a partition, and partition directories (`clean/validation.py`
  adds what only a listing and the timeline can tell: live file groups);
- a rollback: data files the failed instant wrote (the instant in the file name is the one rolled
  back, as Hudi's path filter reads it) inside a partition directory; never partition metadata,
  never anything under `.hoodie`;
- our own copies (discarded state files, quarantined orphans): only inside their folder under
  `.hoodie/.aux/hudi-assets/`.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

from hudi_assets.exceptions import PathOutsideTableError
from hudi_assets.fsview import PARTITION_METAFILE, LogFile, is_checksum_file
from hudi_assets.timeline.timeline import METAFOLDER

if TYPE_CHECKING:
    from hudi_assets.storage import Storage

AUX_FOLDER = f"{METAFOLDER}/.aux/hudi-assets"
DISCARDED_FOLDER = f"{AUX_FOLDER}/discarded"
QUARANTINE_FOLDER = f"{AUX_FOLDER}/quarantine"


def table_relative(storage: Storage, path: str, directory: bool = False,
                   resolved_dirs: dict[str, str] | None = None) -> str:
    """The canonical table-relative form of `path` ("" for the base path itself).

    Lexically: `Storage.relativize` (every spelling of the base, `..` normalised). On local storage
    the containing directory is then resolved (the whole path for a `directory`), symbolic links
    included, and must lie inside the resolved base path: a partition that is a link to a folder
    elsewhere is outside the table. A file that is itself a link is not followed: deleting it
    removes the link. Raises `PathOutsideTableError` for a path that lands outside the table.
    `resolved_dirs`: a caller's cache of resolved directories for one pass over many paths.
    """
    if "\0" in path:
        shown = path.replace("\0", "\\0")
        raise PathOutsideTableError(f"{shown}: contains a NUL byte")
    rel = storage.relativize(path)
    if not storage.is_local:
        return rel
    parent, _, name = rel.rpartition("/")
    real = _resolved_dir(storage, rel if directory else parent, resolved_dirs)
    resolved = f"{real.rstrip(os.sep)}{os.sep}{name}" if name and not directory else real
    real_base = _resolved_dir(storage, "", resolved_dirs)
    if resolved == real_base:
        return ""
    if not resolved.startswith(real_base.rstrip(os.sep) + os.sep):
        raise PathOutsideTableError(f"{path}: resolves outside the table base path {storage.base_uri} "
                                    f"(to {resolved})")
    return resolved[len(real_base.rstrip(os.sep)) + 1:].replace(os.sep, "/")


def _resolved_dir(storage: Storage, folder: str, resolved_dirs: dict[str, str] | None) -> str:
    """`folder` (relative to the base path; "" for the base path) with symbolic links resolved,
    through the caller's cache when there is one."""
    real = resolved_dirs.get(folder) if resolved_dirs is not None else None
    if real is None:
        real = os.path.realpath(os.path.join(storage.root, folder))
        if resolved_dirs is not None:
            resolved_dirs[folder] = real
    return real


def in_metafolder(rel: str) -> bool:
    """Under `.hoodie` (the timeline, the metadata table, markers, heartbeats, our own folders)."""
    return rel == METAFOLDER or rel.startswith(METAFOLDER + "/")


def is_partition_metafile(name: str) -> bool:
    """`.hoodie_partition_metadata` in any format: without it a partition is invisible to Hudi."""
    return name.startswith(PARTITION_METAFILE)


def is_normal(rel: str) -> bool:
    """A non-empty relative path that `posixpath.normpath` leaves as it is."""
    return bool(rel) and "\0" not in rel and not rel.startswith("/") and posixpath.normpath(rel) == rel


def partition_problem(rel: str) -> str | None:
    """Why a canonical path may not be a partition directory a clean deletes (None when it may)."""
    if not rel:
        return "the base path is not a partition"
    if in_metafolder(rel):
        return "lies under .hoodie"
    return None


def data_file_problem(rel: str) -> str | None:
    """Why a canonical path is no data file of a partition whatever the purpose (None when it may
    be one): not the base path, nothing under `.hoodie`, never partition metadata."""
    name = rel.rpartition("/")[2]
    if not name:
        return "is the base path, not a file"
    if in_metafolder(rel):
        return "lies under .hoodie"
    if is_partition_metafile(name):
        return "is partition metadata (without it the partition is invisible to readers)"
    return None


def written_instant(name: str, base_extension: str) -> str | None:
    """The instant a data file's name says wrote it, as Hudi's rollback path filter reads names: a
    name containing the base file extension -> `FSUtils.getCommitTime`; a log file -> the instant
    of the slice it belongs to; a Hadoop `.crc` sidecar -> that of the file it guards."""
    if is_checksum_file(name):  # `.<name>.crc`: Hadoop's checksum of the file it names
        return written_instant(name[1:-4], base_extension)
    log_file = LogFile.parse(name)
    if log_file is not None:
        return log_file.base_instant
    if base_extension in name:
        parts = name.split("_")
        return parts[2].split(".")[0] if len(parts) > 2 else None
    return None


def rollback_file_problem(rel: str, instant_time: str, base_extension: str) -> str | None:
    """Why a rollback of `instant_time` may not delete the canonical path `rel` (None when it may):
    only a data file that instant wrote. A log file of a slice another instant opened holds
    committed blocks: a rollback appends a command block to it, never deletes it."""
    if why := data_file_problem(rel):
        return why
    written = written_instant(rel.rpartition("/")[2], base_extension)
    if written is None:
        return "is not a data file of the table"
    if written != instant_time:
        return f"was written by instant {written}, not by the failed instant {instant_time}"
    return None


def aux_file_problem(rel: str, folder: str) -> str | None:
    """Why our own copy may not be written or deleted at `rel`: only a plain file directly inside
    `folder`, one of ours under `.hoodie/.aux/hudi-assets/`."""
    if not folder.startswith(AUX_FOLDER + "/") or not is_normal(folder):
        return f"{folder} is not a folder of hudi-assets under {AUX_FOLDER}"
    parent, _, name = rel.rpartition("/")
    if parent != folder or name in ("", ".", ".."):
        return f"is not a file directly inside {folder}"
    return None


def quarantine_file_problem(rel: str, run_folder: str) -> str | None:
    """Why a quarantined orphan may not be written, moved back or deleted at `rel`: only a data
    file's path (as `data_file_problem` allows it) under one quarantine run's folder."""
    parent, _, run = run_folder.rpartition("/")
    if parent != QUARANTINE_FOLDER or not run or not is_normal(run_folder):
        return f"{run_folder} is not a quarantine run folder under {QUARANTINE_FOLDER}"
    if not rel.startswith(run_folder + "/") or not is_normal(rel):
        return f"is not a file inside {run_folder}"
    return data_file_problem(rel[len(run_folder) + 1:])
