"""Compaction of the metadata table, as Hudi 0.14/0.15's writer runs it in `performTableServices`.

Before each data-table write, the writer compacts the metadata table once its deltacommits since the
last compaction reach `hoodie.metadata.compact.max.delta.commits` (10), unless a data instant at or
before the latest metadata deltacommit is still pending or a metadata compaction is pending. The
compaction instant is the latest deltacommit's time plus the suffix `001`, so later deltacommits
synced over never sort before it. Every file slice with log files gets a new HFile base file holding
its records merged as `HoodieMetadataPayload` merges them (base, then valid log blocks in order;
deleted keys dropped), with `_hoodie_file_name` set to the new file and the key field blanked, as
`HoodieAvroHFileWriter` writes them; then `T.compaction.requested` (the plan), `T.compaction.inflight`
and `T.commit` (the commit metadata) complete it. A slice holding no record and no base file gets no
new file, as in Hudi. The metadata table's markers, which Hudi deletes on completion, are not written.
The metadata table's clean (of the slices a compaction superseded) stays with the table's writer.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import fastavro

from hudi_assets import bloom
from hudi_assets.avro import serialize_metadata
from hudi_assets.exceptions import CorruptFileError, HudiAssetsError
from hudi_assets.hfile import HFileReader, write_hfile
from hudi_assets.java_collections import in_java_hashmap_order
from hudi_assets.logformat import BlockType, HeaderKey
from hudi_assets.logformat.delete_block import decode_delete_block
from hudi_assets.logformat.hfile_block import avro_schema
from hudi_assets.metadata.file_group import HFILE_EXTENSION, BlockFilter, MetadataFileSlice, valid_log_blocks
from hudi_assets.metadata.records import FILE_LIST, PARTITION_LIST, FilesRecord, combine
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.storage import Storage
from hudi_assets.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_assets.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, Instant, State

DEFAULT_MAX_DELTA_COMMITS = 10  # hoodie.metadata.compact.max.delta.commits
COMPACTION_SUFFIX = "001"  # HoodieTableMetadataUtil.OperationSuffix.COMPACTION
COLUMN_STATS = 3  # HoodieMetadataPayload.METADATA_TYPE_COLUMN_STATS
_SCHEMA_KEY = b"schema"
_MIN_RECORD_KEY = b"minRecordKey"
_MAX_RECORD_KEY = b"maxRecordKey"
_BLOOM_TYPE_KEY = b"bloomFilterTypeCode"
_BLOOM_META_BLOCK = b"bloomFilter"
_MB = 1024 * 1024
_MAX_PARQUET_FILE_SIZE = 120 * _MB  # hoodie.parquet.max.file.size: the write estimate of a slice without base


def compaction_instant_time(latest_deltacommit: str) -> str:
    """`HoodieTableMetadataUtil.createCompactionTimestamp`."""
    return latest_deltacommit + COMPACTION_SUFFIX


def compaction_metrics(base_size: int | None, log_sizes: list[int]) -> dict[str, float]:
    """`CompactionStrategy.captureMetrics` of one file slice (sizes in bytes, IO in whole MB)."""
    log_size = sum(size for size in log_sizes if size >= 0)
    read_mb = ((base_size or 0) + log_size) // _MB
    write_mb = (base_size if base_size is not None else _MAX_PARQUET_FILE_SIZE) // _MB
    return in_java_hashmap_order({
        "TOTAL_IO_READ_MB": float(read_mb), "TOTAL_IO_WRITE_MB": float(write_mb),
        "TOTAL_IO_MB": float(read_mb + write_mb), "TOTAL_LOG_FILES_SIZE": float(log_size),
        "TOTAL_LOG_FILES": float(len(log_sizes)),
    })


def compaction_due(metadata: MetadataTable, max_delta_commits: int = DEFAULT_MAX_DELTA_COMMITS) -> str | None:
    """The instant time of the compaction the writer runs now, or None when it runs none.

    `validateTimelineBeforeSchedulingCompaction` and the NUM_COMMITS trigger: deltacommits (any
    state) after the last completed compaction, or all of them before the first one.
    """
    timeline = metadata.timeline
    latest = timeline.filter_completed().filter_actions({DELTA_COMMIT}).last()
    if latest is None:
        return None
    if any(i.timestamp <= latest.timestamp for i in metadata.data_timeline.filter_pending()):
        return None
    if timeline.filter_actions({COMPACTION}).filter_pending():
        return None
    instant_time = compaction_instant_time(latest.timestamp)
    if instant_time in timeline.filter_completed().timestamps:
        return None
    last_compaction = metadata.latest_compaction()
    deltacommits = [i for i in timeline.filter_actions({DELTA_COMMIT})
                    if last_compaction is None or i.timestamp > last_compaction.timestamp]
    return instant_time if len(deltacommits) >= max_delta_commits else None


# ------------------------------------------------------------------------------ merging records
def merge_payloads(older: dict[str, Any], newer: dict[str, Any]) -> dict[str, Any]:
    """`HoodieMetadataPayload.preCombine` of two records of one key (min/max values as (wrapper, value))."""
    kind = newer.get("type")
    if older.get("type") != kind:
        raise ValueError(f"cannot merge a record of type {kind} into one of type {older.get('type')}")
    if kind in (PARTITION_LIST, FILE_LIST):
        merged = combine(_files_record(older), _files_record(newer))
        files = {name: {"size": info.size, "isDeleted": info.is_deleted}
                 for name, info in merged.files.items()}
        return {**newer, "filesystemMetadata": files}
    if kind == COLUMN_STATS:
        return {**newer, "ColumnStatsMetadata": _merge_column_stats(older["ColumnStatsMetadata"],
                                                                    newer["ColumnStatsMetadata"])}
    return newer  # bloom filters and record index: the newer record wins


def _files_record(record: dict[str, Any]) -> FilesRecord:
    return FilesRecord.from_avro(record.get("key") or "", record, "<merged record>")


def _merge_column_stats(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """`HoodieTableMetadataUtil.mergeColumnStatsRecords`: a tombstone on either side gives the newer."""
    if new["isDeleted"] or old["isDeleted"]:
        return new
    merged = dict(new)
    merged["minValue"] = _bound(old["minValue"], new["minValue"], min)
    merged["maxValue"] = _bound(old["maxValue"], new["maxValue"], max)
    for count in ("valueCount", "nullCount", "totalSize", "totalUncompressedSize"):
        merged[count] = old[count] + new[count]
    return merged


def _bound(old: tuple[str, dict] | None, new: tuple[str, dict] | None, choose) -> tuple[str, dict] | None:
    if old is None or new is None:
        return new if old is None else old
    return choose(old, new, key=lambda wrapped: wrapped[1]["value"])


def _decode(schema_text: str, value: bytes, where: str) -> dict[str, Any]:
    schema = avro_schema(schema_text, where, "record")
    try:
        return fastavro.schemaless_reader(io.BytesIO(value), schema, None, return_record_name=True,
                                          return_record_name_override=True)
    except Exception as exc:  # fastavro raises many kinds for bad bytes
        raise CorruptFileError(where, f"a metadata record cannot be decoded: {exc!r}") from exc


def merged_records(storage: Storage, file_slice: MetadataFileSlice,
                   blocks: BlockFilter) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The records of a file slice merged as Hudi's compactor merges them, by key, and the schema of
    the newest block (None when the slice holds no record)."""
    records: dict[str, dict[str, Any] | None] = {}
    schema_text = None
    if file_slice.base_file is not None:
        path = storage.uri(file_slice.path(file_slice.base_file))
        reader = HFileReader(storage.read(file_slice.path(file_slice.base_file)), name=path)
        base_schema = reader.file_info.get(_SCHEMA_KEY)
        if base_schema is None:
            raise CorruptFileError(path, "the HFile's file info has no Avro schema")
        schema_text = base_schema.decode("utf-8")
        for row, value in reader.entries():
            records[row.decode("utf-8")] = _decode(schema_text, value, path)
    for path, block in valid_log_blocks(storage, file_slice, blocks):
        if block.block_type is BlockType.DELETE:
            for key in decode_delete_block(block, path=path):
                if key is not None:
                    records[key] = None
            continue
        if block.block_type is not BlockType.HFILE_DATA:
            raise CorruptFileError(path, f"{block.block_type.name} block at offset {block.offset}: the "
                                         "metadata table writes only HFILE_DATA and DELETE blocks")
        schema_text = block.header.get(HeaderKey.SCHEMA)
        if schema_text is None:
            raise CorruptFileError(path, f"HFILE_DATA block at offset {block.offset} has no SCHEMA header")
        reader = HFileReader(block.content, name=path)
        for row, value in reader.entries():
            key = row.decode("utf-8")
            record = _decode(schema_text, value, path)
            previous = records.get(key)
            records[key] = record if previous is None else merge_payloads(previous, record)
    return {key: record for key, record in sorted(records.items()) if record is not None}, schema_text


def base_file_bytes(records: dict[str, dict[str, Any]], schema_text: str, file_name: str) -> bytes:
    """The HFile base file of `records` (sorted by key) as `HoodieAvroHFileWriter` writes it: key field
    blanked, `_hoodie_file_name` set, min/max record key, bloom filter of the keys and the schema."""
    schema = avro_schema(schema_text, file_name, "record")
    entries = []
    for key, record in records.items():
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, {**record, "key": "", "_hoodie_file_name": file_name})
        entries.append((key.encode("utf-8"), out.getvalue()))
    keys = list(records)
    file_info = {_MIN_RECORD_KEY: (keys[0] if keys else "").encode("utf-8"),
                 _MAX_RECORD_KEY: (keys[-1] if keys else "").encode("utf-8"),
                 _BLOOM_TYPE_KEY: bloom.TYPE_CODE.encode("utf-8"), _SCHEMA_KEY: schema_text.encode("utf-8")}
    meta = {_BLOOM_META_BLOCK: bloom.serialize(keys).encode("utf-8")}
    return write_hfile(entries, file_info=file_info, meta_blocks=meta)


# ---------------------------------------------------------------------------------- compaction
@dataclass(frozen=True)
class _Operation:
    slice: MetadataFileSlice

    @property
    def log_sizes(self) -> list[int]:
        return [f.size for f in self.slice.log_files]

    def plan_entry(self) -> dict[str, Any]:
        base = self.slice.base_file
        return {
            "baseInstantTime": base.instant if base else self.slice.log_files[0].instant,
            "deltaFilePaths": [f.name for f in self.slice.log_files],
            "dataFilePath": base.name if base else None,
            "fileId": self.slice.file_id,
            "partitionPath": self.slice.partition,
            "metrics": compaction_metrics(base.size if base else None, self.log_sizes),
            "bootstrapFilePath": None,
        }


def default_write_token(task: int) -> str:
    return f"{task}-0-{task}"


def compact(metadata: MetadataTable, instant_time: str,
            write_token: Callable[[int], str] = default_write_token) -> Instant:
    """Run the metadata table's compaction at `instant_time`: plan, new base files, commit."""
    storage = metadata.storage
    operations = [_Operation(s) for partition in metadata.partitions
                  for s in metadata.file_slices(partition) if s.log_files]
    # LogFileSizeBasedCompactionStrategy: the biggest log size first.
    operations.sort(key=lambda op: -sum(op.log_sizes))
    plan = {"operations": [op.plan_entry() for op in operations], "extraMetadata": None, "version": 2,
            "strategy": None, "preserveHoodieMetadata": False}
    timeline = metadata.timeline
    requested = Instant(instant_time, COMPACTION, State.REQUESTED)
    _create(storage, timeline.state_file_path(requested), serialize_metadata("HoodieCompactionPlan", plan))
    _create(storage, timeline.state_file_path(requested.with_state(State.INFLIGHT)), b"")
    stats: dict[str, list[WriteStat]] = {}
    schema = None
    for task, op in enumerate(operations):
        records, schema_text = merged_records(storage, op.slice, metadata.block_filter)
        if schema_text is None or (not records and op.slice.base_file is None):
            continue  # nothing to keep and no base file to replace: Hudi writes no file either
        schema = schema_text
        name = f"{op.slice.file_id}_{write_token(task)}_{instant_time}{HFILE_EXTENSION}"
        data = base_file_bytes(records, schema_text, name)
        _create(storage, f"{op.slice.partition}/{name}", data)
        base = op.slice.base_file
        stats.setdefault(op.slice.partition, []).append(WriteStat.new(
            fileId=op.slice.file_id, path=f"{op.slice.partition}/{name}",
            prevCommit=base.instant if base else "null", numWrites=len(records),
            numInserts=len(records), totalWriteBytes=len(data), partitionPath=op.slice.partition,
            totalLogFilesCompacted=len(op.slice.log_files), totalLogSizeCompacted=sum(op.log_sizes),
            fileSizeInBytes=len(data),
            runtimeStats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0}))
    commit = CommitMetadata(in_java_hashmap_order(stats), compacted=True,
                            extra_metadata={"schema": schema} if schema else {}, operation_type="COMPACT")
    completed = Instant(instant_time, COMPACTION, State.COMPLETED)
    _create(storage, timeline.state_file_path(completed), timeline.commit_metadata_serde.serialize(commit))
    return Instant(instant_time, COMMIT, State.COMPLETED)


def _create(storage: Storage, rel: str, data: bytes) -> None:
    """Write a new file; the compaction never overwrites one (Hudi creates them immutable)."""
    if not storage.create_if_absent(rel, data):
        raise HudiAssetsError(f"{storage.uri(rel)} exists already: compactions write new files only")
