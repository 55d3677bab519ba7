"""`HoodieMetadataRecord`s as Hudi 0.15's `HoodieMetadataPayload` builds them, and their bytes in an
HFILE_DATA block.

Schema: 0.15's `HoodieMetadata.avsc` as Java's `Schema.toString()` prints the generated class, with
the five `_hoodie_*` meta fields in front: the append handle writes log blocks with the write schema
plus meta fields even though the metadata table does not populate them (so they are null), and the
block's SCHEMA header carries that schema. 1.x added `isTightBound`, `position`,
`SecondaryIndexMetadata` and a `LocalDateWrapper` branch; 0.15 readers know none of them, so they
are not written.

The record key lives in the HFile row; `HoodieHFileDataBlock` blanks the `key` field of the value.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from fastavro import parse_schema, schemaless_writer
from fastavro.types import Schema

from hudi_assets.avro.schemas import NAMESPACE, NO_DEFAULT, field
from hudi_assets.java_collections import java_hashmap_order, java_string_hash
from hudi_assets.metadata.keys import (
    ALL_PARTITIONS_KEY,
    BLOOM_FILTERS,
    COLUMN_STATS,
    FILES,
    bloom_filter_key,
    column_stats_key,
    files_key,
    partition_identifier,
)

# HoodieMetadataPayload.METADATA_TYPE_*
PARTITION_LIST = 1
FILE_LIST = 2
COLUMN_STATS_TYPE = 3
BLOOM_FILTER_TYPE = 4

META_FIELDS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
               "_hoodie_partition_path", "_hoodie_file_name")
_STRING = {"type": "string", "avro.java.string": "String"}
_WRAPPERS = (
    ("BooleanWrapper", "boolean", "boolean"),
    ("IntWrapper", "int", "int"),
    ("LongWrapper", "long", "long"),
    ("FloatWrapper", "float", "float"),
    ("DoubleWrapper", "double", "double"),
    ("BytesWrapper", "bytes", "bytes"),
    ("StringWrapper", "string", _STRING),
    ("DateWrapper", "Date logical", "int"),
    ("DecimalWrapper", "Decimal logical", {"type": "bytes", "logicalType": "decimal", "precision": 30,
                                           "scale": 15}),
    ("TimeMicrosWrapper", "Time-micros logical", {"type": "long", "logicalType": "time-micros"}),
    ("TimestampMicrosWrapper", "Timestamp-micros logical", "long"),
)
WRAPPER_NAMES = tuple(name for name, _, _ in _WRAPPERS)
_FILE_ID_DOC = ("{} \nA UUID based fileId is stored as 3 pieces in RLI (fileIdHighBits, fileIdLowBits and "
                "fileIndex). \nFileID format is {{UUID}}-{{fileIndex}}.")


def _field(name: str, type_: Any, doc: str | None = None, default: Any = NO_DEFAULT) -> dict[str, Any]:
    """`avro.schemas.field` with the doc first, as HoodieMetadata.avsc lists it."""
    return field(name, type_, default, doc)


def _record(name: str, fields: list[dict[str, Any]], doc: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "record", "name": name}
    if doc is not None:
        out["doc"] = doc
    out["fields"] = fields
    return out


def _optional(name: str, type_: Any, doc: str) -> dict[str, Any]:
    return _field(name, ["null", type_], doc, None)


def _schema(hudi_1_1: bool = False) -> dict[str, Any]:
    """0.15's schema, or with `hudi_1_1` 1.1's (table version 9): two more value wrappers, a column
    range's `isTightBound` and `valueType`, a record index entry's `position`, and the secondary index's
    record (checked equal to the `schema` of the Java-written v9 metadata tables of ../shared)."""
    wrappers = [_record(name, [_field("value", type_)],
                        f"A record wrapping {kind} type to be able to be used it w/in Avro's Union")
                for name, kind, type_ in _WRAPPERS]
    wrapper_names = list(WRAPPER_NAMES)
    if hudi_1_1:
        wrappers.append(_record("LocalDateWrapper", [_field("value", "int")], "A record wrapping Local Date "
                                "type to be able to be used it w/in Avro's Union"))
        wrapper_names.append("LocalDateWrapper")
        wrappers.append(_record("ArrayWrapper", [_field(
            "wrappedValues", ["null", {"type": "array", "items": ["null", *wrapper_names]}],
            "An array where each element is one of the supported wrapper types.", None)],
            "A record containing a list of wrapped values."))
        wrapper_names.append("ArrayWrapper")
    file_info = _record("HoodieMetadataFileInfo", [
        _field("size", "long", "Size of the file"),
        _field("isDeleted", "boolean", "True if this file has been deleted")])
    bloom = _record("HoodieMetadataBloomFilter", [
        _field("type", _STRING, "Bloom filter type code"),
        _field("timestamp", _STRING, "Instant timestamp when this metadata was created/updated"),
        _field("bloomFilter", "bytes", "Bloom filter binary byte array"),
        _field("isDeleted", "boolean", "Bloom filter entry valid/deleted flag")],
        "Data file bloom filter details")
    range_fields = [
        _optional("fileName", _STRING, "File name for which this column statistics applies"),
        _optional("columnName", _STRING, "Column name for which this column statistics applies"),
        _field("minValue", ["null", *wrappers],
               "Minimum value in the range. Based on user data table schema, we can convert this to "
               "appropriate type", None),
        _field("maxValue", ["null", *wrapper_names], "Maximum value in the range. Based on user data table "
               "schema, we can convert it to appropriate type", None),
        _optional("valueCount", "long", "Total count of values"),
        _optional("nullCount", "long", "Total count of null values"),
        _optional("totalSize", "long", "Total storage size on disk"),
        _optional("totalUncompressedSize", "long", "Total uncompressed storage size on disk"),
        _field("isDeleted", "boolean", "Column range entry valid/deleted flag")]
    if hudi_1_1:
        value_type = _record("HoodieValueTypeInfo", [
            _field("typeOrdinal", "int", "Enum type ordinal representing the value type"),
            _optional("additionalInfo", _STRING, "Optional additional information about the value type")])
        range_fields += [
            _field("isTightBound", "boolean", "Whether the min/max range of a column is tight bound or not",
                   False),
            _optional("valueType", value_type,
                      "Value type information containing enum ordinal and optional additional information")]
    column_stats = _record("HoodieMetadataColumnStats", range_fields, "Data file column statistics")
    # 1.1 fixed the doc's second "fileIdLowBits".
    second_bits = "fileIdHighBits" if hudi_1_1 else "fileIdLowBits"
    encoding_doc = ("Represents fileId encoding. Possible values are 0 and 1. O represents UUID based "
                    "fileID, and 1 represents raw string format of the fileId. \nWhen the encoding is 0, "
                    f"reader can deduce fileID from fileIdLowBits, {second_bits} and fileIndex.")
    index_fields = [
        _optional("partitionName", _STRING, "Refers to the partition name the record belongs to"),
        _optional("fileIdHighBits", "long",
                  _FILE_ID_DOC.format("Refers to high 64 bits if the fileId is based on UUID format.")),
        _optional("fileIdLowBits", "long",
                  _FILE_ID_DOC.format("Refers to low 64 bits if the fileId is based on UUID format.")),
        _optional("fileIndex", "int", _FILE_ID_DOC.format(
            "Index representing file index which is used to re-construct UUID based fileID. Applicable when "
            "the fileId is based on UUID format.")),
        _optional("fileId", _STRING, "Represents fileId of the location where record belongs to. When the "
                  "encoding is 1, fileID is stored in raw string format."),
        _optional("instantTime", "long",
                  "Epoch time in millisecond representing the commit time at which record was added"),
        _field("fileIdEncoding", "int", encoding_doc, 0)]
    if hudi_1_1:
        index_fields.append(_optional("position", "long", "Represents position of record within a file group "
                                      "for easier access. It will be used for index lookup."))
    record_index = _record("HoodieRecordIndexInfo", index_fields)
    fields = [_field(name, ["null", "string"], "", None) for name in META_FIELDS]
    fields += [
        _field("key", _STRING),
        _field("type", "int", "Type of the metadata record"),
        _field("filesystemMetadata",
               ["null", {"type": "map", "values": file_info, "avro.java.string": "String"}],
               "Contains information about partitions and files within the dataset"),
        _field("BloomFilterMetadata", ["null", bloom],
               "Metadata Index of bloom filters for all data files in the user table", None),
        _field("ColumnStatsMetadata", ["null", column_stats],
               "Metadata Index of column statistics for all data files in the user table", None),
        _field("recordIndexMetadata", ["null", record_index],
               "Metadata Index that contains information about record keys and their location in the dataset",
               None),
    ]
    if hudi_1_1:
        secondary = _record("HoodieSecondaryIndexInfo", [
            _field("isDeleted", "boolean", "True if this entry has been deleted")])
        fields.append(_field("SecondaryIndexMetadata", ["null", secondary],
                             "Metadata Index that contains information about secondary keys and the "
                             "corresponding record keys in the dataset", None))
    return {"type": "record", "name": "HoodieMetadataRecord", "namespace": NAMESPACE,
            "doc": "A record saved within the Metadata Table", "fields": fields}


def _without_meta_fields(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "fields": [f for f in schema["fields"] if f["name"] not in META_FIELDS]}


METADATA_RECORD_SCHEMA = json.dumps(_schema(), separators=(",", ":"), ensure_ascii=False)
"""The SCHEMA header (and HFile `schema` file info) of the log blocks this package writes."""
WRITER_SCHEMA = json.dumps(_without_meta_fields(_schema()), separators=(",", ":"), ensure_ascii=False)
"""`HoodieMetadataRecord.getClassSchema()`: the schema in a metadata commit's extra metadata."""
WRITER_SCHEMA_1_1 = json.dumps(_without_meta_fields(_schema(hudi_1_1=True)), separators=(",", ":"),
                               ensure_ascii=False)
"""Hudi 1.1's `HoodieMetadataRecord.getClassSchema()` (table version 9)."""


@cache
def _parsed() -> Schema:
    return parse_schema(json.loads(METADATA_RECORD_SCHEMA))


def with_meta_fields(writer_schema: str) -> str:
    """A metadata table's block schema (the SCHEMA header) from its writer schema (a deltacommit's
    `schema` extra metadata): the five meta fields in front, as the append handle adds them. Checked
    equal to the headers Hudi 1.1 wrote."""
    schema = json.loads(writer_schema)
    meta = [f for f in _schema()["fields"] if f["name"] in META_FIELDS]
    schema["fields"] = meta + schema["fields"]
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class MetadataRecord:
    """One record for a metadata partition: its key and its `HoodieMetadataRecord` fields (key excluded)."""

    partition: str
    key: str
    type: int
    fields: Mapping[str, Any]

    def to_avro(self) -> dict[str, Any]:
        """The value as the block stores it: meta fields null, `key` blanked (the row holds it)."""
        value: dict[str, Any] = dict.fromkeys(META_FIELDS)
        value.update(key="", type=self.type, filesystemMetadata=None, BloomFilterMetadata=None,
                     ColumnStatsMetadata=None, recordIndexMetadata=None)
        value.update(self.fields)
        return value

    def encode(self, schema: Schema | None = None) -> bytes:
        """Plain Avro binary of `to_avro()` with `METADATA_RECORD_SCHEMA`, or with `schema` (a
        metadata table's own, parsed): fields newer than 0.15 take their defaults."""
        out = io.BytesIO()
        schemaless_writer(out, schema or _parsed(), self.to_avro())
        return out.getvalue()


def _files_map(entries: dict[str, dict[str, Any]], capacity: int | None) -> dict[str, dict[str, Any]]:
    """The entries in the iteration order of the Java HashMap Hudi fills (pre-sized with load factor 1
    when `capacity` is given, else a default HashMap)."""
    if capacity is None:
        return {name: entries[name] for name in java_hashmap_order(entries)}
    mask = (1 << (capacity - 1).bit_length() if capacity > 1 else 1) - 1
    position = {name: n for n, name in enumerate(entries)}

    def bucket(name: str) -> int:
        h = java_string_hash(name) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & mask

    return {name: entries[name] for name in sorted(entries, key=lambda n: (bucket(n), position[n]))}


def partition_files_record(partition: str, added: Mapping[str, int] | None = None,
                           deleted: Iterable[str] = ()) -> MetadataRecord:
    """`createPartitionFilesRecord`: files added (name -> size > 0) and deleted in one data partition."""
    added = added or {}
    deleted = list(deleted)
    entries: dict[str, dict[str, Any]] = {}
    for name, size in added.items():
        if size <= 0:
            raise ValueError(f"file {name!r} of partition {partition!r} is added with size {size}")
        entries[name] = {"size": size, "isDeleted": False}
    for name in deleted:
        entries[name] = {"size": 0, "isDeleted": True}
    return MetadataRecord(FILES, files_key(partition), FILE_LIST,
                          {"filesystemMetadata": _files_map(entries, len(added) + len(deleted))})


def partition_list_record(partitions: Iterable[str], is_deleted: bool = False) -> MetadataRecord:
    """`createPartitionListRecord`: the `__all_partitions__` record adding (or deleting) data partitions."""
    entries = {partition_identifier(p): {"size": 0, "isDeleted": is_deleted} for p in partitions}
    return MetadataRecord(FILES, ALL_PARTITIONS_KEY, PARTITION_LIST,
                          {"filesystemMetadata": _files_map(entries, None)})


def wrap(wrapper: str, value: Any) -> tuple[str, dict[str, Any]]:
    """A column-stats min/max value as its union branch (`wrapValueIntoAvro`): `wrap("LongWrapper", 5)`."""
    if wrapper not in WRAPPER_NAMES:
        raise ValueError(f"unknown column-stats value wrapper {wrapper!r}; one of {', '.join(WRAPPER_NAMES)}")
    return f"{NAMESPACE}.{wrapper}", {"value": value}


@dataclass(frozen=True)
class ColumnRange:
    """`HoodieColumnRangeMetadata` of one column of one file; min/max from `wrap`, or None."""

    column: str
    min_value: tuple[str, dict[str, Any]] | None
    max_value: tuple[str, dict[str, Any]] | None
    null_count: int
    value_count: int
    total_size: int
    total_uncompressed_size: int

    @classmethod
    def stub(cls, column: str) -> ColumnRange:
        """`HoodieColumnRangeMetadata.stub`: what a delete record carries."""
        return cls(column, None, None, -1, -1, -1, -1)


def column_stats_record(partition: str, file_name: str, stats: ColumnRange,
                        is_deleted: bool = False,
                        value_type: Mapping[str, Any] | None = None) -> MetadataRecord:
    """`createColumnStatsRecords` for one column of one data file; `value_type`: the range's
    `valueType` (Hudi 1.1's column stats V2), None on older schemas."""
    value = {"fileName": file_name, "columnName": stats.column,
             "minValue": stats.min_value, "maxValue": stats.max_value,
             "valueCount": stats.value_count, "nullCount": stats.null_count,
             "totalSize": stats.total_size, "totalUncompressedSize": stats.total_uncompressed_size,
             "isDeleted": is_deleted}
    if value_type is not None:
        value["valueType"] = dict(value_type)
    return MetadataRecord(COLUMN_STATS, column_stats_key(partition, file_name, stats.column),
                          COLUMN_STATS_TYPE, {"ColumnStatsMetadata": value})


# HoodieColumnRangeMetadata.NULL_METADATA's HoodieValueTypeInfo (ValueType.NULL, ordinal 1: the ordinals
# of the Java-written v9 records, BOOLEAN 2 ... STRING 7 ... DATE 12, place NONE 0 and NULL 1 before them).
NULL_VALUE_TYPE = {"typeOrdinal": 1, "additionalInfo": None}
# The ordinals of the ValueTypes of Avro's primitive types (V1 0, NULL 1, BOOLEAN 2, ... STRING 7, BYTES 8).
_VALUE_TYPE_ORDINALS = {"boolean": 2, "int": 3, "long": 4, "float": 5, "double": 6, "string": 7, "bytes": 8}


def primitive_value_type(avro_type: str) -> dict[str, Any]:
    """The `valueType` Hudi 1.1 gives the range of a column of Avro primitive type `avro_type`."""
    if avro_type not in _VALUE_TYPE_ORDINALS:
        raise ValueError(f"no column-stats value type for Avro type {avro_type!r}")
    return {"typeOrdinal": _VALUE_TYPE_ORDINALS[avro_type], "additionalInfo": None}


def column_stats_delete_record(partition: str, file_name: str, column: str,
                               value_type: Mapping[str, Any] | None = None) -> MetadataRecord:
    """What a clean writes for one indexed column of a deleted file; `value_type`: the stub's
    `valueType` (Hudi 1.1, column stats V2 schema: `NULL_VALUE_TYPE`), None on older schemas."""
    return column_stats_record(partition, file_name, ColumnRange.stub(column), True, value_type)


def bloom_filter_record(partition: str, file_name: str, instant_time: str, bloom_type: str,
                        bloom_filter: bytes, *, is_deleted: bool = False) -> MetadataRecord:
    """`createBloomFilterMetadataRecord` for one base file (`bloom_type`: e.g. `DYNAMIC_V0`)."""
    if "/" in file_name:
        raise ValueError(f"invalid base file {file_name!r} for a bloom filter record")
    return MetadataRecord(BLOOM_FILTERS, bloom_filter_key(partition, file_name), BLOOM_FILTER_TYPE,
                          {"BloomFilterMetadata": {"type": bloom_type, "timestamp": instant_time,
                                                   "bloomFilter": bloom_filter, "isDeleted": is_deleted}})


def bloom_filter_delete_record(partition: str, file_name: str, instant_time: str) -> MetadataRecord:
    """What a clean writes for a deleted base file: empty type and filter, deleted."""
    return bloom_filter_record(partition, file_name, instant_time, "", b"", is_deleted=True)
