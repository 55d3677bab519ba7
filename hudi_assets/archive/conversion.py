"""State file -> `HoodieArchivedMetaEntry` (Hudi 0.14/0.15 MetadataConversionUtils.createMetaWrapper).

Commit JSON is converted as Jackson's `convertValue` into the Avro classes does it: only the fields of
the Avro records survive, numeric write-stat fields that are Java primitives become 0 when absent,
`operationType` is copied (forced `COMPACT` for a compaction commit), `extraMetadata["ROLLING_STAT"]`
is set to "". Which payload an entry gets follows 0.15's createMetaWrapper, which reads the state file
once: an empty completed file gives an entry without payload (createMetaWrapperForEmptyInstant); an
empty requested/inflight commit or deltacommit reads as an empty HoodieCommitMetadata (operation
UNKNOWN) and is archived with it; empty requested/inflight replacecommit files and pending rollbacks
carry none; a compaction or log compaction carries its plan in the requested entry only; any other
empty file (a clean plan, a requested compaction plan) cannot be read and fails the conversion.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from itertools import chain, islice, repeat
from operator import attrgetter
from typing import Any

import msgspec

from hudi_assets.avro import deserialize_metadata
from hudi_assets.avro.binary import (
    Encoded,
    Mismatch,
    nullable_long_column,
    nullable_string_column,
    record_arrays,
)
from hudi_assets.clean.plan import CleanerPlan
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.timeline.commit_metadata import SHAPE_ERRORS, commit_json_object, unexpected_shape
from hudi_assets.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
)
from hudi_assets.timeline.timeline import ActiveTimeline

ROLLING_STAT = "ROLLING_STAT"
_ARCHIVABLE = (CLEAN, COMMIT, DELTA_COMMIT, REPLACE_COMMIT, ROLLBACK, SAVEPOINT, COMPACTION, LOG_COMPACTION)
class ArchiveConversionError(CorruptFileError):
    """A state file of an instant to archive cannot be converted."""


def state_transition_time(mtime_ms: int) -> str:
    """The state file's modification time as `yyyyMMddHHmmssSSS` in the local zone (HoodieInstant)."""
    return _local_second(mtime_ms // 1000) + f"{mtime_ms % 1000:03d}"


@functools.lru_cache(maxsize=4096)
def _local_second(seconds: int) -> str:
    """`yyyyMMddHHmmss` of a second: the state files of a run share a few seconds, so the calendar
    arithmetic runs once per second, not once per file."""
    return datetime.fromtimestamp(seconds).strftime("%Y%m%d%H%M%S")


def _write_stat(stat: dict[str, Any]) -> dict[str, Any]:
    """One Avro HoodieWriteStat (this runs once per file a commit wrote, so it is one dict display):
    the string fields as strings; those that are primitive `long`s in Java's HoodieWriteStat are 0 when
    absent (Jackson's round trip); `totalLogFiles` has no Java field, so it is null."""
    get = stat.get
    return {
        "fileId": None if (v := get("fileId")) is None else str(v),
        "path": None if (v := get("path")) is None else str(v),
        "prevCommit": None if (v := get("prevCommit")) is None else str(v),
        "numWrites": 0 if (v := get("numWrites")) is None else int(v),
        "numDeletes": 0 if (v := get("numDeletes")) is None else int(v),
        "numUpdateWrites": 0 if (v := get("numUpdateWrites")) is None else int(v),
        "totalWriteBytes": 0 if (v := get("totalWriteBytes")) is None else int(v),
        "totalWriteErrors": 0 if (v := get("totalWriteErrors")) is None else int(v),
        "partitionPath": None if (v := get("partitionPath")) is None else str(v),
        "totalLogRecords": 0 if (v := get("totalLogRecords")) is None else int(v),
        "totalLogFiles": None,
        "totalUpdatedRecordsCompacted": 0 if (v := get("totalUpdatedRecordsCompacted")) is None else int(v),
        "numInserts": 0 if (v := get("numInserts")) is None else int(v),
        "totalLogBlocks": 0 if (v := get("totalLogBlocks")) is None else int(v),
        "totalCorruptLogBlock": 0 if (v := get("totalCorruptLogBlock")) is None else int(v),
        "totalRollbackBlocks": 0 if (v := get("totalRollbackBlocks")) is None else int(v),
        "fileSizeInBytes": 0 if (v := get("fileSizeInBytes")) is None else int(v),
    }


# HoodieWriteStat's Avro fields in schema order, each as `_write_stat` converts it: "str" (null stays
# null), "long" (null or absent is 0), "null" (no Java field).
_WRITE_STAT_COLUMNS = (
    ("fileId", "str"), ("path", "str"), ("prevCommit", "str"), ("numWrites", "long"),
    ("numDeletes", "long"), ("numUpdateWrites", "long"), ("totalWriteBytes", "long"),
    ("totalWriteErrors", "long"), ("partitionPath", "str"), ("totalLogRecords", "long"),
    ("totalLogFiles", "null"), ("totalUpdatedRecordsCompacted", "long"), ("numInserts", "long"),
    ("totalLogBlocks", "long"), ("totalCorruptLogBlock", "long"), ("totalRollbackBlocks", "long"),
    ("fileSizeInBytes", "long"),
)


# The fields of a commit file's JSON that the Avro records hold, of the kinds Jackson writes them:
# msgspec decodes a file into these directly (skipping every other key without building it), about
# five times faster than `json.loads` builds the whole tree. A file holding anything else there (a
# number as a string, a float), bytes that are not strict UTF-8, or JSON that only Python's reader
# takes (NaN, UTF-16, a lone surrogate) is read by `json.loads` and converted from the dict as before.
_WriteStatFields = msgspec.defstruct(
    "_WriteStatFields", [(name, str | None if kind == "str" else int | None, None)
                         for name, kind in _WRITE_STAT_COLUMNS if kind != "null"], gc=False)


class _CommitFields(msgspec.Struct, gc=False):
    partitionToWriteStats: dict[str, list[_WriteStatFields] | None] | None = None
    extraMetadata: dict[str, str | None] | None = None
    compacted: bool | None = None
    operationType: str | None = None


class _ReplaceCommitFields(_CommitFields, gc=False):
    partitionToReplaceFileIds: dict[str, list[str] | None] | None = None


_DECODERS = {False: msgspec.json.Decoder(_CommitFields), True: msgspec.json.Decoder(_ReplaceCommitFields)}


# Below this many write stats in a commit, setting up the columns costs more than it saves (measured:
# even at 16, 9% faster at 32, 26% at 100).
COLUMNS_FROM = 16


def _write_stats(stats: dict[str, Any]) -> dict[str, list[dict[str, Any]] | Encoded]:
    """Each partition's write stats as Avro HoodieWriteStat records: already encoded, a column per
    field over all the commit's stats (a commit lists every file it wrote), when it has
    `COLUMNS_FROM` stats or more and every stat is a JSON object whose fields hold what Avro
    takes unconverted (always so for `_WriteStatFields`); else converted one stat at a time
    (`_write_stat`: str() and int() of other kinds, or their errors)."""
    partitions = list(stats.items())

    def plain(n: int) -> list[dict[str, Any]]:
        return [_write_stat(s if type(s) is not _WriteStatFields else msgspec.structs.asdict(s))
                for s in (partitions[n][1] or [])]

    lists = [items or [] for _, items in partitions]
    columns = _stat_columns(lists)
    if columns is None:
        return {p: plain(n) for n, p in enumerate(stats)}
    return dict(zip(stats, record_arrays(columns, list(map(len, lists)), plain), strict=True))


def _stat_columns(lists: list) -> list[list[bytes]] | None:
    """The encodings of every stat of `lists` (one per partition), a list per HoodieWriteStat field in
    schema order; None where `_write_stats` converts stat by stat instead."""
    if set(map(type, lists)) - {list}:
        return None
    every = list(chain.from_iterable(lists))
    kinds = set(map(type, every))
    if len(every) < COLUMNS_FROM or len(kinds) > 1 or kinds - {dict, _WriteStatFields}:
        return None
    try:  # all the string fields in one pass, all the long fields in another
        by_kind = {kind: iter(_field_values(every, names, encode))
                   for kind, (names, encode) in _KINDS.items()}
    except Mismatch:
        return None
    count = len(every)
    return [list(islice(by_kind[kind], count)) if kind != "null" else [b"\x00"] * count
            for _, kind in _WRITE_STAT_COLUMNS]


def _field_values(stats: list, names: tuple[str, ...], encode: Callable[[list], list[bytes]]) -> list[bytes]:
    """The encodings of fields `names` (all of one kind) of every stat (all dicts or all
    `_WriteStatFields`), field after field."""
    if type(stats[0]) is dict:
        keys = chain.from_iterable(repeat(name, len(stats)) for name in names)
        return encode(list(map(dict.get, stats * len(names), keys)))
    return encode(list(chain.from_iterable(map(attrgetter(name), stats) for name in names)))


def _long_values(values: list) -> list[bytes]:
    return nullable_long_column([0 if v is None else v for v in values] if None in values else values)


_KINDS = {"str": (tuple(n for n, k in _WRITE_STAT_COLUMNS if k == "str"), nullable_string_column),
          "long": (tuple(n for n, k in _WRITE_STAT_COLUMNS if k == "long"), _long_values)}


def convert_commit_metadata(obj: dict[str, Any] | _CommitFields, replace: bool = False) -> dict[str, Any]:
    """Commit JSON object, as parsed (a dict, or the fields msgspec decoded) -> Avro
    HoodieCommitMetadata (or HoodieReplaceCommitMetadata) record, its write stats encoded already
    where they can be (`_write_stats`). A value of the wrong kind raises one of `SHAPE_ERRORS`."""
    get = obj.get if type(obj) is dict else functools.partial(getattr, obj)
    stats = get("partitionToWriteStats") or {}
    extra = {str(k): (None if v is None else str(v)) for k, v in (get("extraMetadata") or {}).items()}
    extra[ROLLING_STAT] = ""
    operation = get("operationType") or "UNKNOWN"
    if not replace and get("compacted"):
        operation = "COMPACT"
    record: dict[str, Any] = {
        "partitionToWriteStats": _write_stats(stats),
        "extraMetadata": extra,
        "version": None,
        "operationType": operation,
    }
    if replace:
        replaced = get("partitionToReplaceFileIds") or {}
        record["partitionToReplaceFileIds"] = {p: list(ids or []) for p, ids in replaced.items()}
    return record


def _commit_record(data: bytes, path: str, replace: bool = False) -> dict[str, Any]:
    """The Avro record of a commit file's JSON, converted from the parsed JSON itself (no
    `CommitMetadata` in between: this runs once per archived commit file): decoded into
    `_CommitFields` where it can be (strict UTF-8 only), else parsed by `json.loads`, whose errors and
    conversions stay.
    HoodieCommitMetadata.fromBytes reads an empty file as a new, empty instance; anything else must be
    valid commit metadata (else CorruptFileError)."""
    try:
        if not data.isascii():  # msgspec skips other keys' strings without checking their UTF-8
            data.decode()
        obj: dict[str, Any] | _CommitFields = _DECODERS[replace].decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError):  # DecodeError: ValidationError too
        obj = commit_json_object(data, path)
    try:
        return convert_commit_metadata(obj, replace)
    except SHAPE_ERRORS as exc:
        raise unexpected_shape(path, exc) from exc


def to_archived_entry(timeline: ActiveTimeline, instant: Instant) -> dict[str, Any]:
    """The HoodieArchivedMetaEntry record of one state file of the active timeline."""
    status = timeline.state_files[instant]
    path = timeline.storage.uri(timeline.state_file_path(instant))
    if instant.action not in _ARCHIVABLE:
        raise ArchiveConversionError(path, f"{instant.action} instants are not archivable")
    action = COMMIT if instant.action == COMPACTION and instant.is_completed else instant.action
    record: dict[str, Any] = {
        "commitTime": instant.timestamp, "actionType": action, "actionState": instant.state.name,
        "version": None, "stateTransitionTime": state_transition_time(status.mtime_ms),
    }
    data = timeline.read_details(instant)
    if instant.is_completed and not data:
        return record  # a crash between create and write: an entry without payload
    try:
        record.update(_payload(timeline, instant, data, path))
    except CorruptFileError as exc:
        raise ArchiveConversionError(path, exc.problem if data else "empty file") from exc
    return record


def _payload(timeline: ActiveTimeline, instant: Instant, data: bytes, path: str) -> dict[str, Any]:
    action, state = instant.action, instant.state
    if action == CLEAN:
        if state is State.COMPLETED:
            return {"hoodieCleanMetadata": deserialize_metadata(data, "HoodieCleanMetadata", path)}
        # Hudi archives the plan upgraded to version 2 (CleanerUtils.getCleanerPlan).
        plan = CleanerPlan.deserialize(data, path, timeline.storage.base_uri)
        return {"hoodieCleanerPlan": plan.to_record()}
    if action in (COMMIT, DELTA_COMMIT):
        return {"hoodieCommitMetadata": _commit_record(data, path)}
    if action == REPLACE_COMMIT:
        if state is State.COMPLETED:
            return {"hoodieReplaceCommitMetadata": _commit_record(data, path, True)}
        if state is State.INFLIGHT:
            if not data:
                return {}
            return {"HoodieInflightReplaceMetadata": _commit_record(data, path)}
        if not data:
            return {}
        return {"hoodieRequestedReplaceMetadata":
                deserialize_metadata(data, "HoodieRequestedReplaceMetadata", path)}
    if action == ROLLBACK:
        if state is State.COMPLETED:
            return {"hoodieRollbackMetadata": deserialize_metadata(data, "HoodieRollbackMetadata", path)}
        return {}
    if action == SAVEPOINT:
        return {"hoodieSavePointMetadata": deserialize_metadata(data, "HoodieSavepointMetadata", path)}
    # compaction / logcompaction: only the requested entry carries the plan (its own bytes).
    if state is not State.REQUESTED:
        return {}
    return {"hoodieCompactionPlan": deserialize_metadata(data, "HoodieCompactionPlan", path)}
