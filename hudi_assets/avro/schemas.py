"""Avro schemas of Hudi's timeline metadata records, as shipped in Hudi 0.14/0.15 (table version 6).

They are our own copies of `hudi-common/src/main/avro/*.avsc` (field names, types, defaults and order
identical), so that nothing is loaded from outside the package at run time. Each record is defined once
below, nested record types referenced by name; `SCHEMAS` holds, for every record, a standalone schema
in which each nested named type is inlined at its first use (fastavro, like Java, needs exactly one
definition per named type in a parsed schema).

`java_schema_json` renders a schema as the text Java `Schema.toString()` writes into the header of a
container file (with the `avro.java.string` properties of Hudi's generated classes), so that our files
carry the same schema text as Hudi's own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

import fastavro

NAMESPACE = "org.apache.hudi.avro.model"

NO_DEFAULT = object()
_RESERVED = frozenset({"type", "name", "namespace", "doc", "fields", "items", "values", "aliases"})


def field(name: str, type_: Any, default: Any = NO_DEFAULT, doc: str | None = None) -> dict[str, Any]:
    """One Avro field, keys in the order Java's `Schema.toString` writes them."""
    field: dict[str, Any] = {"name": name, "type": type_}
    if doc is not None:
        field["doc"] = doc
    if default is not NO_DEFAULT:
        field["default"] = default
    return field


def _optional(name: str, type_: Any, doc: str | None = None) -> dict[str, Any]:
    """The ubiquitous `["null", T]` field with default null."""
    return field(name, ["null", type_], None, doc)


def _optionals(type_: Any, *names: str) -> list[dict[str, Any]]:
    return [_optional(name, type_) for name in names]


def _version() -> dict[str, Any]:
    return field("version", ["int", "null"], 1)


def _array(items: Any, **props: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **props}


def _map(values: Any, **props: Any) -> dict[str, Any]:
    return {"type": "map", "values": values, **props}


def _record(name: str, *fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": list(fields)}


_STRINGS = _array("string")
_COMPACTION_LONGS = ("totalLogRecords", "totalLogFiles", "totalUpdatedRecordsCompacted")
_INDEX_DOC = "This field replaces the field filesToBeDeletedPerPartition"  # sic, as in Hudi's .avsc

_DEFINITIONS: list[dict[str, Any]] = [
    # Cleaning
    _record(
        "HoodieActionInstant",
        field("timestamp", "string"),
        field("action", "string"),
        field("state", "string"),
    ),
    _record(
        "HoodieCleanFileInfo",
        _optional("filePath", "string"),
        _optional("isBootstrapBaseFile", "boolean"),
    ),
    _record(
        "HoodieCleanerPlan",
        _optional("earliestInstantToRetain", "HoodieActionInstant"),
        field("lastCompletedCommitTimestamp", "string", ""),
        field("policy", "string"),
        _optional("filesToBeDeletedPerPartition", _map(_STRINGS)),
        _version(),
        _optional(
            "filePathsToBeDeletedPerPartition",
            _map(_array("HoodieCleanFileInfo")),
            doc="This field replaces the field filesToBeDeletedPerPartition",
        ),
        _optional("partitionsToBeDeleted", _STRINGS, doc="partitions to be deleted"),
        _optional("extraMetadata", _map("string", default=None)),
    ),
    _record(
        "HoodieCleanPartitionMetadata",
        field("partitionPath", "string"),
        field("policy", "string"),
        field("deletePathPatterns", _STRINGS),
        field("successDeleteFiles", _STRINGS),
        field("failedDeleteFiles", _STRINGS),
        _optional("isPartitionDeleted", "boolean"),
    ),
    _record(
        "HoodieCleanMetadata",
        field("startCleanTime", "string"),
        field("timeTakenInMillis", "long"),
        field("totalFilesDeleted", "int"),
        field("earliestCommitToRetain", "string"),
        field("lastCompletedCommitTimestamp", "string", ""),
        field("partitionMetadata", _map("HoodieCleanPartitionMetadata")),
        _version(),
        _optional("bootstrapPartitionMetadata", _map("HoodieCleanPartitionMetadata", default=None)),
        _optional("extraMetadata", _map("string", default=None)),
    ),
    # Savepoint
    _record(
        "HoodieSavepointPartitionMetadata",
        field("partitionPath", "string"),
        field("savepointDataFile", _STRINGS),
    ),
    _record(
        "HoodieSavepointMetadata",
        field("savepointedBy", "string"),
        field("savepointedAt", "long"),
        field("comments", "string"),
        field("partitionMetadata", _map("HoodieSavepointPartitionMetadata")),
        _version(),
    ),
    # Rollback and restore
    _record("HoodieInstantInfo", field("commitTime", "string"), field("action", "string")),
    _record(
        "HoodieRollbackRequest",
        field("partitionPath", "string"),
        _optional("fileId", "string"),
        _optional("latestBaseInstant", "string"),
        field("filesToBeDeleted", _array("string", default=[]), []),
        _optional("logBlocksToBeDeleted", _map("long")),
    ),
    _record(
        "HoodieRollbackPlan",
        _optional("instantToRollback", "HoodieInstantInfo", "Hoodie instant that needs to be rolled back"),
        _optional("RollbackRequests", _array("HoodieRollbackRequest")),
        _version(),
    ),
    _record(
        "HoodieRollbackPartitionMetadata",
        field("partitionPath", "string"),
        field("successDeleteFiles", _STRINGS),
        field("failedDeleteFiles", _STRINGS),
        _optional("rollbackLogFiles", _map("long")),
        _optional("logFilesFromFailedCommit", _map("long")),
    ),
    _record(
        "HoodieRollbackMetadata",
        field("startRollbackTime", "string"),
        field("timeTakenInMillis", "long"),
        field("totalFilesDeleted", "int"),
        field("commitsRollback", _STRINGS),
        field("partitionMetadata", _map("HoodieRollbackPartitionMetadata")),
        _version(),
        field("instantsRollback", _array("HoodieInstantInfo", default=[]), []),
    ),
    _record(
        "HoodieRestorePlan",
        field("instantsToRollback", _array("HoodieInstantInfo", default=None), []),
        _version(),
    ),
    _record(
        "HoodieRestoreMetadata",
        field("startRestoreTime", "string"),
        field("timeTakenInMillis", "long"),
        field("instantsToRollback", _STRINGS),
        field("hoodieRestoreMetadata", _map(_array(["null", "HoodieRollbackMetadata"], default=None))),
        _version(),
        field("restoreInstantInfo", _array("HoodieInstantInfo", default=None), []),
    ),
    # Compaction
    _record(
        "HoodieCompactionOperation",
        field("baseInstantTime", ["null", "string"]),
        _optional("deltaFilePaths", _STRINGS),
        _optional("dataFilePath", "string"),
        field("fileId", ["null", "string"]),
        _optional("partitionPath", "string"),
        _optional("metrics", _map("double")),
        _optional("bootstrapFilePath", "string"),
    ),
    _record(
        "HoodieCompactionStrategy",
        _optional(
            "compactorClassName",
            "string",
            doc="The class name that is provided here should extend CompactionExecutionStrategy abstract "
            "class, idea is that the plan generator will also provide the execution strategy to use.",
        ),
        _optional(
            "strategyParams",
            _map("string"),
            doc="These parameters play a key role in determining which action type it is i.e. compaction "
            "or logcompaction and it will also include configs that determine how compaction needs to be "
            "executed.",
        ),
        _version(),
    ),
    _record(
        "HoodieCompactionPlan",
        _optional("operations", _array("HoodieCompactionOperation")),
        _optional("extraMetadata", _map("string")),
        _version(),
        _optional("strategy", "HoodieCompactionStrategy"),
        field("preserveHoodieMetadata", ["boolean", "null"], False),
    ),
    # Clustering and replace
    _record(
        "HoodieSliceInfo",
        _optional("dataFilePath", "string"),
        _optional("deltaFilePaths", _STRINGS),
        field("fileId", ["null", "string"]),
        _optional("partitionPath", "string"),
        _optional("bootstrapFilePath", "string"),
        _version(),
    ),
    _record(
        "HoodieClusteringGroup",
        _optional("slices", _array("HoodieSliceInfo")),
        _optional("metrics", _map("double")),
        field("numOutputFileGroups", ["int", "null"], 1),
        _optional("extraMetadata", _map("string")),
        _version(),
    ),
    _record(
        "HoodieClusteringStrategy",
        _optional("strategyClassName", "string"),
        _optional("strategyParams", _map("string")),
        _version(),
    ),
    _record(
        "HoodieClusteringPlan",
        _optional("inputGroups", _array("HoodieClusteringGroup")),
        _optional("strategy", "HoodieClusteringStrategy"),
        _optional("extraMetadata", _map("string")),
        _version(),
        _optional("preserveHoodieMetadata", "boolean"),
    ),
    _record(
        "HoodieRequestedReplaceMetadata",
        _optional("operationType", "string"),
        _optional("clusteringPlan", "HoodieClusteringPlan"),
        _optional("extraMetadata", _map("string")),
        _version(),
    ),
    # Commits (as converted from their JSON form when archived)
    _record(
        "HoodieWriteStat",
        *_optionals("string", "fileId", "path", "prevCommit"),
        *_optionals("long", "numWrites", "numDeletes", "numUpdateWrites", "totalWriteBytes"),
        *_optionals("long", "totalWriteErrors"),
        _optional("partitionPath", "string"),
        *_optionals("long", *_COMPACTION_LONGS, "numInserts", "totalLogBlocks", "totalCorruptLogBlock"),
        *_optionals("long", "totalRollbackBlocks", "fileSizeInBytes"),
    ),
    _record(
        "HoodieCommitMetadata",
        _optional("partitionToWriteStats", _map(_array("HoodieWriteStat"))),
        _optional("extraMetadata", _map("string", default=None)),
        _version(),
        _optional("operationType", "string"),
    ),
    _record(
        "HoodieReplaceCommitMetadata",
        _optional("partitionToWriteStats", _map(_array("HoodieWriteStat"))),
        _optional("extraMetadata", _map("string")),
        _version(),
        _optional("operationType", "string"),
        _optional("partitionToReplaceFileIds", _map(_STRINGS)),
    ),
    _record(
        "HoodieCompactionWriteStat",
        _optional("partitionPath", "string"),
        *_optionals("long", *_COMPACTION_LONGS),
        _optional("hoodieWriteStat", "HoodieWriteStat"),
    ),
    _record(  # deprecated, still a member of HoodieArchivedMetaEntry
        "HoodieCompactionMetadata",
        field("partitionToCompactionWriteStats", ["null", _map(_array("HoodieCompactionWriteStat"))]),
    ),
    # Indexing
    _record(
        "HoodieIndexPartitionInfo",
        _version(),
        _optional("metadataPartitionPath", "string"),
        _optional("indexUptoInstant", "string"),
        _optional("extraMetadata", _map("string")),
    ),
    _record(
        "HoodieIndexCommitMetadata",
        field("version", ["int", "null"], 1, doc=_INDEX_DOC),
        _optional("operationType", "string", doc=_INDEX_DOC),
        _optional(
            "indexPartitionInfos",
            _array("HoodieIndexPartitionInfo"),
            doc="This field contains the info for each partition that got indexed",
        ),
    ),
    # Archived timeline
    _record(
        "HoodieMergeArchiveFilePlan",
        _version(),
        _optional("candidate", _STRINGS),
        _optional("mergedArchiveFileName", "string"),
    ),
    _record(
        "HoodieArchivedMetaEntry",
        _optional("hoodieCommitMetadata", "HoodieCommitMetadata"),
        _optional("hoodieCleanMetadata", "HoodieCleanMetadata"),
        _optional("hoodieCompactionMetadata", "HoodieCompactionMetadata"),
        _optional("hoodieRollbackMetadata", "HoodieRollbackMetadata"),
        _optional("hoodieSavePointMetadata", "HoodieSavepointMetadata"),
        _optional("commitTime", "string"),
        _optional("actionType", "string"),
        _version(),
        _optional("hoodieCompactionPlan", "HoodieCompactionPlan"),
        _optional("hoodieCleanerPlan", "HoodieCleanerPlan"),
        _optional("actionState", "string"),
        _optional("hoodieReplaceCommitMetadata", "HoodieReplaceCommitMetadata"),
        _optional("hoodieRequestedReplaceMetadata", "HoodieRequestedReplaceMetadata"),
        _optional("HoodieInflightReplaceMetadata", "HoodieCommitMetadata"),
        _optional("hoodieIndexCommitMetadata", "HoodieIndexCommitMetadata"),
        _optional("stateTransitionTime", "string"),
    ),
]
_RECORDS: dict[str, dict[str, Any]] = {record["name"]: record for record in _DEFINITIONS}


def standalone_schemas(records: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The standalone schema of each record of `records`, every record it refers to defined in
    full where first used (as Java's `Schema.toString` writes them)."""

    def inline(type_: Any, defined: set[str]) -> Any:
        if isinstance(type_, list):
            return [inline(branch, defined) for branch in type_]
        if isinstance(type_, str):
            if type_ not in records or type_ in defined:
                return type_
            defined.add(type_)
            record = records[type_]
            return {**record, "fields": [{**f, "type": inline(f["type"], defined)} for f in record["fields"]]}
        if type_["type"] == "array":
            return {**type_, "items": inline(type_["items"], defined)}
        return {**type_, "values": inline(type_["values"], defined)}

    return {name: {"type": "record", "name": name, "namespace": NAMESPACE,
                   "fields": inline(name, set())["fields"]} for name in records}


SCHEMAS: dict[str, dict[str, Any]] = standalone_schemas(_RECORDS)
"""Standalone schema of every Hudi record type we know, keyed by short record name. Read-only."""


def field_names(name: str) -> list[str]:
    """The field names of record `name`, in schema order."""
    return [f["name"] for f in _RECORDS[name]["fields"]]


@cache
def parsed(name: str) -> dict[str, Any]:
    """`fastavro.parse_schema` of `SCHEMAS[name]`, parsed once per process."""
    return fastavro.parse_schema(SCHEMAS[name])


def _java(type_: Any) -> Any:
    """Mirror Java `Schema.toString()` of a class generated with `stringType=String`."""
    if isinstance(type_, list):
        return [_java(branch) for branch in type_]
    if isinstance(type_, str):
        return {"type": "string", "avro.java.string": "String"} if type_ == "string" else type_
    kind = type_["type"]
    out: dict[str, Any] = {"type": kind}
    if kind == "record":
        out["name"] = type_["name"]
        if "namespace" in type_:
            out["namespace"] = type_["namespace"]
        out["fields"] = [_java_field(field) for field in type_["fields"]]
    elif kind == "array":
        out["items"] = _java(type_["items"])
    else:
        out["values"] = _java(type_["values"])
        out["avro.java.string"] = "String"
    out.update((key, value) for key, value in type_.items() if key not in _RESERVED)
    return out


def _java_field(field: dict[str, Any]) -> dict[str, Any]:
    out = {"name": field["name"], "type": _java(field["type"])}
    for key in ("doc", "default"):
        if key in field:
            out[key] = field[key]
    return out


def java_text(schema: dict[str, Any]) -> str:
    """The text of Java `Schema.toString()` of a standalone schema."""
    return json.dumps(_java(schema), separators=(",", ":"), ensure_ascii=False)


@cache
def java_schema_json(name: str) -> str:
    """The schema text Hudi's Java writer puts into the `avro.schema` header entry for record `name`."""
    return java_text(SCHEMAS[name])


# Hudi 1.x (table versions 8/9) writes its timeline with newer versions of some records: the fields
# 1.0/1.1 added (each optional, so 0.x readers resolve them away), as the `avro.schema` headers of
# the Java-written tables of ../shared show them (apache/hudi hudi-common/src/main/avro, 1.0.x).
_MISSING_PARTITIONS = _optional("missingSchedulePartitions", _STRINGS)
_RECORDS_1X_CHANGES = [
    _record("HoodieRuntimeStats", *_optionals("long", "totalScanTime", "totalCreateTime", "totalUpsertTime")),
    _record(
        "HoodieWriteStat",
        *_RECORDS["HoodieWriteStat"]["fields"],
        _optional("logVersion", "int"),
        _optional("logOffset", "long"),
        _optional("baseFile", "string"),
        _optional("logFiles", _array("string", default=None)),
        _optional("cdcStats", _map("long", default=None)),
        _optional("prevBaseFile", "string"),
        *_optionals("long", "minEventTime", "maxEventTime"),
        _optional("runtimeStats", "HoodieRuntimeStats"),
        *_optionals("long", "totalLogFilesCompacted", "totalLogReadTimeMs", "totalLogSizeCompacted"),
        _optional("tempPath", "string"),
        _optional("numUpdates", "long"),
    ),
    *(_record(name, fields[0], _optional("compacted", "boolean"), *fields[1:])
      for name in ("HoodieCommitMetadata", "HoodieReplaceCommitMetadata")
      for fields in [_RECORDS[name]["fields"]]),
    *(_record(name, *_RECORDS[name]["fields"], _MISSING_PARTITIONS)
      for name in ("HoodieCompactionPlan", "HoodieClusteringPlan")),
    _record(
        "HoodieIndexPlan",
        _version(),
        _optional("indexPartitionInfos", _array("HoodieIndexPartitionInfo")),
    ),
]
SCHEMAS_1X: dict[str, dict[str, Any]] = standalone_schemas(
    _RECORDS | {record["name"]: record for record in _RECORDS_1X_CHANGES})
"""The records as Hudi 1.x writes them (the others as in 0.15), keyed by short record name."""


@cache
def parsed_1x(name: str) -> dict[str, Any]:
    """`fastavro.parse_schema` of `SCHEMAS_1X[name]`, parsed once per process."""
    return fastavro.parse_schema(SCHEMAS_1X[name])
