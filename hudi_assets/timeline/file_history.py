"""The history of one data file, from the active and the archived timeline: the commit that wrote it,
a replacecommit that replaced its file group, the clean or rollback that deleted it (or failed to),
a pending clean that plans to. What `hudi-assets timeline PATH --file NAME` prints, so that a
reader's FileNotFoundException has its answer in one command.

Each completed write, clean and rollback is matched by the file's name (and partition, when given):
Hudi's clean metadata records deleted names, its rollback metadata full paths, and commit metadata
paths relative to the base path. The archived timeline is layout 1's archive files or, on table
versions 8 and 9, the LSM history, whose rows hold the completed instants' metadata
(`timeline.archived_details`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from hudi_assets.fsview import LogFile, parse_base_file_name
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.archived_details import archived_completed
from hudi_assets.timeline.instant import CLEAN, COMMIT, DELTA_COMMIT, REPLACE_COMMIT, ROLLBACK, Instant
from hudi_assets.timeline.timeline import ActiveTimeline

WRITES = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)


@dataclass(frozen=True)
class FileEvent:
    """One thing an instant did to the file; `completed_ms`: its completed state file's time (active
    timeline only)."""

    instant: str
    action: str
    event: str
    partition: str
    timeline: str
    completed_ms: int | None = None


@dataclass
class FileHistory:
    name: str
    partition: str | None
    exists: bool | None
    events: list[FileEvent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _split(path: str) -> tuple[str | None, str]:
    partition, _, name = path.strip("/").rpartition("/")
    return (partition or None), name


def _file_id(name: str) -> str | None:
    log = LogFile.parse(name)
    if log is not None:
        return log.file_id
    parsed = parse_base_file_name(name)
    return parsed[0] if parsed else None


class _Matcher:
    """Whether a recorded path or name is the file asked about."""

    def __init__(self, path: str):
        self.partition, self.name = _split(path)
        self.file_id = _file_id(self.name)

    def partition_matches(self, partition: str) -> bool:
        return self.partition is None or partition.strip("/") == self.partition

    def names(self, partition: str, recorded: Iterable[str] | None) -> bool:
        """Whether any of `recorded` (names, relative or full paths) is the file, in `partition`."""
        return self.partition_matches(partition) and any(
            r.rpartition("/")[2] == self.name for r in recorded or ())


def _commit_events(m: _Matcher, payload: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(event, partition) of a write's metadata (JSON of the active timeline or Avro of the archive)."""
    for partition, stats in (payload.get("partitionToWriteStats") or {}).items():
        if m.names(partition, [s.get("path") or "" for s in stats or ()]):
            yield "written", partition
    for partition, ids in (payload.get("partitionToReplaceFileIds") or {}).items():
        if m.file_id and m.partition_matches(partition) and m.file_id in (ids or ()):
            yield "file group replaced", partition


def _delete_events(m: _Matcher, payload: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(event, partition) of a completed clean's or rollback's metadata."""
    for key, stat in (payload.get("partitionMetadata") or {}).items():
        partition = stat.get("partitionPath", key) or ""
        if m.names(partition, stat.get("successDeleteFiles")):
            yield "deleted", partition
        if m.names(partition, stat.get("failedDeleteFiles")):
            yield "delete failed", partition


def _events(m: _Matcher, instant: Instant, payload: dict[str, Any] | None) -> Iterator[tuple[str, str]]:
    if not payload:
        return iter(())
    return _commit_events(m, payload) if instant.action in WRITES else _delete_events(m, payload)


def _active(m: _Matcher, active: ActiveTimeline) -> Iterator[FileEvent]:
    for instant in active.filter_actions({*WRITES, CLEAN, ROLLBACK}):
        done = active.state_files[instant].mtime_ms if instant.is_completed else None
        if instant.action == CLEAN and not instant.is_completed:
            plan = metadata.requested_plan(active, instant) or {}
            for partition, files in (plan.get("filePathsToBeDeletedPerPartition") or {}).items():
                if m.names(partition, [f.get("filePath") or "" for f in files or ()]):
                    yield FileEvent(instant.timestamp, CLEAN, "planned for deletion (pending clean)",
                                    partition, "active")
            continue
        if not instant.is_completed:
            continue
        payload = (metadata.commit_metadata(active, instant).to_object() if instant.action in WRITES
                   else metadata.completed_metadata(active, instant))
        for event, partition in _events(m, instant, payload):
            yield FileEvent(instant.timestamp, instant.action, event, partition, "active", done)


def _archived(m: _Matcher, table: HoodieTable) -> Iterator[FileEvent]:
    for instant, payload in archived_completed(table, (*WRITES, CLEAN, ROLLBACK)):
        for event, partition in _events(m, instant, payload):
            yield FileEvent(instant.timestamp, instant.action, event, partition, "archived")


def file_history(table: HoodieTable, path: str) -> FileHistory:
    """What the timelines say about the data file `path` (a name, or partition/name)."""
    m = _Matcher(path)
    history = FileHistory(m.name, m.partition, None)
    if m.file_id is None:
        history.notes.append(f"{m.name} is not named as a Hudi base or log file")
    events = [*_active(m, table.active_timeline), *_archived(m, table)]
    history.events = sorted(set(events), key=lambda e: (e.instant, e.timeline))
    partitions = {e.partition for e in history.events}
    if history.partition is None and len(partitions) == 1:
        history.partition = partitions.pop()
    if history.partition is not None:
        rel = f"{history.partition}/{m.name}" if history.partition else m.name
        history.exists = table.storage.exists(rel)
    if not history.events:
        history.notes.append(f"no instant of the active or archived timeline names {m.name}")
    return history
