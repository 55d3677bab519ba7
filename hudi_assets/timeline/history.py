"""The LSM-tree history of timeline layout 2 (Hudi 1.x's archived timeline), read-only.

`.hoodie/timeline/history/` holds `_version_` (the text of the latest snapshot version N),
`manifest_N` (JSON `{"files":[{"fileName":..., "fileLen":...}]}`: the parquet files of snapshot N)
and `<minInstant>_<maxInstant>_<layer>.parquet` files of `HoodieLSMTimelineInstant` rows, one per
archived (completed) instant. A reader takes the latest snapshot only, so files a compaction
replaced, or a writer left half done, are never read; a snapshot whose files a concurrent
compaction cleaned away is read again at the newer version. Hudi 1.x: LSMTimeline,
ArchivedTimelineLoaderV2, HoodieLSMTimelineManifest (apache/hudi @00ee6a6e, @07ba0d62). The writer
is `archive.lsm_writer`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from operator import itemgetter
from typing import TYPE_CHECKING, TypeVar

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.storage import FileStatus, Storage
from hudi_assets.timeline import jackson
from hudi_assets.timeline.instant import Instant, completed_instants
from hudi_assets.timeline.timeline import Timeline, first_per_requested_time

if TYPE_CHECKING:
    import pyarrow as pa

VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
_MANIFEST = re.compile(r"^manifest_(\d+)$")
_DATA_FILE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")

@cache
def lsm_instant_schema() -> pa.Schema:
    """HoodieLSMTimelineInstant.avsc in its field order, as Hudi's Avro-to-parquet conversion lays it
    out: the ["null", T] unions optional, `version` (int, default 1) required; no meta fields. Made on
    first use: pyarrow is imported by what reads or writes a history, not by every clean (0.15 s)."""
    import pyarrow as pa

    return pa.schema([
        ("instantTime", pa.string()), ("completionTime", pa.string()), ("action", pa.string()),
        ("metadata", pa.binary()), ("plan", pa.binary()), pa.field("version", pa.int32(), nullable=False)])

LSM_TIMELINE_INSTANT_VERSION_1 = 1
# The columns of HoodieLSMTimelineInstant a timeline needs (metadata and plan are read on demand).
_COLUMNS = ["instantTime", "completionTime", "action"]

T = TypeVar("T")


def data_file_name(min_instant: str, max_instant: str, layer: int) -> str:
    """`<min>_<max>_<layer>.parquet` (LSMTimelineWriter.newFileName)."""
    return f"{min_instant}_{max_instant}_{layer}.parquet"


def is_data_file(name: str) -> bool:
    return _DATA_FILE.match(name) is not None


def manifest_version(name: str) -> int | None:
    """N of a `manifest_N` file name, None for any other name."""
    match = _MANIFEST.match(name)
    return int(match[1]) if match else None


def manifest_versions(entries: Iterable[FileStatus]) -> list[int]:
    """Every N of a `manifest_N` among the listed `entries`, ascending."""
    return sorted(v for s in entries if (v := manifest_version(s.name)) is not None)


@dataclass(frozen=True, slots=True)
class HistoryFile:
    """A data file of a snapshot: its name's instant range and layer, and its length."""

    name: str
    min_instant: str
    max_instant: str
    layer: int
    length: int

    @classmethod
    def of(cls, name: str, length: int, where: str) -> HistoryFile:
        match = _DATA_FILE.match(name)
        if match is None:
            raise CorruptFileError(where, f"lists {name!r}, not a <min>_<max>_<layer>.parquet file")
        return cls(name, match[1], match[2], int(match[3]), length)

    @property
    def entry(self) -> dict[str, str | int]:
        """The manifest entry (HoodieLSMTimelineManifest.LSMFileEntry, fields in declaration order)."""
        return {"fileName": self.name, "fileLen": self.length}

    def overlaps(self, start: str | None, end: str | None) -> bool:
        """Whether the file can hold an instant in [start, end] (None: unbounded)."""
        return (start is None or self.max_instant >= start) and (end is None or self.min_instant <= end)


def manifest_text(files: list[HistoryFile]) -> str:
    """`HoodieLSMTimelineManifest.toJsonString()`: Hudi's JsonUtils mapper (fields visible, getters
    not) with Jackson's default pretty printer over the one field `files`; no trailing newline."""
    return jackson.dumps({"files": [f.entry for f in files]})


class LSMHistory:
    """The latest snapshot of a table's history folder."""

    def __init__(self, storage: Storage, folder: str):
        self.storage = storage
        self.folder = folder

    def latest_version(self) -> int | None:
        """N of `_version_`, else of the highest `manifest_N` (a writer between deleting and
        rewriting `_version_`), else None: no history."""
        path = f"{self.folder}/{VERSION_FILE}"
        if self.storage.exists(path):
            text = self.storage.read(path).decode("utf-8", "replace").strip()
            if not text.isdigit():
                raise CorruptFileError(self.storage.uri(path), f"holds {text[:40]!r}, not a version number")
            return int(text)
        return max(self.snapshot_versions(), default=None)

    def snapshot_versions(self) -> list[int]:
        """Every N of a `manifest_N` present (LSMTimeline.allSnapshotVersions), ascending."""
        if not self.storage.exists(self.folder):
            return []
        return manifest_versions(self.storage.list(self.folder))

    def files(self) -> list[HistoryFile]:
        """The data files of the latest snapshot, in the manifest's order."""
        version = self.latest_version()
        return [] if version is None else self.manifest(version)

    def manifest(self, version: int) -> list[HistoryFile]:
        """The data files `manifest_<version>` lists, in its order."""
        path = f"{self.folder}/{MANIFEST_PREFIX}{version}"
        where = self.storage.uri(path)
        try:
            manifest = json.loads(self.storage.read(path))
            entries = manifest["files"]
            return [HistoryFile.of(e["fileName"], int(e["fileLen"]), where) for e in entries]
        except FileNotFoundError as exc:
            raise CorruptFileError(where, "is missing although _version_ names it") from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptFileError(where, f"is not a HoodieLSMTimelineManifest ({exc})") from exc

    def read_file(self, name: str, columns: list[str] | None = None) -> pa.Table:
        """The rows of one data file (all columns unless `columns`), in the file's order."""
        import pyarrow as pa
        import pyarrow.parquet as pq  # here: a cleaner that never meets a history never loads it

        path = f"{self.folder}/{name}"
        data = self.storage.read(path)  # FileNotFoundError: cleaned away (see `read`)
        try:
            # ParquetFile, not read_table: a third faster on small files (no dataset machinery),
            # but it skips a column the file lacks without a word, hence the check.
            parquet = pq.ParquetFile(pa.BufferReader(data))
            missing = [c for c in columns or () if c not in parquet.schema_arrow.names]
            if missing:
                raise CorruptFileError(self.storage.uri(path), f"has no column {', '.join(missing)}")
            return parquet.read(columns=columns)
        except (pa.ArrowException, OSError) as exc:
            raise CorruptFileError(self.storage.uri(path), f"unreadable history file ({exc})") from exc

    def row_count(self, name: str) -> int:
        """The rows of one data file, from its parquet footer."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = f"{self.folder}/{name}"
        try:
            return pq.read_metadata(pa.BufferReader(self.storage.read(path))).num_rows
        except (pa.ArrowException, OSError) as exc:
            raise CorruptFileError(self.storage.uri(path), f"unreadable history file ({exc})") from exc

    def read(self, start: str | None = None, end: str | None = None,
             columns: list[str] | None = None) -> pa.Table:
        """The rows (by default instantTime, completionTime, action) of the snapshot's files whose
        name range meets [start, end], sorted by instant time. A listed file that is gone was cleaned
        after a compaction replaced it: the newer snapshot is read instead (once)."""
        return self._read(start, end, columns or _COLUMNS, "instantTime")

    def _read(self, start: str | None, end: str | None, columns: list[str],
              sort_keys: str | list[tuple[str, str]]) -> pa.Table:
        """`read`'s rows sorted by `sort_keys`. The files of a snapshot rarely overlap and hold their
        rows in instant order, so the rows taken file by file in name order are usually sorted
        already, which a pass over the times confirms for a tenth of a sort's cost."""
        read = self._over_snapshot(lambda files: [(f.min_instant, self.read_file(f.name, columns))
                                                  for f in files if f.overlaps(start, end)])
        if not read:
            return lsm_instant_schema().empty_table().select(columns)
        import pyarrow as pa

        in_name_order = pa.concat_tables([table for _, table in sorted(read, key=itemgetter(0))])
        if _strictly_ascending(in_name_order.column("instantTime")):
            return in_name_order
        # Sorted from the manifest's order, as always: equal times keep the order they had.
        return pa.concat_tables([table for _, table in read]).sort_by(sort_keys)

    def _over_snapshot(self, work: Callable[[list[HistoryFile]], T]) -> T:
        """`work` over the latest snapshot's files; when a listed file is gone (cleaned after a
        compaction replaced it), over the newer snapshot instead (once)."""
        version, retried = self.latest_version(), False
        while True:
            try:
                return work([] if version is None else self.manifest(version))
            except FileNotFoundError:
                newer = self.latest_version()
                if retried or newer == version:
                    raise
                version, retried = newer, True

    def instant_count(self) -> int:
        """How many instants the latest snapshot holds (`len(timeline())`): its files' row counts
        from their parquet footers, without decoding a row; each archived instant is one row."""
        return self._over_snapshot(lambda files: sum(self.row_count(f.name) for f in files))

    def timeline(self) -> ArchivedTimelineV2:
        """Every archived instant, completed, with its completion time (CompletionTimeQueryViewV2).
        Rows hold completed actions, each its own comparable action, so sorting the rows by (time,
        action) is Hudi's order."""
        return ArchivedTimelineV2(self._read(None, None, _COLUMNS, [("instantTime", "ascending"),
                                                                    ("action", "ascending")]))


def _strictly_ascending(times: pa.ChunkedArray) -> bool:
    """Whether `times` has no null and each value is greater than the one before."""
    import pyarrow.compute as pc

    last = None
    for chunk in times.chunks:
        if not len(chunk):
            continue
        if chunk.null_count or (last is not None and chunk[0].as_py() <= last) or \
                (len(chunk) > 1 and not pc.all(pc.less(chunk[:-1], chunk[1:])).as_py()):
            return False
        last = chunk[-1].as_py()
    return True


class ArchivedTimelineV2(Timeline):
    """The archived timeline of layout 2 (Hudi 1.x's ArchivedTimelineV2): every archived instant,
    completed, with its completion time. It holds the history's columns in Hudi's order and makes
    the `Instant`s and the completion-time map on first use: most readers count the archived
    instants or ask for a few completion times, and 100,000 Python objects cost several times the
    read of their rows."""

    def __init__(self, rows: pa.Table):
        self._rows = rows

    def __len__(self) -> int:
        return self._rows.num_rows

    def __bool__(self) -> bool:
        return self._rows.num_rows > 0

    @cached_property
    def instants(self) -> list[Instant]:
        actions = self._rows.column("action").combine_chunks().dictionary_encode(null_encoding="encode")
        names = actions.dictionary.to_pylist()  # one string per action, shared by its instants
        return completed_instants(self._rows.column("instantTime").to_pylist(),
                                  map(names.__getitem__, actions.indices.to_pylist()))

    @cached_property
    def completion_times(self) -> dict[str, str]:
        # An instant archived without a completion time (a meta-server's) completed at its own time.
        # The rows are in Hudi's order and the first row of a time answers for it: no archiver writes
        # a savepoint, but an upgrade carries a 0.x history whose writers could draw one millisecond.
        times = self._rows.column("instantTime").to_pylist()
        completions = self._rows.column("completionTime").to_pylist()
        return first_per_requested_time((t, c or t) for t, c in zip(times, completions, strict=True))

    def completion_time(self, instant: Instant) -> str | None:
        """The row's own completion time: a savepoint row beside its commit's keeps its later one."""
        return self._finished.get((instant.timestamp, instant.action))

    @cached_property
    def _finished(self) -> dict[tuple[str, str], str]:
        """(requested time, action) -> the row's own completion time (its time when it has none)."""
        columns = (self._rows.column(c).to_pylist() for c in ("instantTime", "action", "completionTime"))
        return {(t, a): c or t for t, a, c in zip(*columns, strict=True)}


class ArchivedCompletionTimes:
    """Requested -> completion time of the archived instants, read from the history on the first
    question one of its files' name ranges can answer, as Hudi's CompletionTimeQueryViewV2 loads the
    archive lazily: a view whose log files are all of active or pending deltacommits reads the
    manifest at most, and no data file. Threads that race to the first read read the same rows."""

    def __init__(self, history: LSMHistory):
        self.history = history
        self._files: list[HistoryFile] | None = None
        self._times: Mapping[str, str] | None = None

    def get(self, instant: str) -> str | None:
        if self._times is None:
            if self._files is None:
                self._files = self.history.files()
            if not any(file.overlaps(instant, instant) for file in self._files):
                return None
            self._times = self.history.timeline().completion_times
        return self._times.get(instant)
