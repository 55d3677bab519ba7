"""The quarantine: orphans moved aside, not deleted, with a manifest written before the first move.

A run's folder is `.hoodie/.aux/hudi-assets/quarantine/<run instant>/`; each orphan keeps its path
relative to the base path under it, and `_manifest.jsonl` holds one line per file (path, size,
reason, instant). Readers never list `.hoodie`. `_moved` marks a run whose moves all finished and
`_undo` one being moved back: a run killed half-way is finished by the next one from its manifest,
so every file is either in place or in the quarantine with its manifest line.

Locally a move is one rename; on an object store it is a copy, and the sources are then deleted in
batches (S3 DeleteObjects, `Storage.delete_many`). A copy already made is recognised by its size.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from hudi_assets.exceptions import CorruptFileError, DeleteFailedError, HudiInputError, StorageError
from hudi_assets.listener import QUIET, Listener, Step
from hudi_assets.storage import Storage
from hudi_assets.table_paths import QUARANTINE_FOLDER, quarantine_file_problem

MANIFEST = "_manifest.jsonl"
MOVED = "_moved"
UNDOING = "_undo"


@dataclass(frozen=True, slots=True)
class Orphan:
    """A data file no commit owns: path relative to the base path, size, the instant in its name."""

    path: str
    size: int
    instant: str
    reason: str

    @property
    def partition(self) -> str:
        return self.path.rpartition("/")[0]


def run_folder(run: str) -> str:
    return f"{QUARANTINE_FOLDER}/{run}"


def quarantined_path(run: str, rel: str) -> str:
    """Where `rel` lies while quarantined by `run`; refused unless a data file's path in the run."""
    folder = run_folder(run)
    path = f"{folder}/{rel}"
    if why := quarantine_file_problem(path, folder):
        raise HudiInputError(f"{path}: {why}")
    return path


def runs(storage: Storage) -> list[str]:
    """The quarantine runs present, oldest first."""
    return sorted(s.name for s in storage.list(QUARANTINE_FOLDER) if s.is_dir)


def write_manifest(storage: Storage, run: str, orphans: Iterable[Orphan]) -> None:
    lines = [json.dumps(asdict(o), sort_keys=True) for o in orphans]
    storage.write(f"{run_folder(run)}/{MANIFEST}", ("\n".join(lines) + "\n").encode())


def read_manifest(storage: Storage, run: str) -> list[Orphan]:
    """A run's manifest; an unknown run or a line that is not an orphan's record is refused."""
    path = f"{run_folder(run)}/{MANIFEST}"
    if not storage.exists(path):
        raise HudiInputError(f"{storage.uri(run_folder(run))}: no quarantine run {run!r} (no {MANIFEST}); "
                             f"runs: {', '.join(runs(storage)) or 'none'}")
    orphans = []
    for number, line in enumerate(storage.read(path).decode().splitlines(), 1):
        if not line.strip():
            continue
        try:
            orphans.append(Orphan(**json.loads(line)))
        except (ValueError, TypeError) as exc:
            raise CorruptFileError(f"{storage.uri(path)}, line {number}",
                                   f"not a manifest record ({exc})") from None
    return orphans


def holds_data_files(storage: Storage, run: str) -> bool:
    """Whether a run's folder holds anything but our own marks and a temporary copy of one (a state
    file is written aside, `.tmp-*`, then renamed: a kill in between leaves the copy)."""
    ours = (MANIFEST, MOVED, UNDOING, ".tmp-")
    return any(not s.is_dir and not s.name.startswith(ours)
               for s in storage.list(run_folder(run), recursive=True))


def has_mark(storage: Storage, run: str, mark: str) -> bool:
    return storage.exists(f"{run_folder(run)}/{mark}")


def set_mark(storage: Storage, run: str, mark: str) -> None:
    storage.write(f"{run_folder(run)}/{mark}", b"")


def move_all(storage: Storage, moves: list[tuple[str, str]], listener: Listener = QUIET) -> int:
    """Move each (source, destination), both relative to the base path; a source already gone was
    moved by an earlier, interrupted call. The listener hears `ORPHAN_MOVED` after each file.
    Returns how many files moved now."""
    sources_copied: list[str] = []
    moved = 0
    for source, target in moves:
        status = storage.status(source)
        if status is None:
            continue
        storage.mkdirs(target.rpartition("/")[0])
        held = storage.status(target)
        if held is not None and held.size != status.size:
            raise StorageError(f"{storage.uri(target)}: exists with {held.size} bytes, but "
                               f"{storage.uri(source)} has {status.size}; moved nothing over it")
        if storage.is_local and held is None:
            os.rename(f"{storage.root}/{source}", f"{storage.root}/{target}")
        else:
            if held is None:
                storage.fs.copy_file(f"{storage.root}/{source}", f"{storage.root}/{target}")
            sources_copied.append(source)
        moved += 1
        listener.reached(Step.ORPHAN_MOVED, moved)
    if sources_copied:
        result = storage.delete_many(sources_copied)
        if result.failed:
            raise DeleteFailedError(f"{len(result.failed)} copied files could not be removed from their "
                                    "place; the next run finishes the move", list(result.failed))
    return moved
