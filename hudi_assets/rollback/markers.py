"""Write markers of an instant: `.hoodie/.temp/<instant>/`, one per data file the write created,
merged into or appended to (Hudi's MarkerBasedRollbackUtils.getAllMarkerPaths).

Two layouts: TIMELINE_SERVER_BASED (Spark's default) keeps `MARKERS.type` and `MARKERS0..n`, text
files listing one marker name per line; DIRECT (Flink) creates one empty file per data file. Without
`MARKERS.type` the markers are DIRECT. A marker name is `<partition>/<file>.marker.<IOTYPE>`.
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.storage import Storage
from hudi_assets.timeline.timeline import METAFOLDER

TEMP_FOLDER = f"{METAFOLDER}/.temp"
MARKER_TYPE_FILE = "MARKERS.type"
MARKERS_PREFIX = "MARKERS"
MARKER_EXTENSION = ".marker"
TIMELINE_SERVER_BASED = "TIMELINE_SERVER_BASED"
IO_TYPES = ("CREATE", "MERGE", "APPEND")


def marker_dir(instant_time: str) -> str:
    return f"{TEMP_FOLDER}/{instant_time}"


@dataclass(frozen=True, slots=True)
class Marker:
    """A data file an instant wrote: its path relative to the base path and how it was written,
    with where the marker was read (its file and, in a `MARKERS<n>` file, its line)."""

    file_path: str
    io_type: str
    source: str = ""
    line: int | None = None

    @property
    def partition_path(self) -> str:
        return self.file_path.rpartition("/")[0]

    @property
    def file_name(self) -> str:
        return self.file_path.rpartition("/")[2]

    @property
    def where(self) -> str:
        """The marker as a person finds it: its file, and its line in a `MARKERS<n>` file."""
        return self.source if self.line is None else f"{self.source}, line {self.line}"


def parse_marker(name: str, source: str, line: int | None = None) -> Marker:
    """`<partition>/<file>.marker.<IOTYPE>` -> Marker (WriteMarkers.stripMarkerSuffix, IOType.valueOf)."""
    cut = name.find(MARKER_EXTENSION)
    io_type = name.rpartition(".")[2]
    if cut <= 0 or io_type not in IO_TYPES:
        where = source if line is None else f"{source}, line {line}"
        raise CorruptFileError(where, f"marker {name!r} is not <file>.marker.<CREATE|MERGE|APPEND>")
    return Marker(name[:cut], io_type, source, line)


def read_markers(storage: Storage, instant_time: str) -> list[Marker] | None:
    """Every marker of `instant_time`, in the order its files hold them; None when the instant has
    no marker directory at all."""
    folder = marker_dir(instant_time)
    if not storage.exists(folder):
        return None
    type_file = f"{folder}/{MARKER_TYPE_FILE}"
    if storage.exists(type_file):
        kind = storage.read(type_file).decode(errors="replace").strip()
        if kind != TIMELINE_SERVER_BASED:
            raise CorruptFileError(storage.uri(type_file), f"marker type {kind!r} is not supported")
        return _timeline_server_markers(storage, folder)
    prefix = len(folder) + 1
    names = sorted(s.path[prefix:] for s in storage.list(folder, recursive=True)
                   if not s.is_dir and MARKER_EXTENSION in s.name)
    return [parse_marker(name, storage.uri(f"{folder}/{name}")) for name in names]


def _timeline_server_markers(storage: Storage, folder: str) -> list[Marker]:
    """MarkerUtils.readTimelineServerBasedMarkersFromFileSystem: every `MARKERS<n>` file, line by line."""
    files = sorted((s for s in storage.list(folder) if not s.is_dir and s.name.startswith(MARKERS_PREFIX)
                    and s.name != MARKER_TYPE_FILE), key=lambda s: s.name)
    markers: list[Marker] = []
    for status in files:
        where = storage.uri(status.path)
        try:
            text = storage.read(status.path).decode()
        except UnicodeDecodeError as exc:
            raise CorruptFileError(where, f"is not UTF-8 text (byte {exc.start}); a marker file lists "
                                          "one marker name per line") from None
        markers.extend(parse_marker(line, where, number)
                       for number, line in enumerate(text.splitlines(), 1) if line.strip())
    return markers


def create_append_marker(storage: Storage, instant_time: str, rel: str) -> None:
    """A DIRECT `APPEND` marker of the log file `rel` under `instant_time` (Hudi's rollback writes
    one for its command-block log file, `getRollbackLogMarkerCallback`, before the file is created:
    whoever resumes a crashed rollback finds every file it may have written)."""
    storage.create_if_absent(f"{marker_dir(instant_time)}/{rel}{MARKER_EXTENSION}.APPEND", b"")


def delete_marker_dir(storage: Storage, instant_time: str) -> None:
    """WriteMarkers.quietDeleteMarkerDir."""
    storage.delete_dir(marker_dir(instant_time))
