"""Create a data table's metadata table from a listing of storage, as Hudi 0.15's
`HoodieBackedTableMetadataWriter.initializeFromFilesystem` does when the metadata table is first
enabled (table version 6).

Order, as Hudi: the metadata table's `hoodie.properties`; then per metadata partition (`files` first):
the data table lists it in `hoodie.table.metadata.partitions.inflight`, each file group gets an empty
log file (a DELETE block without keys at the partition's init instant, write token `0-0-0`), the
partition's records are bulk-inserted at the init instant `<latest completed data instant><010 + n>`
(`createIndexInitTimestamp`), and the partition moves to `hoodie.table.metadata.partitions`.

The bulk insert (`bulkCommit` -> `bulkInsertPreppedRecords` with `SparkHoodieMetadataBulkInsertPartitioner`)
runs one Spark task per file group, which gets that group's records sorted by key; its create handle
(file id: the group's prefix plus `-0`) writes them into one HFile base file
`<fileId>_<task>-0-<task>_<instant>.hfile` after its CREATE marker; a file group given no record gets
no base file. The deltacommit's inflight file is empty (`SparkBulkInsertHelper`), its commit metadata
holds the create handles' write stats with operation BULK_INSERT (the prepped executor's), and the
marker directory goes on completion.

Table version 9 (Hudi 1.1's `generateUniqueInstantTime`, and the Java-written v9 metadata tables of
../shared): the metadata table is a version-9, layout-2 table of its own (`<t>_<c>.deltacommit` in
Avro); each partition is initialized at the first of `00000000000000000`, `...001`, ... not on its
timeline, whatever the data table's instants; records, HFile base files and the commit's `schema` use
1.1's metadata record schema. The empty log files' DELETE blocks are byte for byte 1.1's.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable, Iterable, Mapping

from hudi_assets.engine import LocalEngine
from hudi_assets.exceptions import HudiAssetsError, UnsupportedTableError
from hudi_assets.fsview import PARTITION_METAFILE, is_checksum_file, list_partitions, parse_base_file_name
from hudi_assets.logformat import BlockType, HeaderKey, LogBlock, LogFileName, encode_block
from hudi_assets.metadata.compaction import base_file_bytes, default_write_token
from hudi_assets.metadata.file_group import HFILE_EXTENSION
from hudi_assets.metadata.instants import MILLIS_INSTANT_ID_LENGTH, SOLO_COMMIT_TIMESTAMP
from hudi_assets.metadata.keys import BLOOM_FILTERS, COLUMN_STATS, FILES, file_group_id, file_group_index
from hudi_assets.metadata.payloads import (
    WRITER_SCHEMA,
    WRITER_SCHEMA_1_1,
    MetadataRecord,
    partition_files_record,
    partition_list_record,
    with_meta_fields,
)
from hudi_assets.metadata.writer import MetadataTableWriter
from hudi_assets.properties import format_properties
from hudi_assets.rollback.markers import delete_marker_dir, marker_dir
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_assets.timeline.instant import DELTA_COMMIT, Instant, State

METADATA_PARTITIONS = "hoodie.table.metadata.partitions"
METADATA_PARTITIONS_INFLIGHT = "hoodie.table.metadata.partitions.inflight"
BULK_INSERT = "BULK_INSERT"  # SparkBulkInsertPreppedDeltaCommitActionExecutor's operation type
# A version-3 DELETE block's content holding no key: version, length, an empty HoodieDeleteRecordList.
EMPTY_DELETE_CONTENT = struct.pack(">ii", 3, 1) + b"\x00"
INIT_WRITE_TOKEN = "0-0-0"  # HoodieLogFormat.DEFAULT_WRITE_TOKEN
PARTITION_INITIALIZATION_TIME_SUFFIX = 10
# hoodie.metadata.index.*.file.group.count defaults; `files` always has one file group.
DEFAULT_FILE_GROUP_COUNTS = {FILES: 1, COLUMN_STATS: 2, BLOOM_FILTERS: 4}
_ORDER = (FILES, COLUMN_STATS, BLOOM_FILTERS)  # MetadataPartitionType order


def writer_schema(data_table: HoodieTable) -> str:
    """The metadata record schema a writer of the data table's version writes (version 6 or 9)."""
    version = data_table.config.table_version
    if version in (6, 9):
        return WRITER_SCHEMA if version == 6 else WRITER_SCHEMA_1_1
    raise UnsupportedTableError(f"{data_table.base_path}: hudi-assets creates metadata tables of table "
                                f"version 6 or 9, not {version}")


def metadata_table_properties(data_table: HoodieTable) -> dict[str, str]:
    """The metadata table's `hoodie.properties` (HoodieBackedTableMetadataWriter.initializeMetaClient;
    version 9: as the Java-written v9 metadata tables of ../shared have it)."""
    writer_schema(data_table)  # refuses a version we do not write
    if data_table.config.is_hudi_1x:
        return {
            "hoodie.table.name": f"{data_table.config.name}_metadata",
            "hoodie.table.type": "MERGE_ON_READ",
            "hoodie.table.version": "9",
            "hoodie.table.initial.version": "9",
            "hoodie.archivelog.folder": "history",
            "hoodie.timeline.layout.version": "2",
            "hoodie.timeline.path": "timeline",
            "hoodie.timeline.history.path": "history",
            "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
            "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
            "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
            "hoodie.record.merge.mode": "CUSTOM",
            "hoodie.table.base.file.format": "HFILE",
            "hoodie.table.recordkey.fields": "key",
            "hoodie.populate.meta.fields": "false",
        }
    return {
        "hoodie.table.name": f"{data_table.config.name}_metadata",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": "6",
        "hoodie.archivelog.folder": "archived",
        "hoodie.timeline.layout.version": "1",
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
        "hoodie.table.base.file.format": "HFILE",
        "hoodie.table.recordkey.fields": "key",
        "hoodie.populate.meta.fields": "false",
        "hoodie.table.keygenerator.class": "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator",
    }


def index_init_timestamp(instant_time: str, offset: int) -> str:
    """`createIndexInitTimestamp`: the instant plus a three-digit suffix from 010."""
    return f"{instant_time}{PARTITION_INITIALIZATION_TIME_SUFFIX + offset:03d}"


def unique_init_timestamp(writer: MetadataTableWriter, initialization_time: str) -> str:
    """`generateUniqueCommitInstantTime`: the first init timestamp no metadata commit (in any state)
    has, so a partition initialized again after an interrupted attempt gets a fresh instant (1.x: the
    solo commit time plus n milliseconds, whatever `initialization_time`)."""
    taken = set(writer.open().reload_timeline().commits_timeline().timestamps)
    if writer.data_table.config.is_hudi_1x:
        candidates = (f"{n:0{MILLIS_INSTANT_ID_LENGTH}d}" for n in itertools.count())
    else:
        candidates = (index_init_timestamp(initialization_time, n) for n in itertools.count())
    return next(t for t in candidates if t not in taken)


def files_partition_records(data_table: HoodieTable, max_instant: str) -> list[MetadataRecord]:
    """`initializeFilesPartition`: every partition, and per partition its data files whose instant is
    at or before `max_instant` with their sizes (the partition metafile and checksums left out)."""
    extension = data_table.config.base_file_extension
    storage = data_table.storage
    listings = list_partitions(storage, LocalEngine())
    records = [partition_list_record([listing.partition for listing in listings])]
    for listing in listings:
        sizes = {s.name: s.size for s in storage.list(listing.partition) if not s.is_dir}
        files = {name: sizes[name] for name in listing.files
                 if name in sizes and _instant(name, extension) is not None
                 and _instant(name, extension) <= max_instant and sizes[name] > 0}
        records.append(partition_files_record(listing.partition, files))
    return records


def _instant(name: str, extension: str) -> str | None:
    """The instant of a data file (a log file's base instant), None for any other file."""
    if name.startswith(PARTITION_METAFILE) or is_checksum_file(name):
        return None
    if name.startswith("."):
        log = LogFileName.parse(name)
        return log.base_instant if log is not None and log.extension == "log" and not log.is_cdc else None
    parts = parse_base_file_name(name) if name.endswith(extension) else None
    return parts[2] if parts else None


def initialize_from_filesystem(data_table: HoodieTable, indexes: Mapping[str, Iterable[MetadataRecord]]
                               | None = None, file_group_counts: Mapping[str, int] | None = None,
                               completed_at: Callable[[str], str] | None = None) -> dict[str, str]:
    """Create the metadata table with its `files` partition from storage, plus the `column_stats` /
    `bloom_filters` partitions named in `indexes`, seeded with their records (may be empty).
    The caller holds the table lock. Returns metadata partition -> init instant. `completed_at`: see
    `MetadataTableWriter`."""
    indexes = dict(indexes or {})
    unknown = set(indexes) - set(_ORDER[1:])
    if unknown:
        raise ValueError(f"cannot initialize metadata partitions {sorted(unknown)}")
    if data_table.config.has_metadata_table:
        raise HudiAssetsError(f"{data_table.base_path}: the table already has a metadata table "
                              f"({METADATA_PARTITIONS}={','.join(data_table.config.metadata_partitions)})")
    counts = {**DEFAULT_FILE_GROUP_COUNTS, **(file_group_counts or {}), FILES: 1}
    writer = MetadataTableWriter(data_table, completed_at=completed_at)
    write_table_config(writer.storage, metadata_table_properties(data_table))
    latest = data_table.reload_timeline().filter_completed().last()
    initialization_time = latest.timestamp if latest else SOLO_COMMIT_TIMESTAMP
    done: dict[str, str] = {}
    for partition in (p for p in _ORDER if p == FILES or p in indexes):
        instant_time = unique_init_timestamp(writer, initialization_time)
        _set_partitions(data_table, inflight=[partition])
        _initialize_file_groups(writer, partition, instant_time, counts[partition])
        records = (files_partition_records(data_table, initialization_time) if partition == FILES
                   else list(indexes[partition]))
        bulk_commit(writer, partition, instant_time, records, counts[partition])
        _set_partitions(data_table, completed=[*data_table.config.metadata_partitions, partition])
        done[partition] = instant_time
    return done


def _set_partitions(data_table: HoodieTable, *, inflight: list[str] | None = None,
                    completed: list[str] | None = None) -> None:
    """`setMetadataPartitionsInflight` / `setMetadataPartitionState`: sorted, comma-separated."""
    props = dict(data_table.config.props)
    props[METADATA_PARTITIONS_INFLIGHT] = ",".join(sorted(inflight or []))
    if completed is not None:
        props[METADATA_PARTITIONS] = ",".join(sorted(set(completed)))
    data_table.config = write_table_config(data_table.storage, props)


def _initialize_file_groups(writer: MetadataTableWriter, partition: str, instant_time: str,
                            count: int) -> None:
    """`initializeFileGroups`: the partition emptied, its metafile, and per file group an empty log."""
    storage = writer.storage
    storage.delete_dir(partition)
    metafile = format_properties({"commitTime": instant_time, "partitionDepth": "1"},
                                 ["partition metadata"])
    storage.write(f"{partition}/{PARTITION_METAFILE}", metafile.encode("latin-1"))
    block = encode_block(LogBlock(BlockType.DELETE, {HeaderKey.INSTANT_TIME: instant_time},
                                  EMPTY_DELETE_CONTENT))
    for index in range(count):
        file_id = file_group_id(partition, index)
        name = LogFileName(file_id, instant_time, "log", 1, INIT_WRITE_TOKEN).format()
        storage.write(f"{partition}/{name}", block)


def bulk_commit(writer: MetadataTableWriter, partition: str, instant_time: str,
                records: Iterable[MetadataRecord], count: int) -> CommitMetadata:
    """`bulkCommit`: the records of one metadata partition as HFile base files of its `count` file
    groups, committed as deltacommit `instant_time`; returns the commit metadata."""
    groups: list[dict[str, MetadataRecord]] = [{} for _ in range(count)]
    for record in records:
        if record.partition != partition:
            raise ValueError(f"a record of metadata partition {record.partition!r} given for {partition!r}")
        group = groups[file_group_index(record.key, count)]
        if record.key in group:
            raise ValueError(f"metadata partition {partition}: record key {record.key!r} given twice")
        group[record.key] = record
    storage = writer.storage
    timeline = writer.open().reload_timeline()
    requested = Instant(instant_time, DELTA_COMMIT, State.REQUESTED)
    for state_file in (requested, requested.with_state(State.INFLIGHT)):
        if not storage.create_if_absent(timeline.state_file_path(state_file), b""):
            raise HudiAssetsError(f"{storage.uri(timeline.state_file_path(state_file))} exists already")
    schema = writer_schema(writer.data_table)
    stats = [_write_base_file(writer, partition, instant_time, index, group, schema=with_meta_fields(schema))
             for index, group in enumerate(groups) if group]
    metadata = CommitMetadata({partition: stats}, False, {"schema": schema}, BULK_INSERT)
    storage.create_if_absent(writer.new_completed_path(timeline, requested.with_state(State.COMPLETED)),
                             timeline.commit_metadata_serde.serialize(metadata))
    delete_marker_dir(storage, instant_time)
    return metadata


def _write_base_file(writer: MetadataTableWriter, partition: str, instant_time: str, index: int,
                     records: dict[str, MetadataRecord], *, schema: str) -> WriteStat:
    """One file group's HFile base file after its CREATE marker, and the create handle's write stat."""
    storage = writer.storage
    file_id = file_group_id(partition, index)
    name = f"{file_id}_{default_write_token(index)}_{instant_time}{HFILE_EXTENSION}"
    storage.create_if_absent(f"{marker_dir(instant_time)}/{partition}/{name}.marker.CREATE", b"")
    rows = {key: records[key].to_avro() for key in sorted(records)}
    data = base_file_bytes(rows, schema, name)
    path = f"{partition}/{name}"
    if not storage.create_if_absent(path, data):
        raise HudiAssetsError(f"{storage.uri(path)} exists already")
    return WriteStat.new(fileId=file_id, path=path, prevCommit="null", numWrites=len(rows),
                         numInserts=len(rows), totalWriteBytes=len(data), partitionPath=partition,
                         fileSizeInBytes=len(data),
                         runtimeStats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0})
