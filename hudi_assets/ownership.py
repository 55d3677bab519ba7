"""Which write owns a data file: the rule orphan repair (`repair/detection.py`) and the metadata
table's validation (`metadata/validate.py`) share.

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

On table versions 8 and 9 (Hudi 1.x) a log file is named by the deltacommit that wrote it, so it is
judged by its instant as a base file is; the archived timeline is the LSM history, whose rows hold
the completed instants' metadata, and rollbacks only delete (no command blocks to keep together).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hudi_assets.exceptions import CorruptFileError, HudiInputError
from hudi_assets.fsview import LogFile, checksum_guarded
from hudi_assets.table_paths import written_instant
from hudi_assets.timeline import metadata
from hudi_assets.timeline.archived_details import archived_completed
from hudi_assets.timeline.commit_metadata import write_stat_paths
from hudi_assets.timeline.instant import DELTA_COMMIT, LOG_COMPACTION, ROLLBACK
from hudi_assets.timeline.timeline import COMMIT_ACTIONS, ActiveTimeline

if TYPE_CHECKING:
    from hudi_assets.table import HoodieTable

APPENDING_ACTIONS = (DELTA_COMMIT, LOG_COMPACTION)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A data file of a partition whose instant says it may be an orphan, and why."""

    path: str
    instant: str
    reason: str


@dataclass(frozen=True, slots=True)
class Ownership:
    """What both timelines say about data files: every path a completed write lists (with the
    instant listing it) and every path a completed rollback names, the completed instants (action by
    time; `silent`: completed writes that list no file), the instants still pending, and the oldest
    instant known. `logs_named_by_writer`: log files carry the instant of the write that appended
    them (Hudi 1.x), not their slice's base instant."""

    written: Mapping[str, str]
    rolled_back: frozenset[str]
    completed: dict[str, str]
    silent: frozenset[str]
    pending: dict[str, str]
    oldest: str | None
    logs_named_by_writer: bool = False

    @property
    def owned(self) -> frozenset[str]:
        return frozenset(self.written) | self.rolled_back

    @property
    def appenders(self) -> tuple[str, ...]:
        return appending_writes(self.pending, self.logs_named_by_writer)

    def judge(self, rel: str, base_extension: str) -> Candidate | None:
        """The candidate `rel` is, or None when a commit owns it or Hudi would leave it alone.

        Raises `HudiInputError` for a file older than both timelines: nothing says whether it was
        committed (its commit was archived and the archive lost, or it predates the table)."""
        partition, _, name = rel.rpartition("/")
        guarded = checksum_guarded(name)
        owner = f"{partition}/{guarded}" if partition else guarded  # rel itself unless a `.crc` sidecar
        if rel in self.written or rel in self.rolled_back or \
                owner in self.written or owner in self.rolled_back:
            return None
        instant = written_instant(name, base_extension)
        if instant is None or instant in self.pending:
            return None
        action = self.completed.get(instant)
        if action is not None:
            # Hudi skips a completed instant without write stats (a clean, a rollback, an empty commit).
            if action not in COMMIT_ACTIONS or instant in self.silent:
                return None
            if not self.logs_named_by_writer and LogFile.parse(guarded) is not None:
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


def appending_writes(pending: Mapping[str, str], logs_named_by_writer: bool) -> tuple[str, ...]:
    """The pending writes (action by time) that may have appended to a log file of an older instant,
    oldest first: none when log files are named by their writer (Hudi 1.x: each deltacommit writes
    new log files named by its own instant, so a pending write's files carry its instant)."""
    if logs_named_by_writer:
        return ()
    return tuple(sorted(t for t, action in pending.items() if action in APPENDING_ACTIONS))


def pending_appender(name: str, appenders: tuple[str, ...]) -> str | None:
    """The oldest of `appenders` (pending appending writes, oldest first) that may have written the
    log file `name`: a log file carries its slice's base instant, not its writer's, and any write
    since that instant may append to the slice. None for a base file or when none may have."""
    log = LogFile.parse(name)
    if log is None:
        return None
    return next((t for t in appenders if t >= log.base_instant), None)


def load_ownership(table: HoodieTable, active: ActiveTimeline | None = None) -> Ownership:
    """Read the active timeline (`active` when given: a snapshot the caller already judges by) and the
    whole archived timeline once. A missing archive folder of layout 1 (Hudi creates it with the
    table) or an unreadable archive file refuses the run. On an object store a folder is no object,
    so an absent one is an empty archive there, as layout 2's history folder is everywhere (Hudi 1.x
    creates it at the first archival); files older than the active timeline are still refused, by
    `Ownership.judge`."""
    folder = table.config.archive_folder
    status = table.storage.status(folder)
    missing = status is None or not status.is_dir
    if table.timeline_layout.version == 1 and table.storage.is_local and missing:
        raise HudiInputError(f"{table.storage.uri(folder)}: the archived timeline is missing; without it "
                             "files of archived commits would look like orphans")
    written: dict[str, str] = {}
    rolled_back: set[str] = set()
    completed: dict[str, str] = {}
    listing: set[str] = set()
    active = active if active is not None else table.reload_timeline()
    try:
        for instant, payload in archived_completed(table, COMMIT_ACTIONS | {ROLLBACK}):
            completed[instant.timestamp] = instant.action
            if instant.action == ROLLBACK:
                rolled_back.update(_rollback_paths(payload))
            elif _list(written, instant.timestamp, write_stat_paths(payload)):
                listing.add(instant.timestamp)
    except CorruptFileError as exc:
        raise HudiInputError(f"the archived timeline is unreadable: {exc}") from exc
    pending: dict[str, str] = {}
    for instant in active:
        if not instant.is_completed:
            pending[instant.timestamp] = instant.action
            continue
        completed[instant.timestamp] = instant.action
        if instant.action in COMMIT_ACTIONS:
            if _list(written, instant.timestamp, metadata.written_paths(active, instant)):
                listing.add(instant.timestamp)
        elif instant.action == ROLLBACK:
            rolled_back.update(_rollback_paths(metadata.completed_metadata(active, instant)))
    known = [*completed, *pending]
    silent = frozenset(t for t, action in completed.items() if action in COMMIT_ACTIONS and t not in listing)
    return Ownership(written, frozenset(rolled_back), completed, silent, pending,
                     min(known) if known else None, table.config.is_hudi_1x)


def _list(written: dict[str, str], instant: str, paths: Iterator[str] | list[str]) -> bool:
    """Records `paths` as written by `instant`; whether there was any."""
    found = False
    for path in paths:
        if path:
            written[path] = instant
            found = True
    return found


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
