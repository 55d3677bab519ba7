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
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
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
from hudi_assets.timeline.timeline import ActiveTimeline

UPDATABLE_PARTITIONS = frozenset({FILES, COLUMN_STATS, BLOOM_FILTERS, RECORD_INDEX})
_ID_LENGTH = 12  # base64 of a 64-bit ColumnIndexID, the prefix of a column_stats key


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
    unknown = sorted(set(config.metadata_partitions) - UPDATABLE_PARTITIONS)
    if unknown:
        raise UnsupportedTableError(
            f"{where}: the metadata table has partition(s) {', '.join(unknown)}, which hudi-assets cannot "
            f"keep in step with a {action} (it updates {', '.join(sorted(UPDATABLE_PARTITIONS))}); let Hudi "
            f"{action} this table")
    building = [p for p in (config.get("hoodie.table.metadata.partitions.inflight") or "").split(",") if p]
    if building:
        raise UnsupportedTableError(
            f"{where}: metadata partition(s) {', '.join(building)} are being built "
            "(hoodie.table.metadata.partitions.inflight); let the indexer finish first")
    mdt_properties = f"{METADATA_FOLDER}/{PROPERTIES_FILE}"
    if not table.storage.exists(mdt_properties):
        raise UnsupportedTableError(
            f"{where} lists metadata partitions but {table.storage.uri(mdt_properties)} is missing")
    mdt = HoodieTable(f"{table.base_path}/{METADATA_FOLDER}", table.storage.options)
    if mdt.config.table_version != 6:
        raise UnsupportedTableError(f"{mdt.storage.uri(PROPERTIES_FILE)}: metadata table version "
                                    f"{mdt.config.table_version}; only version 6 is written")
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
    if COLUMN_STATS in partitions:
        parquet = [(p, n) for p, n in base_files if n.endswith(".parquet")]
        configured = [c.strip() for c in table.write_config.get(opt.METADATA_COLUMN_STATS_COLUMNS).split(",")
                      if c.strip()]
        columns = ({f: configured for f in parquet} if configured
                   else indexed_columns(MetadataTable(table.storage), parquet))
        records += [column_stats_delete_record(p, n, c) for p, n in parquet for c in columns.get((p, n), [])]
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
