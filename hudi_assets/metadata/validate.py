"""Compare what the metadata table's `files` partition lists with the data files on storage, as
Hudi's `HoodieMetadataTableValidator` (and `metadata validate-files`) do.

Every listed file must exist with its size; every data file that a completed instant wrote must be
listed, except those a completed clean planned to delete (the clean already removed them from the
listing). Files are attributed to instants through the write stats of completed commits of the
timeline snapshot the metadata table was opened with (or, for instants archived before it, through
the instant in their name), so the files of a write still in flight are not drift; a log file a
pending write is appending to may be larger on storage than listed.

A comparison can be limited to some partitions (those a clean is about to plan): their records are
looked up by key and only their directories are listed, so the cost follows the partitions checked,
not the table.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from hudi_assets.engine import LocalEngine
from hudi_assets.fsview import PARTITION_METAFILE, is_checksum_file, list_partitions, parse_base_file_name
from hudi_assets.logformat import LogFileName
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.storage import Storage
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


def validate_files(metadata: MetadataTable, partitions: Collection[str] | None = None,
                   exclude: Collection[str] = ()) -> list[Difference]:
    """Every difference between the `files` partition and the data files on storage, sorted: in
    `partitions` only when given (else in every partition listed or on storage), and never in
    `exclude`."""
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
    written = _committed_files(timeline)
    cleaned = _planned_clean_deletes(timeline, storage)
    appending = bool(timeline.write_timeline().filter_pending())
    differences = []
    for partition, files in listing.items():
        present = on_storage.get(partition, {})
        for name, size in files.items():
            actual = present.get(name)
            if actual is None:
                differences.append(Difference(partition, name, f"listed ({size} bytes) but not on storage"))
            elif actual != size and not (appending and name.startswith(".") and actual > size):
                problem = f"listed with {size} bytes, {actual} on storage"
                differences.append(Difference(partition, name, problem))
    for partition, files in on_storage.items():
        listed = listing.get(partition, {})
        for name in files:
            path = f"{partition}/{name}" if partition else name
            if name in listed or path in cleaned:
                continue
            instant = written.get(path) or _archived_instant(name, timeline)
            if instant is not None:
                differences.append(Difference(partition, name, f"written by completed instant {instant}, "
                                                               "on storage but not listed"))
    return sorted(differences)


def _committed_files(timeline: ActiveTimeline) -> dict[str, str]:
    """Relative path -> instant, for every file in the write stats of a completed write."""
    written = {}
    for instant in timeline.commits_timeline().filter_completed():
        for stat in commit_metadata(timeline, instant).write_stats:
            if stat.path:
                written[stat.path] = instant.timestamp
    return written


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


def _archived_instant(name: str, timeline: ActiveTimeline) -> str | None:
    """The instant in a data file's name when it precedes the active timeline (archived, so written
    by a completed instant); None otherwise."""
    log = LogFileName.parse(name)
    parts = None if log is not None else parse_base_file_name(name)
    instant = log.base_instant if log is not None else parts[2] if parts else None
    return instant if instant and timeline.is_before_timeline_starts(instant) else None


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
