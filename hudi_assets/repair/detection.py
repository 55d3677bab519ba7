"""Which data files no commit owns, as Hudi's repair tool finds them, made safe for merge-on-read.

Ownership (which completed write or rollback names a file) is judged by `hudi_assets.ownership`, the
rule the metadata table's validation shares. A candidate is then held back (never touched) by the
guards Hudi lacks: a live heartbeat, markers or a pending plan naming it, a pending write that may own
a log file, the metadata table listing it, a savepoint, its age, and the canonical-path rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hudi_assets.exceptions import PathOutsideTableError
from hudi_assets.fsview import FileSystemView, LogFile, checksum_guarded, discover_partitions
from hudi_assets.ownership import APPENDING_ACTIONS, Candidate, Ownership, pending_appender
from hudi_assets.repair.quarantine import Orphan
from hudi_assets.storage import DirectoryListing
from hudi_assets.table_paths import data_file_problem, table_relative
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import CLEAN, COMPACTION, LOG_COMPACTION, ROLLBACK
from hudi_assets.timeline.timeline import COMMIT_ACTIONS

if TYPE_CHECKING:
    from hudi_assets.engine import Engine
    from hudi_assets.table import HoodieTable


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
        guarded = checksum_guarded(candidate.path.rpartition("/")[2])
        if candidate.path in self.named_by_pending or guarded in self.named_by_pending:
            return "a pending write's markers or a pending plan name it"
        if guarded in self.savepointed:
            return "a savepoint lists it"
        appender = pending_appender(guarded, self.appenders)
        if appender is not None:
            return (f"the pending write {appender} may have appended it (a log file carries its "
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
    return Protection(ownership.appenders, frozenset(named), view.savepointed_files)


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
    that completed listing one, or started on its instant or (for a log file named by its slice's
    base instant, table version 6) after that instant, since the run read the timeline. Path -> why."""
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
        log = None if ownership.logs_named_by_writer else LogFile.parse(o.path.rpartition("/")[2])
        if o.path in listed:
            changed[o.path] = "a write that completed during the run lists it"
        elif any(t == o.instant or (log is not None and action in APPENDING_ACTIONS
                                    and t >= log.base_instant) for t, action in started):
            changed[o.path] = "a write that started during the run may own it"
    return changed
