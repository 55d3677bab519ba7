"""What a clean records in the metadata table (Hudi 0.15's `HoodieTableMetadataUtil.convertMetadataToRecords`
for `HoodieCleanMetadata`), and which metadata tables a clean can keep in step.

- `files`: per cleaned partition, a file-list record deleting its `deletePathPatterns` (the planned
  files, deleted or not: a failed delete is retried by a later clean, as Hudi records it); the deleted
  partitions leave `__all_partitions__`.
- `bloom_filters`: a delete record per deleted base file.
- `column_stats`: a delete record per indexed column of each deleted `.parquet` file. The indexed
  columns are a writer setting: `hoodie.metadata.index.column.stats.column.list` when given, else the
  columns the index holds stats of for that file.
- `record_index`: untouched (a clean deletes no live record).

Hudi 1.x (table versions 8, 9; apache/hudi HoodieTableMetadataUtil.convertMetadataToRecords for
clean, id 10329564, and HoodieColumnRangeMetadata.stub @017a4cc0) differs:
- `column_stats`: a stub per indexed column of every deleted file, log files included; the columns
  are the `column_stats` index definition's source fields (`.hoodie/.index_defs/index.json`) where
  there is one. On version 9 (column stats V2) a stub carries `valueType` NULL.
- expression indexes (`expr_index_*`, HoodieTableMetadataUtil.PARTITION_NAME_EXPRESSION_INDEX_PREFIX):
  per index definition, bloom-filter or column-stats delete records (of the definition's source
  fields), in the index's own partition.
- `partition_stats`, `record_index`, `secondary_index_*`: untouched (their `buildClean` returns nothing).
- A deleted partition's `files` record is a delete in Hudi 1.x; hudi-assets writes no delete blocks, so
  it records the partition's files deleted as 0.15 does, and `__all_partitions__` drops it either way.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from fastavro import schemaless_reader

from hudi_assets import config_options as opt
from hudi_assets.exceptions import CorruptFileError, HudiAssetsError, UnsupportedTableError
from hudi_assets.fsview import parse_base_file_name
from hudi_assets.hfile import HFileReader
from hudi_assets.logformat import BlockType, HeaderKey
from hudi_assets.logformat.delete_block import decode_delete_block
from hudi_assets.logformat.hfile_block import avro_schema
from hudi_assets.metadata.file_group import valid_log_blocks
from hudi_assets.metadata.keys import BLOOM_FILTERS, COLUMN_STATS, FILES, RECORD_INDEX, bloom_filter_key
from hudi_assets.metadata.payloads import (
    NULL_VALUE_TYPE,
    MetadataRecord,
    bloom_filter_delete_record,
    column_stats_delete_record,
    partition_files_record,
    partition_list_record,
)
from hudi_assets.metadata.table import METADATA_FOLDER, MetadataTable
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import PROPERTIES_FILE
from hudi_assets.timeline.instant import COMPACTION, LOG_COMPACTION
from hudi_assets.timeline.instant_time import clock_skew_conf
from hudi_assets.timeline.timeline import ActiveTimeline

UPDATABLE_PARTITIONS = frozenset({FILES, COLUMN_STATS, BLOOM_FILTERS, RECORD_INDEX})
# Hudi 1.x partitions a clean leaves alone (prefixes: one partition per index definition).
PARTITION_STATS = "partition_stats"
UNTOUCHED_1X = (PARTITION_STATS, "secondary_index_")
EXPRESSION_INDEX = "expr_index_"  # the issue says expression_index_*; 1.x names them expr_index_*
# Table versions whose metadata table hudi-assets writes: each with the data table of its version.
WRITTEN_METADATA_VERSIONS = frozenset({6, 8, 9})
_ID_LENGTH = 12  # base64 of a 64-bit ColumnIndexID, the prefix of a column_stats key


def open_metadata_table(table: HoodieTable) -> HoodieTable:
    """The metadata table of `table`, as a MERGE_ON_READ table of its own, its times allowing for
    `table`'s clock skew (Hudi 1.x's metadata writer takes the data write config's time generator
    settings): the run that opened it for its refusal checks writes through it."""
    return HoodieTable(f"{table.base_path}/{METADATA_FOLDER}", table.storage.options,
                       hoodie_conf=clock_skew_conf(table.clock_skew_ms))


def _updatable(table: HoodieTable, definitions: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The metadata partitions a clean of `table` keeps in step or leaves alone as Hudi does."""
    if not table.config.is_hudi_1x:
        return set(UPDATABLE_PARTITIONS)
    expression = {name for name, d in definitions.items() if name.startswith(EXPRESSION_INDEX)
                  and str(d.get("indexType", "")).lower() in (BLOOM_FILTERS, COLUMN_STATS)}
    return {p for p in table.config.metadata_partitions
            if p in UPDATABLE_PARTITIONS or p.startswith(UNTOUCHED_1X) or p in expression}


def refuse_unknown_partitions(table: HoodieTable, action: str = "clean", *,
                              pending_compaction: bool = True) -> HoodieTable:
    """Refuse (before anything is written) a metadata table that `action` (a clean, a rollback)
    cannot keep in step: one without its own table, of another table version, with a partition being
    built, with a partition we do not know how to update, or (with `pending_compaction`) with a
    pending compaction. Returns the metadata table it opened, for the run to write through
    (`MetadataTableWriter`). A pending compaction is a crashed one only when seen under the table's
    lock (a writer compacts while holding it): a caller that does not hold it yet checks it later."""
    config = table.config
    where = table.storage.uri(PROPERTIES_FILE)
    updatable = _updatable(table, table.index_definitions)
    unknown = sorted(set(config.metadata_partitions) - updatable)
    if unknown:
        raise UnsupportedTableError(
            f"{where}: the metadata table has partition(s) {', '.join(unknown)}, which hudi-assets cannot "
            f"keep in step with a {action} (it updates {', '.join(sorted(UPDATABLE_PARTITIONS))}"
            f"{' and leaves partition_stats and secondary indexes alone' if len(updatable) > 4 else ''}); "
            f"let Hudi {action} this table")
    building = [p for p in (config.get("hoodie.table.metadata.partitions.inflight") or "").split(",") if p]
    if building:
        raise UnsupportedTableError(
            f"{where}: metadata partition(s) {', '.join(building)} are being built "
            "(hoodie.table.metadata.partitions.inflight); let the indexer finish first")
    mdt_properties = f"{METADATA_FOLDER}/{PROPERTIES_FILE}"
    if not table.storage.exists(mdt_properties):
        raise UnsupportedTableError(
            f"{where} lists metadata partitions but {table.storage.uri(mdt_properties)} is missing")
    mdt = open_metadata_table(table)
    if mdt.config.table_version not in WRITTEN_METADATA_VERSIONS or \
            mdt.config.table_version != config.table_version:
        raise UnsupportedTableError(f"{mdt.storage.uri(PROPERTIES_FILE)}: metadata table version "
                                    f"{mdt.config.table_version} beside data table version "
                                    f"{config.table_version}; "
                                    "hudi-assets writes a metadata table of its data table's version "
                                    f"({', '.join(map(str, sorted(WRITTEN_METADATA_VERSIONS)))})")
    if pending_compaction:
        refuse_pending_compaction(mdt, action)
    return mdt


def refuse_pending_compaction(mdt: HoodieTable, action: str) -> ActiveTimeline:
    """A pending (log) compaction of the metadata table, a writer's that died mid-way: a deltacommit
    written beside it would be merged wrongly, so nothing is done until it completes. Checked before
    the first delete, not only when the metadata table is written. A compaction is finished by
    `hudi-assets metadata PATH --compact`; a log compaction (which we do not run) by the writer.
    Returns the metadata table's timeline it read, for a writer to go on with."""
    timeline = mdt.reload_timeline()
    pending = timeline.filter_actions({COMPACTION, LOG_COMPACTION}).filter_pending()
    if pending:
        data_path = mdt.base_path[:-len(METADATA_FOLDER) - 1]
        way_out = ("let the table's writer finish it first"
                   if pending.filter_actions({LOG_COMPACTION}) else
                   f"finish it with `hudi-assets metadata {data_path} --compact` (add --no-active-writer "
                   "when the writers are stopped) or let the table's writer finish it first")
        raise HudiAssetsError(
            f"{mdt.storage.base_uri}: the metadata table has a pending compaction "
            f"({', '.join(pending.timestamps)}); hudi-assets does not {action} until it completes: "
            f"{way_out}. Nothing was changed")
    return timeline


def clean_records(table: HoodieTable, clean_metadata: Mapping[str, Any], instant_time: str
                  ) -> list[MetadataRecord]:
    """The metadata records of a completed clean's `HoodieCleanMetadata` record."""
    partitions = set(table.config.metadata_partitions)
    cleaned = {p: list(stat.get("deletePathPatterns") or [])
               for p, stat in (clean_metadata.get("partitionMetadata") or {}).items()}
    records = [partition_files_record(p, deleted=names) for p, names in cleaned.items()]
    deleted = [p for p, stat in (clean_metadata.get("partitionMetadata") or {}).items()
               if stat.get("isPartitionDeleted")]
    if deleted:
        records.append(partition_list_record(deleted, is_deleted=True))
    base_files = [(p, n) for p, names in cleaned.items() for n in names
                  if not n.startswith(".") and parse_base_file_name(n) is not None]
    if BLOOM_FILTERS in partitions:
        records += [bloom_filter_delete_record(p, n, instant_time) for p, n in base_files]
    if table.config.is_hudi_1x:  # the records of Hudi 1.x (module docstring)
        return records + _records_1x(table, partitions, cleaned, base_files, instant_time)
    if COLUMN_STATS in partitions:
        parquet = [(p, n) for p, n in base_files if n.endswith(".parquet")]
        configured = _configured_columns(table)
        columns = ({f: configured for f in parquet} if configured
                   else indexed_columns(MetadataTable(table.storage), parquet))
        records += [column_stats_delete_record(p, n, c) for p, n in parquet for c in columns.get((p, n), [])]
    return records


def _configured_columns(table: HoodieTable) -> list[str]:
    listed = table.write_config.get(opt.METADATA_COLUMN_STATS_COLUMNS)
    return [c.strip() for c in listed.split(",") if c.strip()]


def _records_1x(table: HoodieTable, partitions: set[str], cleaned: Mapping[str, list[str]],
                base_files: list[tuple[str, str]], instant_time: str) -> list[MetadataRecord]:
    """The `column_stats` and `expr_index_*` records of a Hudi 1.x clean (module docstring)."""
    definitions = table.index_definitions
    value_type = NULL_VALUE_TYPE if table.config.table_version >= 9 else None
    every_file = [(p, n) for p, names in cleaned.items() for n in names]

    def stubs(columns_of: Mapping[tuple[str, str], list[str]], into: str) -> list[MetadataRecord]:
        return [replace(column_stats_delete_record(p, n, c, value_type), partition=into)
                for p, n in every_file for c in columns_of.get((p, n), [])]

    records: list[MetadataRecord] = []
    if COLUMN_STATS in partitions and every_file:
        fields = list((definitions.get(COLUMN_STATS) or {}).get("sourceFields") or _configured_columns(table))
        columns = ({f: fields for f in every_file} if fields
                   else indexed_columns(MetadataTable(table.storage), every_file))
        records += stubs(columns, COLUMN_STATS)
    for name, definition in definitions.items():
        if not name.startswith(EXPRESSION_INDEX) or name not in partitions:
            continue
        if str(definition.get("indexType", "")).lower() == BLOOM_FILTERS:
            records += [replace(bloom_filter_delete_record(p, n, instant_time), partition=name)
                        for p, n in base_files]
        else:
            fields = list(definition.get("sourceFields") or [])
            records += stubs({f: fields for f in every_file}, name)
    return records


def indexed_columns(metadata: MetadataTable, files: Iterable[tuple[str, str]]
                    ) -> dict[tuple[str, str], list[str]]:
    """(data partition, file name) -> the columns the `column_stats` partition holds live stats of,
    read as the merged view of each file group (only the rows of the wanted files are decoded)."""
    wanted = {bloom_filter_key(p, n): (p, n) for p, n in files}
    if not wanted:
        return {}
    live: dict[str, str | None] = {}  # column_stats key -> column name, None once deleted
    for file_slice in metadata.file_slices(COLUMN_STATS):
        if file_slice.base_file is not None:
            rel = file_slice.path(file_slice.base_file)
            reader = HFileReader(metadata.storage.read(rel), name=metadata.storage.uri(rel))
            schema = reader.file_info.get(b"schema")
            if schema is None:
                raise CorruptFileError(reader.name, "the HFile's file info has no Avro schema")
            _collect(reader, schema.decode("utf-8"), wanted, live)
        for path, block in valid_log_blocks(metadata.storage, file_slice, metadata.block_filter):
            if block.block_type is BlockType.DELETE:
                live.update((key, None) for key in decode_delete_block(block, path=path) if key in live)
            elif block.block_type is BlockType.HFILE_DATA:
                _collect(HFileReader(block.content, name=path), block.header.get(HeaderKey.SCHEMA, ""),
                         wanted, live)
    columns: dict[tuple[str, str], list[str]] = {}
    for key, column in live.items():
        if column is not None:
            columns.setdefault(wanted[key[_ID_LENGTH:]], []).append(column)
    return {file: sorted(names) for file, names in columns.items()}


def _collect(reader: HFileReader, schema_text: str, wanted: Mapping[str, tuple[str, str]],
             live: dict[str, str | None]) -> None:
    """Merge the rows of `reader` that belong to wanted files into `live` (newer rows win)."""
    schema = None
    for row, value in reader.entries():
        key = row.decode("utf-8", errors="replace")
        if key[_ID_LENGTH:] not in wanted:
            continue
        schema = schema or avro_schema(schema_text, reader.name, "column_stats records")
        try:
            stats = schemaless_reader(io.BytesIO(value), schema, None).get("ColumnStatsMetadata") or {}
        except Exception as exc:  # fastavro raises many kinds for bad bytes
            raise CorruptFileError(reader.name,
                                   f"column_stats record {key!r} cannot be decoded: {exc!r}") from exc
        live[key] = None if stats.get("isDeleted") else stats.get("columnName")
