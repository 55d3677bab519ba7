"""The bytes of the files a Hudi 0.14/0.15 Spark writer leaves in a table, for the demo generator.

Everything here is a pure function of its arguments (no I/O): the table's Avro schemas in the three
textual forms Hudi uses, parquet base files with Hudi's footer, AVRO_DATA log files, partition
metadata, markers, and Java `HashMap` iteration order (Hudi serialises its maps in that order).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_assets import bloom
from hudi_assets.logformat import HeaderKey, encode_avro_data_block, encode_block

META_FIELDS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
# Data columns before the partition column: (name, Avro type). `ts` is the precombine field, `id` the key.
DATA_FIELDS = (
    ("ts", "long"), ("id", "string"), ("rider", "string"), ("driver", "string"), ("fare", "double"),
)
RECORD_KEY_FIELD = "id"
PRECOMBINE_FIELD = "ts"
_ARROW_TYPES = {"string": pa.string(), "long": pa.int64(), "double": pa.float64()}
_AVRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _compact(obj: Any) -> str:
    """JSON as Java Avro's `Schema.toString()` and Jackson's default writer print it."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class TableSchema:
    """A demo table's schema, named as Spark's Hudi writer names it (`<table>_record`, `hoodie.<table>`)."""

    def __init__(self, table_name: str, partition_field: str):
        if not _AVRO_NAME.match(table_name) or not _AVRO_NAME.match(partition_field):
            raise ValueError(f"table {table_name!r} / partition field {partition_field!r}: not Avro names")
        self.table_name = table_name
        self.partition_field = partition_field
        self.fields: tuple[tuple[str, str], ...] = (*DATA_FIELDS, (partition_field, "string"))

    def _record(self, fields: list[dict[str, Any]]) -> dict[str, Any]:
        return {"type": "record", "name": f"{self.table_name}_record",
                "namespace": f"hoodie.{self.table_name}", "fields": fields}

    @cached_property
    def create_schema(self) -> str:
        """`hoodie.table.create.schema`: Spark's converted schema, type first, no defaults."""
        return _compact(self._record([{"name": n, "type": [t, "null"]} for n, t in self.fields]))

    @cached_property
    def writer_schema(self) -> str:
        """Commit `extraMetadata.schema`: the writer schema without meta fields."""
        fields = [{"name": n, "type": ["null", t], "default": None} for n, t in self.fields]
        return _compact(self._record(fields))

    @cached_property
    def writer_schema_with_meta(self) -> str:
        """The schema of base files (`parquet.avro.schema`) and log blocks (SCHEMA header)."""
        meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_FIELDS]
        data = [{"name": n, "type": ["null", t], "default": None} for n, t in self.fields]
        return _compact(self._record(meta + data))

    @cached_property
    def arrow_schema(self) -> pa.Schema:
        columns = [(n, pa.string()) for n in META_FIELDS] + [(n, _ARROW_TYPES[t]) for n, t in self.fields]
        return pa.schema([pa.field(n, t, nullable=True) for n, t in columns])

    @property
    def column_names(self) -> list[str]:
        return [*META_FIELDS, *(n for n, _ in self.fields)]


def parquet_base_file(schema: TableSchema, rows: Sequence[Mapping[str, Any]], *,
                      bloom_entries: int = bloom.DEFAULT_NUM_ENTRIES,
                      bloom_fpp: float = bloom.DEFAULT_FPP) -> bytes:
    """A base file as Hudi's `HoodieAvroParquetWriter` writes it: meta columns first, gzip, and the
    footer entries Hudi's bloom index and readers use (bloom filter, min/max record key, Avro schema)."""
    columns = {name: [row[name] for row in rows] for name in schema.column_names}
    table = pa.table(columns, schema=schema.arrow_schema)
    keys = columns["_hoodie_record_key"]
    footer = {
        "hoodie_min_record_key": min(keys),
        "org.apache.hudi.bloomfilter": bloom.serialize(keys, bloom_entries, bloom_fpp),
        "hoodie_max_record_key": max(keys),
        "hoodie_bloom_filter_type_code": bloom.TYPE_CODE,
        "writer.model.name": "avro",
        "parquet.avro.schema": schema.writer_schema_with_meta,
    }
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, schema.arrow_schema, compression="gzip", store_schema=False) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(footer)
    return sink.getvalue().to_pybytes()


def avro_log_file(schema_text: str, instant: str, rows: Iterable[Mapping[str, Any]]) -> bytes:
    """A log file of one AVRO_DATA block written by `instant`, as a 0.14/0.15 append handle writes
    it (header INSTANT_TIME then SCHEMA, the writer schema with meta fields)."""
    header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: schema_text}
    return encode_block(encode_avro_data_block(rows, schema_text, header))


def java_date(moment: datetime) -> str:
    """`java.util.Date.toString()` of an instant, in UTC (`Mon Mar 31 03:06:44 UTC 2025`)."""
    utc = moment.astimezone(UTC) if moment.tzinfo else moment
    days = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    return (f"{days[utc.weekday()]} {months[utc.month - 1]} {utc.day:02d} "
            f"{utc:%H:%M:%S} UTC {utc.year}")


def partition_metadata(commit_time: str, depth: int, saved_at: datetime) -> bytes:
    """`.hoodie_partition_metadata` (`HoodiePartitionMetadata`, Java Properties text format)."""
    return (f"#partition metadata\n#{java_date(saved_at)}\n"
            f"commitTime={commit_time}\npartitionDepth={depth}\n").encode()


def marker_name(partition: str, file_name: str, io_type: str) -> str:
    """A write marker (`<partition>/<data file>.marker.<CREATE|MERGE|APPEND>`), relative to the
    marker directory. 0.x names APPEND markers after the slice's base file name."""
    return f"{partition}/{file_name}.marker.{io_type}" if partition else f"{file_name}.marker.{io_type}"


def timeline_server_markers(markers: Iterable[str]) -> dict[str, bytes]:
    """Files of a TIMELINE_SERVER_BASED marker directory (Spark's default marker type)."""
    return {
        "MARKERS.type": b"TIMELINE_SERVER_BASED",
        "MARKERS0": "".join(f"{m}\n" for m in markers).encode(),
    }
