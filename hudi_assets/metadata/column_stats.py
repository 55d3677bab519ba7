"""The values of the metadata table's `column_stats` and `bloom_filters` records for data files.

A writer with the column stats index computes, per data file and indexed column, what Hudi's
`HoodieColumnRangeMetadata` holds: for a base file from its parquet footer
(`ParquetUtils.readRangeFromParquetMetadata`: per column chunk min/max/null count/value count and
compressed/uncompressed size, combined over row groups), for a log file from the records its append
wrote (`HoodieTableMetadataUtil.collectColumnRangeMetadata`: no sizes, which parquet alone knows).
The indexed columns are `hoodie.metadata.index.column.stats.column.list`, or when empty every field
of the writer schema with the meta fields (`getColumnsToIndex`). The `bloom_filters` record carries
the bloom filter a base file's footer holds, as `HoodieFileReader.readBloomFilter` reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.metadata.payloads import ColumnRange, wrap

Wrapped = tuple[str, dict[str, Any]]  # a min/max value in its wrapper record: (wrapper name, {"value": v})

BLOOM_FILTER_FOOTER_KEY = "org.apache.hudi.bloomfilter"
BLOOM_FILTER_TYPE_FOOTER_KEY = "hoodie_bloom_filter_type_code"
SIMPLE_BLOOM_FILTER_TYPE = "SIMPLE"  # a footer without a type code holds Hudi's plain bloom filter
# `wrapValueIntoAvro` picks the min/max wrapper by the Java class of the value: by the parquet
# physical type (strings are UTF8 binaries) for base files, by the Avro type for log records.
_PARQUET_WRAPPERS = {"INT32": "IntWrapper", "INT64": "LongWrapper", "FLOAT": "FloatWrapper",
                     "DOUBLE": "DoubleWrapper", "BOOLEAN": "BooleanWrapper", "BYTE_ARRAY": "BytesWrapper"}
_AVRO_WRAPPERS = {"int": "IntWrapper", "long": "LongWrapper", "float": "FloatWrapper",
                  "double": "DoubleWrapper", "boolean": "BooleanWrapper", "bytes": "BytesWrapper",
                  "string": "StringWrapper"}


def _combine(one: ColumnRange, other: ColumnRange) -> ColumnRange:
    """`ParquetUtils.combineRanges`: the range of a column over two row groups of the same file."""
    return ColumnRange(
        one.column, _pick(one.min_value, other.min_value, min), _pick(one.max_value, other.max_value, max),
        one.null_count + other.null_count, one.value_count + other.value_count,
        one.total_size + other.total_size, one.total_uncompressed_size + other.total_uncompressed_size)


def _pick(one: Wrapped | None, other: Wrapped | None, choose) -> Wrapped | None:
    if one is None or other is None:
        return other if one is None else one
    return choose(one, other, key=lambda wrapped: wrapped[1]["value"])


def _wrapped(wrapper: str, value: Any) -> Wrapped | None:
    return None if value is None else wrap(wrapper, value)


def columns_to_index(configured: Sequence[str], schema_fields: Sequence[str]) -> list[str]:
    """`getColumnsToIndex`: the configured column list, else every field of the writer schema with
    the meta fields, in schema order."""
    return list(configured) if configured else list(schema_fields)


def parquet_column_ranges(metadata: pq.FileMetaData, columns: Sequence[str]) -> list[ColumnRange]:
    """`readRangeFromParquetMetadata`: the ranges of `columns` in a parquet file, from its footer.

    Strings come back as `str` (parquet UTF8), other binaries as `bytes`; a column absent from the
    file has no range (Hudi filters the footer's chunks by name); nor, for now, has a column of a
    logical type other than strings and plain numbers (dates, decimals, timestamps).
    """
    wanted = set(columns)
    ranges: dict[str, ColumnRange] = {}
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            name = chunk.path_in_schema
            if name not in wanted:
                continue
            wrapper = _parquet_wrapper(chunk)
            if wrapper is None:
                continue
            stats = chunk.statistics
            has_range = stats is not None and stats.has_min_max
            found = ColumnRange(
                name, _wrapped(wrapper, stats.min if has_range else None),
                _wrapped(wrapper, stats.max if has_range else None),
                stats.null_count if stats is not None and stats.has_null_count else 0,
                chunk.num_values, chunk.total_compressed_size, chunk.total_uncompressed_size)
            ranges[name] = _combine(ranges[name], found) if name in ranges else found
    return [ranges[name] for name in columns if name in ranges]


def _parquet_wrapper(chunk: pq.ColumnChunkMetaData) -> str | None:
    logical = chunk.statistics.logical_type.type if chunk.statistics is not None else "NONE"
    if chunk.physical_type == "BYTE_ARRAY" and logical == "STRING":
        return "StringWrapper"
    if logical not in ("NONE", "INT", "STRING"):
        return None
    return _PARQUET_WRAPPERS.get(chunk.physical_type)


def read_parquet_footer(data: bytes, path: str) -> pq.FileMetaData:
    """The footer of a parquet file's bytes; a file that is not parquet is a corrupt file."""
    try:
        return pq.ParquetFile(pa.BufferReader(data)).metadata
    except (pa.ArrowException, OSError) as exc:
        raise CorruptFileError(path, f"not a readable parquet file: {exc}") from exc


def record_column_ranges(records: Iterable[Mapping[str, Any]],
                         columns: Mapping[str, str]) -> list[ColumnRange]:
    """`collectColumnRangeMetadata` (0.14/0.15): ranges over the records a log file's append wrote.

    `columns`: indexed column -> its Avro type (without the null branch). A null counts in
    `null_count`, a value in `value_count`; sizes are 0 (Hudi keeps parquet's sizes apart from other
    encodings'). Every indexed column gets a range, empty when no record was seen.
    """
    unknown = {column: kind for column, kind in columns.items() if kind not in _AVRO_WRAPPERS}
    if unknown:
        raise ValueError(f"column stats of Avro types {unknown} are not supported")
    lows: dict[str, Any] = {}
    highs: dict[str, Any] = {}
    nulls = dict.fromkeys(columns, 0)
    values = dict.fromkeys(columns, 0)
    for record in records:
        for column in columns:
            value = record.get(column)
            if value is None:
                nulls[column] += 1
                continue
            values[column] += 1
            if column not in lows or value < lows[column]:
                lows[column] = value
            if column not in highs or value > highs[column]:
                highs[column] = value
    return [ColumnRange(column, _wrapped(_AVRO_WRAPPERS[kind], lows.get(column)),
                        _wrapped(_AVRO_WRAPPERS[kind], highs.get(column)), nulls[column], values[column],
                        0, 0) for column, kind in columns.items()]


@dataclass(frozen=True)
class FooterBloomFilter:
    """The bloom filter of a base file's footer: its type code and serialized text."""

    type_code: str
    serialized: str

    @property
    def payload(self) -> bytes:
        """What the `bloom_filters` record stores: the serialized text's UTF-8 bytes."""
        return self.serialized.encode("utf-8")


def footer_bloom_filter(metadata: pq.FileMetaData, path: str) -> FooterBloomFilter:
    """The bloom filter Hudi's writer put into a parquet footer (`readBloomFilter`)."""
    footer = {k.decode("utf-8"): v.decode("utf-8") for k, v in (metadata.metadata or {}).items()}
    serialized = footer.get(BLOOM_FILTER_FOOTER_KEY)
    if not serialized:
        raise CorruptFileError(path, f"the parquet footer has no {BLOOM_FILTER_FOOTER_KEY} entry")
    return FooterBloomFilter(footer.get(BLOOM_FILTER_TYPE_FOOTER_KEY) or SIMPLE_BLOOM_FILTER_TYPE, serialized)
