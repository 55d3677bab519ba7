"""`OrphanFileRepair`: find the data files no commit owns, and quarantine, restore, purge or delete
them; built once from (table, config, engine, clock) as the other table services are.

Every run that changes the table holds the table's lock throughout, and finishes any quarantine run an
earlier process left half-done before it plans anew. Every refusal (an unreadable archive, a file
older than both timelines, more orphans than `max_orphans`) comes before the first move or delete.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from hudi_assets.exceptions import DeleteFailedError, HudiInputError
from hudi_assets.fsview import checksum_guarded, is_checksum_file
from hudi_assets.heartbeat import HeartbeatConfig, is_heartbeat_expired
from hudi_assets.listener import QUIET, Listener, Step
from hudi_assets.ownership import Ownership, load_ownership
from hudi_assets.repair.config import OrphanConfig
from hudi_assets.repair.detection import changed_since, list_data_files, load_protection, path_problem
from hudi_assets.repair.quarantine import (
    MANIFEST,
    MOVED,
    UNDOING,
    Orphan,
    has_mark,
    holds_data_files,
    move_all,
    quarantined_path,
    read_manifest,
    run_folder,
    runs,
    set_mark,
    write_manifest,
)
from hudi_assets.table_config import PROPERTIES_FILE
from hudi_assets.timeline.instant_time import format_instant_time, parse_instant_time
from hudi_assets.transaction import table_lock

if TYPE_CHECKING:
    from hudi_assets.engine import Engine
    from hudi_assets.storage import Storage
    from hudi_assets.table import HoodieTable

OPERATION = "repair orphan files"
TIMELINE_READ_MARGIN_MS = 5_000  # a store's modification times against this clock


@dataclass(frozen=True, slots=True)
class Kept:
    """A file Hudi's rule would remove, held back by a guard (`reason`); never touched."""

    path: str
    instant: str
    reason: str


@dataclass(frozen=True)
class OrphanFilesResult:
    """One orphan-file run: what was found and what was done. `run` names the quarantine run (None
    for a dry run, a `--delete` run, or a run that found nothing); `deleted`: removed, not moved."""

    dry_run: bool
    orphans: tuple[Orphan, ...]
    kept: tuple[Kept, ...]
    run: str | None = None
    deleted: bool = False

    @property
    def total_bytes(self) -> int:
        return sum(o.size for o in self.orphans)

    def by_partition_instant(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(partition, instant) -> (files, bytes), sorted."""
        totals: dict[tuple[str, str], tuple[int, int]] = {}
        for o in self.orphans:
            files, size = totals.get((o.partition, o.instant), (0, 0))
            totals[(o.partition, o.instant)] = (files + 1, size + o.size)
        return dict(sorted(totals.items()))


@dataclass(frozen=True)
class UndoResult:
    run: str
    restored: tuple[str, ...]


@dataclass(frozen=True)
class PurgeResult:
    dry_run: bool
    runs: tuple[str, ...]
    files: int
    bytes: int


def _sidecars_with_their_files(orphans: list[Orphan], kept: list[Kept]) -> tuple[list[Orphan], list[Kept]]:
    """A `.crc` sidecar stays while the file it guards is kept: the two move together or not at all."""
    held = {k.path for k in kept}
    stays = [o for o in orphans if is_checksum_file(name := o.path.rpartition("/")[2])
             and f"{o.path.rpartition('/')[0]}/{checksum_guarded(name)}".lstrip("/") in held]
    if not stays:
        return orphans, kept
    return ([o for o in orphans if o not in stays],
            kept + [Kept(o.path, o.instant, "the file it guards is kept") for o in stays])


class OrphanFileRepair:
    """The orphan-file service of one table. `clock` returns epoch seconds (ages, run names);
    `listener` hears each step that changes storage (`Step.ORPHANS_*`, `Step.ORPHAN_MOVED`), where
    the crash tests kill the process."""

    def __init__(self, table: HoodieTable, config: OrphanConfig, engine: Engine,
                 clock: Callable[[], float] = time.time, listener: Listener = QUIET):
        table.config.check_service("orphan-file repair", table.storage.uri(PROPERTIES_FILE))
        self.table = table
        self.config = config
        self.engine = engine
        self.clock = clock
        self.listener = listener

    @classmethod
    def for_table(cls, table: HoodieTable, engine: Engine, min_age: timedelta | None = None,
                  max_orphans: int | None = None) -> OrphanFileRepair:
        """The service with the table's settings (the guards checked against them) and these limits."""
        return cls(table, OrphanConfig.from_write_config(table.write_config, min_age, max_orphans), engine)

    @property
    def storage(self) -> Storage:
        return self.table.storage

    # ------------------------------------------------------------ detection
    def plan(self) -> OrphanFilesResult:
        """The dry run: every orphan with its reason, every held-back candidate with its guard."""
        return self._plan()[0]

    def _plan(self) -> tuple[OrphanFilesResult, Ownership]:
        base_extension = self.table.config.base_file_extension
        # A file written after the timeline was read may belong to an instant this read does not know
        # (a live writer's next deltacommit appending a log file): no age setting makes it judgeable.
        read_ms = int(self.clock() * 1000) - TIMELINE_READ_MARGIN_MS
        ownership = load_ownership(self.table)
        candidates = [c for rel in list_data_files(self.table, self.engine)
                      if (c := ownership.judge(rel, base_extension)) is not None]
        protection = load_protection(self.table, ownership)
        listed = self._metadata_listed({c.path.rpartition("/")[0] for c in candidates})
        heartbeat = HeartbeatConfig.from_write_config(self.table.write_config)
        now_ms = int(self.clock() * 1000)
        youngest_ms = now_ms - int(self.config.min_age.total_seconds() * 1000)
        live: dict[str, bool] = {}
        resolved: dict[str, str] = {}
        orphans: list[Orphan] = []
        kept: list[Kept] = []
        for c in candidates:
            status = self.storage.status(c.path)
            if status is None:
                continue  # gone since the listing
            if c.instant not in live:
                live[c.instant] = not is_heartbeat_expired(self.storage, c.instant, heartbeat, now_ms)
            why = (protection.reason(c) or path_problem(self.table, c.path, resolved)
                   or ("the metadata table lists it" if c.path in listed else None)
                   or (f"instant {c.instant} has a live heartbeat" if live[c.instant] else None)
                   or (f"younger than the minimum age {self.config.min_age}"
                       if status.mtime_ms > youngest_ms else None)
                   or ("written after the timeline was read" if status.mtime_ms >= read_ms else None))
            if why:
                kept.append(Kept(c.path, c.instant, why))
            else:
                orphans.append(Orphan(c.path, status.size, c.instant, c.reason))
        orphans, kept = _sidecars_with_their_files(orphans, kept)
        if len(orphans) > self.config.max_orphans:
            raise HudiInputError(f"{self.table.base_path}: {len(orphans)} orphan files found, more than "
                                 f"the maximum of {self.config.max_orphans}; nothing was moved (raise the "
                                 "maximum once the list is checked)")
        return OrphanFilesResult(True, tuple(orphans), tuple(kept)), ownership

    def _planned(self) -> OrphanFilesResult:
        """The plan of a run that changes storage, under the lock: interrupted runs finished first,
        and the timeline read again at the end, so that a write that completed or started meanwhile
        keeps its files."""
        self.resume()
        found, ownership = self._plan()
        changed = changed_since(self.table, ownership, found.orphans)
        if not changed:
            return replace(found, dry_run=False)
        return replace(found, dry_run=False, orphans=tuple(o for o in found.orphans if o.path not in changed),
                       kept=found.kept + tuple(Kept(p, "", why) for p, why in changed.items()))

    def _metadata_listed(self, partitions: set[str]) -> frozenset[str]:
        """Paths the metadata table lists in `partitions` (none without a files partition)."""
        from hudi_assets.metadata.table import listing_metadata_table

        if not partitions:
            return frozenset()
        mdt = listing_metadata_table(self.storage, self.table.config, enabled=True)
        if mdt is None:
            return frozenset()
        listing = mdt.files_in_partitions(sorted(partitions))
        return frozenset(f"{p}/{name}" if p else name for p, files in listing.items() for name in files)

    # ------------------------------------------------------------ changes
    def quarantine(self) -> OrphanFilesResult:
        """Move every orphan into a new quarantine run, its manifest written first."""
        with table_lock(self.table, OPERATION):
            found = self._planned()
            if not found.orphans:
                return found
            run = self._new_run()
            moves = [(o.path, quarantined_path(run, o.path)) for o in found.orphans]
            write_manifest(self.storage, run, found.orphans)
            self.listener.reached(Step.ORPHANS_MANIFEST_WRITTEN)
            move_all(self.storage, moves, self.listener)
            set_mark(self.storage, run, MOVED)
            return replace(found, run=run)

    def delete(self) -> OrphanFilesResult:
        """Delete every orphan without a copy (Hudi's tool without a backup path)."""
        with table_lock(self.table, OPERATION):
            found = self._planned()
            result = self.storage.delete_many([o.path for o in found.orphans])
            if result.failed:
                raise DeleteFailedError(f"{len(result.failed)} orphan files could not be deleted",
                                        list(result.failed))
            return replace(found, deleted=True)

    def undo(self, run: str) -> UndoResult:
        """Move a quarantine run's files back where they were, then drop the run."""
        with table_lock(self.table, OPERATION):
            return self._undo(run)

    def _undo(self, run: str) -> UndoResult:
        orphans = read_manifest(self.storage, run)
        moves = [(quarantined_path(run, o.path), o.path) for o in orphans]
        set_mark(self.storage, run, UNDOING)
        self.listener.reached(Step.ORPHANS_UNDO_MARKED)
        move_all(self.storage, moves, self.listener)
        self.storage.delete_dir(run_folder(run))
        return UndoResult(run, tuple(o.path for o in orphans))

    def purge(self, quarantined_before: timedelta, dry_run: bool = False) -> PurgeResult:
        """Delete the quarantine runs older than `quarantined_before` (by their run instant)."""
        with table_lock(self.table, OPERATION):
            self.resume()
            cutoff = datetime.fromtimestamp(self.clock()) - quarantined_before
            old = [r for r in runs(self.storage)
                   if (at := parse_instant_time(r)) is not None and at <= cutoff]
            files = size = 0
            for run in old:
                if not has_mark(self.storage, run, MANIFEST):  # a purge killed after the manifest went
                    self.storage.delete_dir(run_folder(run))
                    continue
                orphans = read_manifest(self.storage, run)
                files += len(orphans)
                size += sum(o.size for o in orphans)
                if not dry_run:
                    self.storage.delete_many([quarantined_path(run, o.path) for o in orphans])
                    self.listener.reached(Step.ORPHANS_PURGED)
                    self.storage.delete_dir(run_folder(run))
            return PurgeResult(dry_run, tuple(old), files, size)

    def resume(self) -> list[str]:
        """Finish the quarantine runs and undos a killed process left half-done; returns their runs."""
        finished = []
        with table_lock(self.table, OPERATION):
            for run in runs(self.storage):
                if not has_mark(self.storage, run, MANIFEST) and (
                        has_mark(self.storage, run, UNDOING) or not holds_data_files(self.storage, run)):
                    # an undo killed while dropping its run, or a run killed before its manifest
                    self.storage.delete_dir(run_folder(run))
                elif has_mark(self.storage, run, UNDOING):
                    self._undo(run)
                elif not has_mark(self.storage, run, MOVED):
                    orphans = read_manifest(self.storage, run)
                    move_all(self.storage, [(o.path, quarantined_path(run, o.path)) for o in orphans],
                             self.listener)
                    set_mark(self.storage, run, MOVED)
                else:
                    continue
                finished.append(run)
        return finished

    def _new_run(self) -> str:
        """A run name: the instant time now, made unique among the runs present."""
        taken = set(runs(self.storage))
        moment = datetime.fromtimestamp(self.clock())
        while (run := format_instant_time(moment)) in taken:
            moment += timedelta(milliseconds=1)
        return run

