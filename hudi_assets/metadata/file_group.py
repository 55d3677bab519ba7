"""Reading one metadata-table file group: its latest merged file slice, log blocks filtered and
rolled back as Hudi's log record reader does, merged onto the HFile base file.

Slicing: table version 6 names a log file after the base instant it extends, so the slice of the
latest valid base file is that base file plus the logs of its instant or later (later: a pending
compaction's, merged in as Hudi's `getLatestMergedFileSlicesBeforeOrOn` does). Table versions 8+
name a log after the deltacommit that wrote it and slice by completion time: a log belongs to the
latest base file whose instant precedes the log's completion.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.fsview import parse_base_file_name
from hudi_assets.hfile import HFileReader
from hudi_assets.logformat import BlockType, HeaderKey, LogBlock, LogFileName, read_blocks
from hudi_assets.logformat.block import ROLLBACK_COMMAND
from hudi_assets.logformat.delete_block import decode_delete_block
from hudi_assets.logformat.hfile_block import decode_hfile_data_block, decode_hfile_records
from hudi_assets.metadata.instants import SOLO_COMMIT_TIMESTAMP
from hudi_assets.metadata.records import FilesRecord, combine
from hudi_assets.storage import FileStatus, Storage
from hudi_assets.timeline.timeline import Timeline

log = logging.getLogger(__name__)

HFILE_EXTENSION = ".hfile"
_SCHEMA_KEY = b"schema"


@dataclass(frozen=True)
class DataFile:
    """A file of a metadata-table file slice: its name, instant and size on storage."""

    name: str
    instant: str
    size: int


@dataclass
class MetadataFileSlice:
    """The latest merged file slice of one metadata-table file group."""

    partition: str
    file_id: str
    base_file: DataFile | None = None
    log_files: list[DataFile] = field(default_factory=list)

    def path(self, file: DataFile) -> str:
        return f"{self.partition}/{file.name}"


@dataclass(frozen=True)
class BlockFilter:
    """What decides which log blocks of the metadata table are read (AbstractHoodieLogRecordReader)."""

    latest_instant: str
    """The last completed metadata instant: reading stops at a block after it."""
    completed: frozenset[str]
    """Completed commits of the metadata table: a data or delete block must be one of them..."""
    timeline_start: str | None
    """...or precede the first of them (archived)."""
    inflight: frozenset[str]
    """Inflight commits of the metadata table, whose blocks are skipped."""
    valid_instants: frozenset[str]
    """See `valid_instant_timestamps`."""

    @classmethod
    def of(cls, commits: Timeline, valid_instants: frozenset[str]) -> BlockFilter:
        """The filter for a metadata table whose commits timeline (any state) is `commits`."""
        completed = commits.filter_completed()
        last = completed.last()
        return cls(last.timestamp if last else SOLO_COMMIT_TIMESTAMP, frozenset(completed.timestamps),
                   completed.timestamps[0] if completed else None,
                   frozenset(commits.filter_inflight().timestamps), valid_instants)

    def is_committed(self, instant: str) -> bool:
        """Hudi's `containsOrBeforeTimelineStarts` on the completed metadata commits."""
        start = self.timeline_start
        return instant in self.completed or (start is not None and instant < start)

    def is_valid(self, instant: str) -> bool:
        """Whether a data or delete block of `instant` is read."""
        return self.is_committed(instant) and instant not in self.inflight and instant in self.valid_instants


def latest_file_slices(partition: str, files: Iterable[FileStatus], valid_base: Callable[[str], bool],
                       completion_times: Mapping[str, str]) -> list[MetadataFileSlice]:
    """The latest merged file slice of every file group among `files` (one MDT partition's listing).

    `valid_base(instant)` says whether a base file's instant is committed; `completion_times` is the
    timeline's (deltacommit time -> completion time; empty on layout 1, where a log file is sliced
    by the base instant in its name).
    """
    bases: dict[str, list[DataFile]] = {}
    logs: dict[str, list[tuple[LogFileName, DataFile]]] = {}
    for status in files:
        if status.is_dir:
            continue
        if status.name.startswith("."):
            parsed = LogFileName.parse(status.name)
            if parsed is not None and parsed.extension == "log" and not parsed.is_cdc:
                logs.setdefault(parsed.file_id, []).append(
                    (parsed, DataFile(status.name, parsed.base_instant, status.size)))
        elif status.name.endswith(HFILE_EXTENSION):
            parts = parse_base_file_name(status.name)
            if parts is not None and valid_base(parts[2]):
                bases.setdefault(parts[0], []).append(DataFile(status.name, parts[2], status.size))
    slices = []
    for file_id in sorted(bases.keys() | logs.keys()):
        base = max(bases.get(file_id, []), key=lambda f: f.instant, default=None)
        members = [(name, file) for name, file in logs.get(file_id, [])
                   if base is None or completion_times.get(file.instant, file.instant) >= base.instant]
        members.sort(key=lambda item: (item[0].base_instant, item[0].version, item[0].write_token or ""))
        slices.append(MetadataFileSlice(partition, file_id, base, [file for _, file in members]))
    return slices


def read_files_records(storage: Storage, file_slice: MetadataFileSlice,
                       blocks: BlockFilter) -> dict[str, FilesRecord]:
    """The merged records of a `files` partition file slice, deleted records left out."""
    log_records = scan_log_records(storage, file_slice, blocks)
    merged: dict[str, FilesRecord] = {}
    if file_slice.base_file is not None:
        for key, record in _base_records(storage, file_slice.path(file_slice.base_file)):
            merged[key] = record
    for key, record in log_records.items():
        result = merge_onto_base(merged.get(key), record)
        if result is None:
            merged.pop(key, None)
        else:
            merged[key] = result
    return merged


def merge_onto_base(base: FilesRecord | None, log: FilesRecord | None) -> FilesRecord | None:
    """A key's merged log record (None: deleted in the logs) merged onto its base-file record."""
    if log is None or base is None:
        return log
    return combine(base, log)


def merge_log_record(previous: FilesRecord | None, record: FilesRecord) -> FilesRecord:
    """A later log record of a key onto what the earlier blocks left (None: absent or deleted)."""
    return record if previous is None else combine(previous, record)


def _base_records(storage: Storage, rel: str) -> list[tuple[str, FilesRecord]]:
    reader, schema = open_base_file(storage, rel)
    return [(key, FilesRecord.from_avro(key, record, reader.name))
            for key, record in decode_hfile_records(reader, schema, where="base file")]


def open_base_file(storage: Storage, rel: str) -> tuple[HFileReader, str]:
    """A base HFile's reader and the Avro schema (text) of its records, from its file info."""
    path = storage.uri(rel)
    reader = HFileReader(storage.read(rel), name=path)
    schema = reader.file_info.get(_SCHEMA_KEY)
    if schema is None:
        raise CorruptFileError(path, "the HFile's file info has no Avro schema")
    return reader, schema.decode("utf-8")


def valid_log_blocks(storage: Storage, file_slice: MetadataFileSlice,
                     blocks: BlockFilter) -> list[tuple[str, LogBlock]]:
    """The data and delete blocks of a slice's logs that count, in log order, with their file paths.

    As Hudi's scanner: reading stops at the first block after the latest completed metadata instant;
    blocks of instants that are not valid are skipped; a rollback command block removes the queued
    blocks of its target instant and any corrupt blocks queued so far.
    """
    queued: list[tuple[str, LogBlock]] = []
    for file in file_slice.log_files:
        path = storage.uri(file_slice.path(file))
        for block in read_blocks(storage.read(file_slice.path(file)), path):
            instant = block.header.get(HeaderKey.INSTANT_TIME, "")
            if block.block_type is not BlockType.CORRUPT and instant > blocks.latest_instant:
                return _without_corrupt(queued)
            if block.block_type is BlockType.COMMAND:
                _apply_command(block, queued, path)
            elif block.block_type is BlockType.CORRUPT or blocks.is_valid(instant):
                queued.append((path, block))
    return _without_corrupt(queued)


def _apply_command(block: LogBlock, queued: list[tuple[str, LogBlock]], path: str) -> None:
    if block.header.get(HeaderKey.COMMAND_BLOCK_TYPE) != ROLLBACK_COMMAND:
        raise CorruptFileError(path, f"command block at offset {block.offset} is not a rollback command")
    target = block.header.get(HeaderKey.TARGET_INSTANT_TIME)
    queued[:] = [(p, b) for p, b in queued if b.block_type is not BlockType.CORRUPT
                 and b.header.get(HeaderKey.INSTANT_TIME) != target]


def _without_corrupt(queued: list[tuple[str, LogBlock]]) -> list[tuple[str, LogBlock]]:
    for path, block in queued:
        if block.block_type is BlockType.CORRUPT:
            log.warning("Skipping corrupt log block in %s at offset %s", path, block.offset)
    return [(p, b) for p, b in queued if b.block_type is not BlockType.CORRUPT]


def scan_log_records(storage: Storage, file_slice: MetadataFileSlice,
                     blocks: BlockFilter) -> dict[str, FilesRecord | None]:
    """Log records by key, merged in log order; None marks a deleted key (HoodieMergedLogRecordScanner)."""
    records: dict[str, FilesRecord | None] = {}
    for path, block in valid_log_blocks(storage, file_slice, blocks):
        if block.block_type is BlockType.DELETE:
            for key in decode_delete_block(block, path=path):
                if key is not None:
                    records[key] = None
        elif block.block_type is BlockType.HFILE_DATA:
            for key, avro in decode_hfile_data_block(block, path=path):
                records[key] = merge_log_record(records.get(key), FilesRecord.from_avro(key, avro, path))
        else:
            raise CorruptFileError(path, f"{block.block_type.name} block at offset {block.offset}: the "
                                         "metadata table writes only HFILE_DATA and DELETE blocks")
    return records
