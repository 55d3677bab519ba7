"""Which data files no commit owns, as Hudi's repair tool finds them, made safe for merge-on-read.

Hudi (`RepairUtils.findInstantFilesToRemove`, apache/hudi 026a064, behind `HoodieRepairTool` and the
`repair_orphan_files` procedure) tags each data file with the instant in its name, skips instants
still requested or inflight, and removes a completed instant's files its write stats do not list, and
every file of an instant neither timeline knows. On table version 6 a log file's name carries its
slice's *base* instant, not the deltacommit that wrote it, so per-instant matching would take every
log file for an orphan: here a file is owned when any completed write, active or archived, lists it,
or a completed rollback names it (a failed block and the command block voiding it stay together).
A failed append no rollback names is an orphan: Hudi 0.15 rolls back an APPEND marker naming the
slice's base file (pre-HUDI-1517 writers) by logging out the slice's *latest* log file, which a later
deltacommit may have written; the failed file's block is still voided by the command block's instant.

A candidate is then held back (never touched) by the guards Hudi lacks: a live heartbeat, markers or
a pending plan naming it, a pending write that may own a log file, the metadata table listing it, a
savepoint, its age, and the canonical-path rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from hudi_assets.exceptions import CorruptFileError, HudiInputError, PathOutsideTableError
from hudi_assets.fsview import FileSystemView, LogFile, discover_partitions, is_checksum_file
from hudi_assets.repair.quarantine import Orphan
from hudi_assets.storage import DirectoryListing
from hudi_assets.table_paths import data_file_problem, table_relative, written_instant
from hudi_assets.timeline import metadata
from hudi_assets.timeline.archived import ArchivedTimeline
from hudi_assets.timeline.instant import (
    CLEAN,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    ROLLBACK,
)
from hudi_assets.timeline.timeline import COMMIT_ACTIONS

if TYPE_CHECKING:
    from hudi_assets.engine import Engine
    from hudi_assets.table import HoodieTable


@dataclass(frozen=True, slots=True)
class Candidate:
    """A data file of a partition whose instant says it may be an orphan, and why."""

    path: str
    instant: str
    reason: str


@dataclass(frozen=True, slots=True)
class Ownership:
    """What both timelines say about data files: every path a completed write lists, the completed
    instants (action by time; `silent`: completed writes that list no file), the instants still
    pending, and the oldest instant known."""

    owned: frozenset[str]
    completed: dict[str, str]
    silent: frozenset[str]
    pending: dict[str, str]
    oldest: str | None

    def judge(self, rel: str, base_extension: str) -> Candidate | None:
        """The candidate `rel` is, or None when a commit owns it or Hudi would leave it alone.

        Raises `HudiInputError` for a file older than both timelines: nothing says whether it was
        committed (its commit was archived and the archive lost, or it predates the table)."""
        partition, _, name = rel.rpartition("/")
        owner = f"{partition}/{name[1:-4]}" if partition else name[1:-4]
        if rel in self.owned or (is_checksum_file(name) and owner in self.owned):
            return None
        instant = written_instant(name, base_extension)
        if instant is None or instant in self.pending:
            return None
        action = self.completed.get(instant)
        if action is not None:
            # Hudi skips a completed instant without write stats (a clean, a rollback, an empty commit).
            if action not in COMMIT_ACTIONS or instant in self.silent:
                return None
            if LogFile.parse(name[1:-4] if is_checksum_file(name) else name) is not None:
                # any deltacommit since the slice's base instant may have written it, not that instant
                return Candidate(rel, instant, "no completed write or rollback lists this log file of "
                                               f"the slice at {action} {instant}")
            return Candidate(rel, instant, f"not listed by the completed {action} {instant}")
        if self.oldest is None or instant < self.oldest:
            raise HudiInputError(
                f"{rel}: written at instant {instant}, older than every instant the active and archived "
                f"timelines know (oldest: {self.oldest or 'none'}); whether it was committed cannot be "
                "told, so nothing was moved")
        return Candidate(rel, instant, f"instant {instant} is on neither timeline (a failed write)")


def load_ownership(table: HoodieTable) -> Ownership:
    """Read the active timeline and the whole archived timeline once. A missing archive folder (Hudi
    creates it with the table) or an unreadable archive file refuses the run. On an object store a
    folder is no object, so an absent one is an empty archive there (files older than the active
    timeline are still refused, by `Ownership.judge`)."""
    folder = table.config.archive_folder
    status = table.storage.status(folder)
    if table.storage.is_local and (status is None or not status.is_dir):
        raise HudiInputError(f"{table.storage.uri(folder)}: the archived timeline is missing; without it "
                             "files of archived commits would look like orphans")
    listed: dict[str, list[str]] = {}
    completed: dict[str, str] = {}
    active = table.reload_timeline()
    try:
        for entry in ArchivedTimeline.load(table).entries():
            instant = entry.instant
            if instant.is_completed:
                completed[instant.timestamp] = instant.action
                listed[instant.timestamp] = [*(_rollback_paths if instant.action == ROLLBACK
                                               else _archived_paths)(entry.payload)]
    except CorruptFileError as exc:
        raise HudiInputError(f"the archived timeline is unreadable: {exc}") from exc
    pending: dict[str, str] = {}
    for instant in active:
        if not instant.is_completed:
            pending[instant.timestamp] = instant.action
            continue
        completed[instant.timestamp] = instant.action
        if instant.action in COMMIT_ACTIONS:
            listed[instant.timestamp] = metadata.written_paths(active, instant)
        elif instant.action == ROLLBACK:
            listed[instant.timestamp] = [*_rollback_paths(metadata.completed_metadata(active, instant))]
    known = [*completed, *pending]
    silent = frozenset(t for t, action in completed.items() if action in COMMIT_ACTIONS and not listed.get(t))
    owned = frozenset(chain.from_iterable(listed.values()))
    return Ownership(owned, completed, silent, pending, min(known) if known else None)


def _archived_paths(payload: dict[str, Any] | None) -> Iterator[str]:
    """The paths an archived commit's Avro metadata lists in its write stats."""
    for stats in ((payload or {}).get("partitionToWriteStats") or {}).values():
        for stat in stats or []:
            if stat.get("path"):
                yield stat["path"]


def _rollback_paths(payload: dict[str, Any] | None) -> Iterator[str]:
    """The log files a completed rollback names: those it appended a command block to and those the
    failed commit wrote. They stay together: moving one without the other would change what a
    merge-on-read reader reads of the slice."""
    for stat in ((payload or {}).get("partitionMetadata") or {}).values():
        partition = stat.get("partitionPath") or ""
        for key in ("rollbackLogFiles", "logFilesFromFailedCommit"):
            for path in stat.get(key) or {}:
                name = path.rpartition("/")[2]
                yield f"{partition}/{name}" if partition else name


def _data_file_names(partition: str, _files: list[str], listing: DirectoryListing) -> list[str]:
    """A partition's file names, `.crc` sidecars included (they go with the file they guard)."""
    return listing.files


def list_data_files(table: HoodieTable, engine: Engine) -> Iterator[str]:
    """Every file directly inside a partition directory, as a path relative to the base path; the
    partitions are listed one engine task each (`fsview.discover_partitions`)."""
    for partition, names in discover_partitions(table.storage, engine, visit=_data_file_names):
        prefix = f"{partition}/" if partition else ""
        for name in names:
            yield prefix + name


@dataclass(frozen=True, slots=True)
class Protection:
    """What holds back a candidate beyond Hudi's rule; built once per run from the timeline."""

    appenders: tuple[str, ...]
    named_by_pending: frozenset[str]
    savepointed: frozenset[str]

    def reason(self, candidate: Candidate) -> str | None:
        name = candidate.path.rpartition("/")[2]
        guarded = name[1:-4] if is_checksum_file(name) else name
        if candidate.path in self.named_by_pending or guarded in self.named_by_pending:
            return "a pending write's markers or a pending plan name it"
        if guarded in self.savepointed:
            return "a savepoint lists it"
        log = LogFile.parse(guarded)
        if log is not None:
            later = [t for t in self.appenders if t >= log.base_instant]
            if later:
                return (f"the pending write {later[0]} may have appended it (a log file carries its "
                        "base instant, not its writer's)")
        return None


def load_protection(table: HoodieTable, ownership: Ownership) -> Protection:
    """Names the pending writes' markers and every pending plan hold (compaction, clustering, clean,
    rollback), the savepointed files, and the pending writes that append to log files."""
    from hudi_assets.rollback.markers import read_markers

    active = table.active_timeline
    view = FileSystemView(table)
    named: set[str] = set(view.pending_plan_files)
    pending_writes = sorted(t for t, action in ownership.pending.items()
                            if action in COMMIT_ACTIONS | {COMPACTION, LOG_COMPACTION})
    for t in pending_writes:
        named.update(m.file_path for m in read_markers(table.storage, t) or [])
    for instant in active.filter_actions({CLEAN, ROLLBACK}).filter_pending():
        named.update(_plan_names(metadata.requested_plan(active, instant)))
    appenders = tuple(t for t in pending_writes if ownership.pending[t] in (DELTA_COMMIT, LOG_COMPACTION))
    return Protection(appenders, frozenset(named), view.savepointed_files)


def _plan_names(plan: dict[str, Any] | None) -> Iterable[str]:
    """Every file name a clean or rollback plan names (a name matches in any partition: safe side)."""
    plan = plan or {}
    for names in (plan.get("filesToBeDeletedPerPartition") or {}).values():
        yield from names or []
    for infos in (plan.get("filePathsToBeDeletedPerPartition") or {}).values():
        yield from (info["filePath"].rpartition("/")[2] for info in infos or [] if info.get("filePath"))
    for request in plan.get("RollbackRequests") or []:
        yield from (p.rpartition("/")[2] for p in request.get("filesToBeDeleted") or [])
        yield from (p.rpartition("/")[2] for p in request.get("logBlocksToBeDeleted") or {})


def path_problem(table: HoodieTable, rel: str, resolved: dict[str, str]) -> str | None:
    """The canonical-path rule: a data file directly inside a partition, inside the base path."""
    try:
        canonical = table_relative(table.storage, rel, resolved_dirs=resolved)
    except PathOutsideTableError as exc:
        return str(exc)
    if canonical != rel:
        return f"its canonical path is {canonical}"
    return data_file_problem(rel)


def changed_since(table: HoodieTable, ownership: Ownership, orphans: Iterable[Orphan]) -> dict[str, str]:
    """Orphans the timeline, read again just before the first move, no longer leaves alone: a write
    that completed listing one, or started on its instant or (for a log file) after its base instant,
    since the run read the timeline. Path -> why."""
    active = table.reload_timeline()
    listed: set[str] = set()
    started: list[tuple[str, str]] = []
    for instant in active:
        if instant.is_completed and instant.timestamp not in ownership.completed:
            if instant.action in COMMIT_ACTIONS:
                listed.update(metadata.written_paths(active, instant))
        elif not instant.is_completed and instant.timestamp not in ownership.pending:
            started.append((instant.timestamp, instant.action))
    changed = {}
    for o in orphans:
        log = LogFile.parse(o.path.rpartition("/")[2])
        if o.path in listed:
            changed[o.path] = "a write that completed during the run lists it"
        elif any(t == o.instant or (log is not None and action in (DELTA_COMMIT, LOG_COMPACTION)
                                    and t >= log.base_instant) for t, action in started):
            changed[o.path] = "a write that started during the run may own it"
    return changed
