"""Compare what the metadata table's `files` partition lists with the data files on storage, as
Hudi's `HoodieMetadataTableValidator` (and `metadata validate-files`) do.

Every listed file must exist with its size; every data file that a completed instant wrote must be
listed, except those a completed clean planned to delete (the clean already removed them from the
listing). Files are attributed to writes through the write stats of completed commits of the
timeline snapshot the metadata table was opened with, and, for a file of an instant archived before
it, of the archived timeline too: a log file's name carries its slice's base instant, not its
writer's, so the name alone cannot say a completed write wrote it. The files of a write still in
flight are not drift; a log file a pending write may be appending to may be larger on storage than
listed. On table version 6 a log file carries its slice's base instant and any deltacommit since then
may append to it; on 8 and 9 (Hudi 1.x) every deltacommit writes new log files named by its own
instant, so a pending write explains only the files named by it.

A file no completed write lists is judged by the ownership rule orphan repair uses
(`hudi_assets.ownership`): an orphan (a crashed append whose rollback logged out the slice's latest
log file instead, a failed write's file no rollback removed) is not drift, since Hudi's metadata table
never lists it either, but it is reported as one. Hudi 0.15's `HoodieMetadataTableValidator`
(`areFileSliceCommittedLogFilesMatching`) likewise lets a log file differ when its first block's
instant is not a completed write listing it, but takes every block instant before the active timeline
for committed: past the archive it would report such a file too.

A comparison can be limited to some partitions (those a clean is about to plan): their records are
looked up by key and only their directories are listed, so the cost follows the partitions checked,
not the table.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from functools import cached_property

from hudi_assets.engine import LocalEngine
from hudi_assets.exceptions import HudiInputError
from hudi_assets.fsview import PARTITION_METAFILE, is_checksum_file, list_partitions
from hudi_assets.logformat import LogFileName
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.ownership import Ownership, appending_writes, load_ownership, pending_appender
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_paths import written_instant
from hudi_assets.timeline.instant import CLEAN
from hudi_assets.timeline.metadata import commit_metadata, requested_plan
from hudi_assets.timeline.timeline import ActiveTimeline


@dataclass(frozen=True, order=True)
class Difference:
    """One way the listing and storage disagree about one file."""

    partition: str
    file: str
    problem: str

    def __str__(self) -> str:
        path = f"{self.partition}/{self.file}" if self.partition else self.file
        return f"{path}: {self.problem}"


ORPHAN = "uncommitted, not listed (an orphan: `hudi-assets repair orphans` moves it)"


@dataclass(frozen=True)
class Validation:
    """The differences (drift of the metadata table: validation fails) and the orphans (data files no
    completed write lists, rightly not listed), each sorted."""

    differences: list[Difference]
    orphans: list[Difference] = field(default_factory=list)


def validate_files(metadata: MetadataTable, partitions: Collection[str] | None = None,
                   exclude: Collection[str] = ()) -> list[Difference]:
    """Every difference between the `files` partition and the data files on storage, sorted: in
    `partitions` only when given (else in every partition listed or on storage), and never in
    `exclude`."""
    return validate(metadata, partitions, exclude).differences


def validate(metadata: MetadataTable, partitions: Collection[str] | None = None,
             exclude: Collection[str] = ()) -> Validation:
    """`validate_files`, with the orphans found on the way."""
    if partitions is None:
        listing = metadata.files_listing.partitions
        on_storage = _data_files(metadata, [p.partition for p in list_partitions(metadata.data_storage,
                                                                                    LocalEngine())])
    else:
        listing = metadata.files_in_partitions(partitions)
        on_storage = _data_files(metadata, partitions)
    if exclude:
        skipped = set(exclude)
        listing = {p: files for p, files in listing.items() if p not in skipped}
        on_storage = {p: files for p, files in on_storage.items() if p not in skipped}
    timeline = metadata.data_timeline
    storage = metadata.data_storage
    cleaned = _planned_clean_deletes(timeline, storage)
    owners = _Owners(metadata)
    differences, orphans = [], []
    for partition, files in listing.items():
        present = on_storage.get(partition, {})
        for name, size in files.items():
            actual = present.get(name)
            if actual is None:
                differences.append(Difference(partition, name, f"listed ({size} bytes) but not on storage"))
            elif actual != size and not (actual > size and pending_appender(name, owners.appenders)):
                problem = f"listed with {size} bytes, {actual} on storage"
                differences.append(Difference(partition, name, problem))
    for partition, files in on_storage.items():
        listed = listing.get(partition, {})
        for name in files:
            path = f"{partition}/{name}" if partition else name
            if name in listed or path in cleaned:
                continue
            try:
                instant = owners.writer(path)
                orphan = None if instant is not None else owners.orphan(path)
            except HudiInputError as exc:  # older than both timelines: it may have been committed
                differences.append(Difference(partition, name, f"on storage but not listed; {exc}"))
                continue
            if instant is not None:
                differences.append(Difference(partition, name, f"written by completed instant {instant}, "
                                                               "on storage but not listed"))
            elif orphan is not None:
                orphans.append(Difference(partition, name, f"{ORPHAN}: {orphan}"))
    return Validation(sorted(differences), sorted(orphans))


class _Owners:
    """Who wrote a data file the listing leaves out, from the timeline snapshot the metadata table was
    opened with; the archived timeline is read (once) only for a file that snapshot cannot judge."""

    def __init__(self, metadata: MetadataTable):
        self.metadata = metadata
        self.timeline = metadata.data_timeline
        self.extension = metadata.data_config.base_file_extension
        self.pending = {i.timestamp: i.action for i in self.timeline if not i.is_completed}
        self.appenders = appending_writes(self.pending, metadata.data_config.is_hudi_1x)

    @cached_property
    def written(self) -> dict[str, str]:
        """Relative path -> instant, for every file in the write stats of a completed write."""
        written = {}
        for instant in self.timeline.commits_timeline().filter_completed():
            for stat in commit_metadata(self.timeline, instant).write_stats:
                if stat.path:
                    written[stat.path] = instant.timestamp
        return written

    @cached_property
    def ownership(self) -> Ownership:
        return load_ownership(HoodieTable(self.metadata.data_storage), self.timeline)

    def writer(self, path: str) -> str | None:
        """The completed write listing `path`; the archived timeline is read only when the instant in
        its name precedes the active timeline (no archived write lists a file of a later slice)."""
        found = self.written.get(path)
        if found is None and self._archived(path):
            found = self.ownership.written.get(path)
        return found

    def orphan(self, path: str) -> str | None:
        """Why `path`, which no completed write lists, is an orphan; None when it is a pending write's
        (or may be: a log file a pending write since its base instant may be appending to) or
        orphan repair would leave it alone."""
        name = path.rpartition("/")[2]
        if written_instant(name, self.extension) in self.pending or pending_appender(name, self.appenders):
            return None
        candidate = self.ownership.judge(path, self.extension)
        return candidate.reason if candidate is not None else None

    def _archived(self, path: str) -> bool:
        instant = written_instant(path.rpartition("/")[2], self.extension)
        return instant is not None and self.timeline.is_before_timeline_starts(instant)


def _planned_clean_deletes(timeline: ActiveTimeline, storage: Storage) -> frozenset[str]:
    """Relative paths the plans of completed cleans listed for deletion."""
    planned = set()
    for instant in timeline.filter_actions({CLEAN}).filter_completed():
        plan = requested_plan(timeline, instant) or {}
        for infos in (plan.get("filePathsToBeDeletedPerPartition") or {}).values():
            planned.update(storage.relativize(i["filePath"]) for i in infos or [] if i.get("filePath"))
        for partition, names in (plan.get("filesToBeDeletedPerPartition") or {}).items():
            planned.update(f"{partition}/{name}" if partition else name for name in names or [])
    return frozenset(planned)


def _data_files(metadata: MetadataTable, partitions: Iterable[str]) -> dict[str, dict[str, int]]:
    """Data partition -> data file name -> size on storage (base files of the table's format and logs),
    one listing of each partition; a partition that is not on storage has no files."""
    extension = metadata.data_config.base_file_extension
    storage = metadata.data_storage
    found: dict[str, dict[str, int]] = {}
    for partition in partitions:
        sizes = {status.name: status.size for status in storage.list(partition) if not status.is_dir}
        found[partition] = {name: sizes[name] for name in _data_names(sizes, extension)}
    return found


def _data_names(names: Iterable[str], extension: str) -> list[str]:
    return [name for name in names
            if not name.startswith(PARTITION_METAFILE) and not is_checksum_file(name)
            and (name.endswith(extension) if not name.startswith(".")
                 else (log := LogFileName.parse(name)) is not None and log.extension == "log")]
