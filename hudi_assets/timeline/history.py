"""The LSM-tree history of timeline layout 2 (Hudi 1.x's archived timeline), read-only.

`.hoodie/timeline/history/` holds `_version_` (the text of the latest snapshot version N),
`manifest_N` (JSON `{"files":[{"fileName":..., "fileLen":...}]}`: the parquet files of snapshot N)
and `<minInstant>_<maxInstant>_<layer>.parquet` files of `HoodieLSMTimelineInstant` rows, one per
archived (completed) instant. A reader takes the latest snapshot only, so files a compaction
replaced, or a writer left half done, are never read. Hudi 1.x: LSMTimeline,
ArchivedTimelineLoaderV2, HoodieLSMTimelineManifest (apache/hudi @00ee6a6e, @07ba0d62).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.storage import Storage
from hudi_assets.timeline.instant import Instant, State
from hudi_assets.timeline.timeline import Timeline

if TYPE_CHECKING:
    import pyarrow as pa

VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
_MANIFEST = re.compile(r"^manifest_(\d+)$")
_DATA_FILE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")
# The columns of HoodieLSMTimelineInstant a timeline needs (metadata and plan are read on demand).
_COLUMNS = ["instantTime", "completionTime", "action"]


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

    def overlaps(self, start: str | None, end: str | None) -> bool:
        """Whether the file can hold an instant in [start, end] (None: unbounded)."""
        return (start is None or self.max_instant >= start) and (end is None or self.min_instant <= end)


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
        if not self.storage.exists(self.folder):
            return None
        versions = [int(m[1]) for s in self.storage.list(self.folder) if (m := _MANIFEST.match(s.name))]
        return max(versions, default=None)

    def files(self) -> list[HistoryFile]:
        """The data files of the latest snapshot, in the manifest's order."""
        version = self.latest_version()
        if version is None:
            return []
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

    def read(self, start: str | None = None, end: str | None = None) -> pa.Table:
        """The rows (instantTime, completionTime, action) of the snapshot's files whose name range
        meets [start, end], sorted by instant time."""
        import pyarrow as pa  # here: a command that never meets a history never loads pyarrow
        import pyarrow.parquet as pq

        tables = []
        for file in self.files():
            if not file.overlaps(start, end):
                continue
            path = f"{self.folder}/{file.name}"
            try:
                table = pq.read_table(pa.BufferReader(self.storage.read(path)), columns=_COLUMNS)
            except (pa.ArrowException, OSError) as exc:
                raise CorruptFileError(self.storage.uri(path), f"unreadable history file ({exc})") from exc
            tables.append(table)
        if not tables:
            return pa.table({c: pa.array([], pa.string()) for c in _COLUMNS})
        return pa.concat_tables(tables).sort_by("instantTime")

    def timeline(self) -> Timeline:
        """Every archived instant, completed, with its completion time (CompletionTimeQueryViewV2)."""
        rows = self.read().to_pylist()
        done = State.COMPLETED
        timeline = Timeline(Instant(r["instantTime"], r["action"], done).with_state(done) for r in rows)
        # An instant archived without a completion time (a meta-server's) completed at its own time.
        timeline.completion_times = {r["instantTime"]: r["completionTime"] or r["instantTime"] for r in rows}
        return timeline


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
