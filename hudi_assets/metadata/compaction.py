"""Compaction of the metadata table, as Hudi 0.15's writer runs it in `performTableServices`.

The writer compacts the metadata table once its deltacommits since the last compaction reach
`hoodie.metadata.compact.max.delta.commits` (10), unless a data instant at or before the latest
metadata deltacommit is still pending or a metadata compaction is pending. The compaction instant is
the latest deltacommit's time plus the suffix `001`, so later deltacommits synced over never sort
before it. Every file slice with log files gets a new HFile base file holding its records merged as
`HoodieMetadataPayload` merges them (base, then valid log blocks in order; keys of delete blocks
dropped, as `getInsertValue` drops a deleted record; column-stats and bloom-filter entries flagged
deleted are records and stay), with `_hoodie_file_name` set to the new file and the key field
blanked, as `HoodieAvroHFileWriter` writes them. Steps: `T.compaction.requested` (the plan, written
by `schedule_compaction`), then `execute_compaction` reads the plan back (ours or a Java writer's):
`T.compaction.inflight`, the base files, `T.commit` (the commit metadata). A slice holding no record
and no base file gets no new file, as in Hudi. The metadata table's markers, which Hudi deletes on
completion, are not written. A compaction left inflight by a crash is rolled back to requested
(its base files deleted by a rollback instant) and executed again under the same time
(`complete_pending_compaction`), as `runAnyPendingCompactions` does. Log compaction is off by default
in 0.15 (`hoodie.metadata.log.compaction.enable` false) and not done here.

Table versions 8 and 9 (Hudi 1.x's `HoodieBackedTableMetadataWriter.compactIfNecessary`, read at
apache/hudi 009a1bc5; `HoodieBackedTableMetadataWriterTableVersionSix` keeps the rules above for
version 6): the compaction takes a fresh instant time, or, when a data instant is pending whose
metadata deltacommit completed, that instant's time minus 1 ms (so its rollback stays possible);
no pending data instant blocks it. It is due once `max.delta.commits` deltacommits completed after
the last compaction (`getCompletedDeltaCommitsSinceLatestCompaction`; by completion time after the
compaction's requested time, as file slices go by completion time). The plan leaves out log files
whose deltacommit did not complete before the compaction's time (`generateCompactionPlan`): they
belong to the new slice. States in layout 2: `T.compaction.requested` (the plan), an empty
`T.compaction.inflight`, `T_<completion>.commit` (Avro commit metadata).
"""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import fastavro

from hudi_assets import bloom
from hudi_assets.avro import deserialize_metadata, serialize_metadata
from hudi_assets.exceptions import CorruptFileError, HudiAssetsError
from hudi_assets.fsview import parse_base_file_name
from hudi_assets.hfile import HFileReader, write_hfile
from hudi_assets.java_collections import in_java_hashmap_order
from hudi_assets.listener import QUIET, Listener, ServiceRun, Step
from hudi_assets.logformat import BlockType, HeaderKey
from hudi_assets.logformat.delete_block import decode_delete_block
from hudi_assets.logformat.hfile_block import avro_schema
from hudi_assets.metadata.file_group import (
    HFILE_EXTENSION,
    BlockFilter,
    DataFile,
    MetadataFileSlice,
    valid_log_blocks,
)
from hudi_assets.metadata.records import FILE_LIST, PARTITION_LIST, FilesRecord, combine
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.rollback.executor import RollbackActionExecutor
from hudi_assets.rollback.metadata import RollbackPlan, RollbackRequest
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_assets.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, ROLLBACK, Instant, State
from hudi_assets.timeline.instant_time import (
    clock_skew_conf,
    format_instant_time,
    new_instant_time,
    parse_instant_time,
)
from hudi_assets.timeline.timeline import ActiveTimeline

log = logging.getLogger(__name__)

DEFAULT_MAX_DELTA_COMMITS = 10  # hoodie.metadata.compact.max.delta.commits
COMPACTION_SUFFIX = "001"  # HoodieTableMetadataUtil.OperationSuffix.COMPACTION
COLUMN_STATS = 3  # HoodieMetadataPayload.METADATA_TYPE_COLUMN_STATS
PARTITION_STATS = 6  # Hudi 1.x: merged as column stats are
SECONDARY_INDEX = 7  # Hudi 1.x: a record flagged deleted is dropped on write, as a delete is
_SCHEMA_KEY = b"schema"
_MIN_RECORD_KEY = b"minRecordKey"
_MAX_RECORD_KEY = b"maxRecordKey"
_BLOOM_TYPE_KEY = b"bloomFilterTypeCode"
_BLOOM_META_BLOCK = b"bloomFilter"
_MB = 1024 * 1024
_MAX_PARQUET_FILE_SIZE = 120 * _MB  # hoodie.parquet.max.file.size: the write estimate of a slice without base


def compaction_instant_time(latest_deltacommit: str) -> str:
    """`HoodieTableMetadataUtil.createCompactionTimestamp` (table version 6)."""
    return latest_deltacommit + COMPACTION_SUFFIX


def takes_fresh_time(metadata: MetadataTable) -> bool:
    """Whether the metadata table's services name their instants by fresh times (Hudi 1.x)."""
    return metadata.config.is_hudi_1x


def fresh_compaction_time(metadata: MetadataTable, now: datetime | None = None) -> str:
    """The 1.x compaction time: the first pending data instant whose metadata deltacommit completed,
    minus 1 ms; else a new instant time after every time on the metadata timeline."""
    completed = set(metadata.timeline.filter_completed().timestamps)
    pending = next((i for i in metadata.data_timeline.filter_pending() if i.timestamp in completed), None)
    if pending is not None:
        parsed = parse_instant_time(pending.timestamp[:17])
        if parsed is not None:
            return format_instant_time(parsed - timedelta(milliseconds=1))
    return new_instant_time(metadata.timeline.all_times, metadata.config.timeline_timezone, now,
                            metadata.clock_skew_ms)


def deltacommits_since_compaction(metadata: MetadataTable) -> list[Instant]:
    """The deltacommits that count toward the next compaction: on version 6 any state after the
    last completed compaction's time; on 8/9 completed ones whose completion time is after it."""
    timeline = metadata.timeline
    last = metadata.latest_compaction()
    if not takes_fresh_time(metadata):
        return [i for i in timeline.filter_actions({DELTA_COMMIT})
                if last is None or i.timestamp > last.timestamp]
    finished = timeline.completion_times
    return [i for i in timeline.filter_completed().filter_actions({DELTA_COMMIT})
            if last is None or finished.get(i.timestamp, i.timestamp) > last.timestamp]


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


def compaction_due(metadata: MetadataTable, max_delta_commits: int = DEFAULT_MAX_DELTA_COMMITS,
                   now: datetime | None = None, *, fresh_time: str | None = None) -> str | None:
    """The instant time of the compaction the writer runs now, or None when it runs none.

    The NUM_COMMITS trigger over `deltacommits_since_compaction`; on version 6 also
    `validateTimelineBeforeSchedulingCompaction` (no data instant pending at or before the latest
    deltacommit) and the `<t>001` time; on 8/9 `fresh_compaction_time` (as of `now`, or `fresh_time`
    when the caller made it already), which must sort after the last compaction.
    """
    timeline = metadata.timeline
    latest = timeline.filter_completed().filter_actions({DELTA_COMMIT}).last()
    if latest is None or timeline.filter_actions({COMPACTION}).filter_pending():
        return None
    if len(deltacommits_since_compaction(metadata)) < max_delta_commits:
        return None
    if takes_fresh_time(metadata):
        instant_time = fresh_time or fresh_compaction_time(metadata, now)
        last = metadata.latest_compaction()
        if last is not None and instant_time <= last.timestamp:
            return None
    elif any(i.timestamp <= latest.timestamp for i in metadata.data_timeline.filter_pending()):
        return None
    else:
        instant_time = compaction_instant_time(latest.timestamp)
    return None if instant_time in timeline.filter_completed().timestamps else instant_time


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
    if kind in (COLUMN_STATS, PARTITION_STATS):
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
    return {key: record for key, record in sorted(records.items())
            if record is not None and not _deleted_secondary_key(record)}, schema_text


def _deleted_secondary_key(record: dict[str, Any]) -> bool:
    """A secondary-index record flagged deleted, which Hudi 1.x's payload writes as no record."""
    return record.get("type") == SECONDARY_INDEX and bool((record.get("SecondaryIndexMetadata") or {})
                                                          .get("isDeleted"))


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
def plan_entry(file_slice: MetadataFileSlice) -> dict[str, Any]:
    """One `HoodieCompactionOperation` of the plan: the slice's base file and log files by name."""
    base = file_slice.base_file
    return {
        "baseInstantTime": base.instant if base else file_slice.log_files[0].instant,
        "deltaFilePaths": [f.name for f in file_slice.log_files],
        "dataFilePath": base.name if base else None,
        "fileId": file_slice.file_id,
        "partitionPath": file_slice.partition,
        "metrics": compaction_metrics(base.size if base else None, [f.size for f in file_slice.log_files]),
        "bootstrapFilePath": None,
    }


def compaction_plan(metadata: MetadataTable, instant_time: str) -> dict[str, Any]:
    """The `HoodieCompactionPlan` of compaction `instant_time` over every file slice with log files
    (UnBoundedCompactionStrategy, which the metadata write config sets, keeps the operations in the
    order they are generated: metadata partition, then file group). On 8/9 a slice's log files are
    those of deltacommits completed before `instant_time` (an extra metadata map, empty, as 1.x)."""
    slices = [s for partition in metadata.partitions for s in metadata.file_slices(partition)]
    if takes_fresh_time(metadata):
        slices = [_completed_before(metadata, s, instant_time) for s in slices]
    operations = [plan_entry(s) for s in slices if s.log_files]
    return {"operations": operations, "extraMetadata": {} if takes_fresh_time(metadata) else None,
            "version": 2, "strategy": None, "preserveHoodieMetadata": False}


def _completed_before(metadata: MetadataTable, file_slice: MetadataFileSlice,
                      instant_time: str) -> MetadataFileSlice:
    """The slice with only the log files whose deltacommit completed before `instant_time` (one
    archived, before the timeline starts, counts as completed)."""
    committed, finished = metadata.block_filter.is_committed, metadata.timeline.completion_times
    logs = [f for f in file_slice.log_files
            if committed(f.instant) and finished.get(f.instant, f.instant) < instant_time]
    return MetadataFileSlice(file_slice.partition, file_slice.file_id, file_slice.base_file, logs)


def schedule_compaction(metadata: MetadataTable, instant_time: str) -> Instant:
    """Write `<instant_time>.compaction.requested` (the plan); returns the requested instant."""
    requested = Instant(instant_time, COMPACTION, State.REQUESTED)
    _create(metadata.storage, metadata.timeline.state_file_path(requested),
            serialize_metadata("HoodieCompactionPlan", compaction_plan(metadata, instant_time)))
    return requested


def read_compaction_plan(metadata: MetadataTable, instant_time: str) -> list[MetadataFileSlice]:
    """The file slices a requested compaction plan (ours or a Java writer's) merges, with the sizes of
    their files on storage; a planned file that is gone makes the plan unusable."""
    storage = metadata.storage
    rel = metadata.timeline.state_file_path(Instant(instant_time, COMPACTION, State.REQUESTED))
    plan = deserialize_metadata(storage.read(rel), "HoodieCompactionPlan", storage.uri(rel))
    slices = []
    for op in plan.get("operations") or []:
        partition = op["partitionPath"]
        data_file = op.get("dataFilePath")
        base = _planned_file(storage, rel, partition, data_file, parse_base_file_name(data_file)[2]) \
            if data_file else None
        logs = [_planned_file(storage, rel, partition, name, op["baseInstantTime"])
                for name in op.get("deltaFilePaths") or []]
        slices.append(MetadataFileSlice(partition, op["fileId"], base, logs))
    return slices


def _planned_file(storage: Storage, plan_rel: str, partition: str, name: str, instant: str) -> DataFile:
    status = storage.status(f"{partition}/{name}")
    if status is None:
        raise CorruptFileError(storage.uri(plan_rel), f"planned file {partition}/{name} does not exist")
    return DataFile(name, instant, status.size)


def default_write_token(task: int) -> str:
    return f"{task}-0-{task}"


def execute_compaction(metadata: MetadataTable, instant_time: str,
                       write_token: Callable[[int], str] = default_write_token, *,
                       listener: Listener = QUIET) -> Instant:
    """Execute the requested compaction `instant_time`: `.inflight`, a new HFile base file per planned
    slice, then `.commit` (the commit metadata). The `listener` hears `Step.COMPACTION_INFLIGHT`, each
    `COMPACTION_BASE_FILE_WRITTEN` and `COMPACTION_COMPLETED`, so a test can crash the run there."""
    started = time.monotonic()
    storage, timeline = metadata.storage, metadata.timeline
    operations = read_compaction_plan(metadata, instant_time)
    requested = Instant(instant_time, COMPACTION, State.REQUESTED)
    _create(storage, timeline.state_file_path(requested.with_state(State.INFLIGHT)), b"")
    listener.reached(Step.COMPACTION_INFLIGHT)
    stats: dict[str, list[WriteStat]] = {}
    schema = None
    for task, file_slice in enumerate(operations):
        records, schema_text = merged_records(storage, file_slice, metadata.block_filter)
        if schema_text is None or (not records and file_slice.base_file is None):
            continue  # nothing to keep and no base file to replace: Hudi writes no file either
        schema = schema_text
        name = f"{file_slice.file_id}_{write_token(task)}_{instant_time}{HFILE_EXTENSION}"
        data = base_file_bytes(records, schema_text, name)
        _create(storage, f"{file_slice.partition}/{name}", data)
        base = file_slice.base_file
        log_sizes = [f.size for f in file_slice.log_files]
        stats.setdefault(file_slice.partition, []).append(WriteStat.new(
            fileId=file_slice.file_id, path=f"{file_slice.partition}/{name}",
            prevCommit=base.instant if base else "null", numWrites=len(records),
            numInserts=len(records), totalWriteBytes=len(data), partitionPath=file_slice.partition,
            totalLogFilesCompacted=len(file_slice.log_files), totalLogSizeCompacted=sum(log_sizes),
            fileSizeInBytes=len(data),
            runtimeStats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0}))
        listener.reached(Step.COMPACTION_BASE_FILE_WRITTEN, task + 1)
    commit = CommitMetadata(in_java_hashmap_order(stats), compacted=True,
                            extra_metadata={"schema": schema} if schema else {}, operation_type="COMPACT")
    completed = Instant(instant_time, COMPACTION, State.COMPLETED)  # layout 2 names its completion
    metadata_bytes = timeline.commit_metadata_serde.serialize(commit)
    _create(storage, timeline.new_state_file_path(completed), metadata_bytes)
    listener.reached(Step.COMPACTION_COMPLETED)
    listener.finished(ServiceRun(COMPACTION, instant_time, int((time.monotonic() - started) * 1000),
                                 metadata_table=True, commit=commit))
    return Instant(instant_time, COMMIT, State.COMPLETED)


def compact(metadata: MetadataTable, instant_time: str,
            write_token: Callable[[int], str] = default_write_token) -> Instant:
    """Schedule and execute the metadata table's compaction at `instant_time`."""
    schedule_compaction(metadata, instant_time)
    return execute_compaction(metadata, instant_time, write_token)


def _create(storage: Storage, rel: str, data: bytes) -> None:
    """Write a new file; the compaction never overwrites one (Hudi creates them immutable)."""
    if not storage.create_if_absent(rel, data):
        raise HudiAssetsError(f"{storage.uri(rel)} exists already: compactions write new files only")


# ------------------------------------------------------------------------------------ recovery
def pending_compaction(metadata: MetadataTable) -> Instant | None:
    """The oldest pending compaction of the metadata table (its writers run one at a time)."""
    return metadata.timeline.filter_actions({COMPACTION}).filter_pending().first()


def roll_back_inflight_compaction(metadata: MetadataTable, instant_time: str, *,
                                  listener: Listener = QUIET) -> None:
    """Undo the files an inflight compaction wrote and return it to requested, as 0.15's
    `rollbackInflightCompaction` does before a compaction is executed again: a rollback instant
    (resumed when one of this compaction is pending) deletes the base files of `instant_time` in the
    planned partitions (listing-based: the metadata table's writer keeps no markers), keeping the
    compaction's state files; then its `.inflight` goes."""
    mdt = HoodieTable(metadata.storage, hoodie_conf=clock_skew_conf(metadata.clock_skew_ms))
    timeline = mdt.reload_timeline()
    rollback, plan = _pending_rollback_of(mdt, timeline, instant_time) or (None, None)
    if rollback is None:
        requests = []
        for file_slice in read_compaction_plan(metadata, instant_time):
            names, _ = metadata.storage.list_names(file_slice.partition)
            suffix = f"_{instant_time}{HFILE_EXTENSION}"
            written = [n for n in names if n.startswith(f"{file_slice.file_id}_") and n.endswith(suffix)]
            base = file_slice.base_file.instant if file_slice.base_file else ""
            requests += [RollbackRequest(file_slice.partition, file_slice.file_id, base,
                                         files_to_delete=(metadata.storage.uri(f"{file_slice.partition}/{n}"),))
                         for n in written]
        plan = RollbackPlan(instant_time, COMPACTION, tuple(requests))
        rollback_time = new_instant_time((i.timestamp for i in timeline.raw_instants),
                                         mdt.config.timeline_timezone, max_skew_ms=timeline.clock_skew_ms)
        rollback = Instant(rollback_time, ROLLBACK, State.REQUESTED)
        _create(metadata.storage, timeline.state_file_path(rollback), plan.serialize())
    log.info("rolling back inflight metadata table compaction %s at %s", instant_time, rollback.timestamp)
    RollbackActionExecutor(mdt, rollback, plan, listener=listener, delete_instant=False).execute()
    inflight = Instant(instant_time, COMPACTION, State.INFLIGHT)
    metadata.storage.delete_checked([timeline.state_file_path(inflight)])


def _pending_rollback_of(mdt: HoodieTable, timeline: ActiveTimeline,
                         instant_time: str) -> tuple[Instant, RollbackPlan] | None:
    """A pending rollback of compaction `instant_time` on the metadata table's `timeline`
    (`getPendingRollbackInfo` with compactions included), so a killed rollback is resumed rather
    than planned twice."""
    for instant in timeline.rollback_timeline().filter_pending():
        requested = Instant(instant.timestamp, ROLLBACK, State.REQUESTED)
        plan = RollbackPlan.deserialize(timeline.read_details(requested),
                                        mdt.storage.uri(timeline.state_file_path(requested)))
        if plan.action == COMPACTION and plan.instant_time == instant_time:
            return instant, plan
    return None


def complete_pending_compaction(metadata: MetadataTable, instant: Instant, *,
                                listener: Listener = QUIET) -> Instant:
    """Finish a pending compaction left by a crash (ours or a Java writer's) under its own instant
    time, never a second one beside it: an inflight one is rolled back to requested first."""
    if instant.state is State.INFLIGHT:
        roll_back_inflight_compaction(metadata, instant.timestamp, listener=listener)
    fresh = MetadataTable(metadata.data_storage, clock_skew_ms=metadata.clock_skew_ms)
    return execute_compaction(fresh, instant.timestamp, listener=listener)
