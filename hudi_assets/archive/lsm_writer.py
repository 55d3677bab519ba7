"""`LSMTimelineWriter`: writes archived instants into the LSM-tree history of Hudi 1.x tables.

One archival writes one layer-0 parquet file `<first>_<last>_0.parquet` of HoodieLSMTimelineInstant
rows, then a new snapshot: `manifest_{N+1}` (the old file list plus the new file) and `_version_`
rewritten. `compact_and_clean` merges a layer's oldest files into the next layer once the layer holds
`hoodie.timeline.compaction.batch.size` files, and cleans snapshots beyond the newest (3 +
compactions) with every data file none of them lists.

Readers take the latest snapshot only, so a crash anywhere leaves either the old snapshot (the new
file unlisted: its instants are still active) or the new one: a stale `manifest_{N+1}` left before
`_version_` was rewritten is written again by the next run, a half-written layer-0 file not in the
manifest is rewritten, one in it is kept (Hudi: "the last archiving succeeded"). Followed: Hudi 1.0.2
/ 1.1 LSMTimelineWriter (apache/hudi id 47010909; master @009a1bc5 reads the retained-manifest count
from a config key 1.0.x hard-codes as 3), including its compaction candidate rule before PR #17784.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.listener import QUIET, Listener, Step
from hudi_assets.storage import Storage
from hudi_assets.timeline.history import (
    MANIFEST_PREFIX,
    VERSION_FILE,
    HistoryFile,
    LSMHistory,
    data_file_name,
    is_data_file,
    lsm_instant_schema,
    manifest_text,
    manifest_version,
    manifest_versions,
)

log = logging.getLogger(__name__)
FILE_LAYER_ZERO = 0
# The size a compaction group may reach (Hudi 1.0.x/1.1: 1 GB, not configurable).
TARGET_FILE_MAX_BYTES = 1024 * 1024 * 1024
# Snapshots kept besides one per compaction of the run (hard-coded 3 in Hudi 1.0.x/1.1).
MANIFEST_RETAINED_VERSIONS = 3
# Hudi's parquet writer default (hoodie.parquet.compression.codec).
COMPRESSION = "gzip"


@dataclass
class Compaction:
    """What one `compact_and_clean` did: the files merged per new file, and the files cleaned."""

    merged: dict[str, list[str]] = field(default_factory=dict)
    cleaned: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LayerSummary:
    """One layer of the latest snapshot, as a dry run shows it."""

    layer: int
    files: int
    instants: int
    size_bytes: int
    blocked_by: str | None = None  # the oversized oldest file that stops a due compaction


def layer_summaries(history: LSMHistory, batch_size: int,
                    target_bytes: int = TARGET_FILE_MAX_BYTES) -> list[LayerSummary]:
    """Files, rows (parquet footers) and bytes per layer of the latest snapshot, ascending."""
    files = history.files()
    summaries = []
    for layer in sorted({f.layer for f in files}):
        group = layer_files(files, layer)
        blocker = blocking_file(group, batch_size, target_bytes)
        summaries.append(LayerSummary(layer, len(group), sum(history.row_count(f.name) for f in group),
                                      sum(f.length for f in group), blocker.name if blocker else None))
    return summaries


def compaction_candidates(files: Sequence[HistoryFile], batch_size: int,
                          target_bytes: int = TARGET_FILE_MAX_BYTES) -> list[HistoryFile]:
    """The group of one layer's files (sorted by name) a compaction merges (getCandidateFiles of
    1.0.x/1.1): consecutive files from the oldest, up to `batch_size`, stopping before the next
    file once the group exceeds `target_bytes`. A group of fewer than 2 files is no compaction, so
    an oldest file bigger than the target blocks its layer for good (apache/hudi #17783)."""
    candidates: list[HistoryFile] = []
    total = 0
    for file in files[:batch_size]:
        if total > target_bytes:
            break
        total += file.length
        candidates.append(file)
    return candidates


def blocking_file(files: Sequence[HistoryFile], batch_size: int,
                  target_bytes: int = TARGET_FILE_MAX_BYTES) -> HistoryFile | None:
    """The file that stops a due compaction of this layer (`files` sorted), if one does."""
    if len(files) < batch_size or len(compaction_candidates(files, batch_size, target_bytes)) >= 2:
        return None
    return files[0]


def layer_files(files: Sequence[HistoryFile], layer: int) -> list[HistoryFile]:
    """A layer's files sorted by name (LSMFileEntry.compareTo: the min instant first)."""
    return sorted((f for f in files if f.layer == layer), key=lambda f: f.name)


def parquet_bytes(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, compression=COMPRESSION)
    return out.getvalue()


class LSMTimelineWriter:
    """Writes one table's history folder; call it under the table's maintenance lock."""

    def __init__(self, storage: Storage, folder: str, batch_size: int, listener: Listener = QUIET,
                 target_bytes: int = TARGET_FILE_MAX_BYTES):
        self.storage = storage
        self.folder = folder
        self.batch_size = batch_size
        self.target_bytes = target_bytes
        self.listener = listener
        self.history = LSMHistory(storage, folder)

    def _path(self, name: str) -> str:
        return f"{self.folder}/{name}"

    # ------------------------------------------------------------------ layer 0
    def write(self, rows: list[dict]) -> str | None:
        """Write `rows` (HoodieLSMTimelineInstant records, ascending) as a layer-0 file and a new
        snapshot listing it; the file's name, None when a previous run already committed it."""
        if not rows:
            raise ValueError("no archived instants to write")
        name = data_file_name(rows[0]["instantTime"], rows[-1]["instantTime"], FILE_LAYER_ZERO)
        path = self._path(name)
        if self.storage.exists(path):
            if any(f.name == name for f in self.history.files()):
                log.info("Skipping the archived file %s: a previous run committed it", self.storage.uri(path))
                return None
            self.storage.delete_checked([path])  # left half written by a run that crashed
        self.storage.mkdirs(self.folder)
        self.storage.write(path, parquet_bytes(pa.Table.from_pylist(rows, lsm_instant_schema())))
        self.listener.reached(Step.LSM_FILE_WRITTEN)
        self.update_manifest([], name)
        return name

    # ------------------------------------------------------------------ snapshots
    def update_manifest(self, remove: list[str], add: str) -> int:
        """A new snapshot: the latest file list without `remove`, plus `add`; its version."""
        latest = self.history.latest_version()
        files = [] if latest is None else self.history.manifest(latest)
        files = [f for f in files if f.name not in remove]
        status = self.storage.status(self._path(add))
        if status is None:
            raise HudiAssetsError(f"{self.storage.uri(self._path(add))}: vanished before its snapshot")
        files.append(HistoryFile.of(add, status.size, self.storage.uri(self.folder)))
        version = 1 if latest is None else latest + 1
        manifest = self._path(f"{MANIFEST_PREFIX}{version}")
        # A manifest of this version without `_version_` naming it is a crashed run's: written again.
        self.storage.delete_checked([manifest])
        if not self.storage.create_if_absent(manifest, manifest_text(files).encode()):
            raise HudiAssetsError(f"{self.storage.uri(manifest)}: appeared while writing it; "
                                  "another archiver is running")
        self.listener.reached(Step.LSM_MANIFEST_WRITTEN)
        version_file = self._path(VERSION_FILE)
        self.storage.delete_checked([version_file])
        # Between these two steps readers fall back to the highest manifest_N.
        self.listener.reached(Step.LSM_VERSION_DELETED)
        self.storage.create_if_absent(version_file, str(version).encode())
        return version

    # ------------------------------------------------------------------ compaction
    def compact_and_clean(self) -> Compaction:
        """Compact layer 0, then each next layer a compaction fed, then clean old snapshots."""
        done = Compaction()
        files = self.history.files()
        layer = FILE_LAYER_ZERO
        while (merged := self._compact(files, layer)) is not None:
            name, sources = merged
            done.merged[name] = [f.name for f in sources]
            files = self.history.files()
            layer += 1
        done.cleaned = self.clean(len(done.merged))
        return done

    def _compact(self, files: list[HistoryFile], layer: int) -> tuple[str, list[HistoryFile]] | None:
        group = layer_files(files, layer)
        if len(group) < self.batch_size:
            return None
        sources = compaction_candidates(group, self.batch_size, self.target_bytes)
        if len(sources) < 2:
            log.warning("Compaction of layer %d is blocked: %s is bigger than the %d-byte target",
                        layer, sources[0].name, self.target_bytes)
            return None
        name = data_file_name(min(f.min_instant for f in sources), max(f.max_instant for f in sources),
                              layer + 1)
        rows = pa.concat_tables([self.history.read_file(f.name) for f in sources])
        path = self._path(name)
        self.storage.delete_checked([path])  # a crashed compaction's unlisted file
        self.storage.write(path, parquet_bytes(rows.cast(lsm_instant_schema())))
        self.listener.reached(Step.LSM_COMPACTED_FILE_WRITTEN)
        self.update_manifest([f.name for f in sources], name)
        log.info("Compacted %d layer-%d files into %s", len(sources), layer, name)
        return name, sources

    def clean(self, compactions: int) -> list[str]:
        """Delete the snapshots older than the newest (3 + `compactions`), manifests first, then
        every data file none of the kept snapshots lists; the names deleted."""
        entries = self.storage.list(self.folder)  # one listing: the snapshots and what to clean
        versions = manifest_versions(entries)
        keep = sorted(versions, reverse=True)[:MANIFEST_RETAINED_VERSIONS + compactions]
        if len(versions) <= len(keep):
            return []
        listed = {f.name for version in keep for f in self.history.manifest(version)}
        names = [s.name for s in entries if not s.is_dir]
        manifests = [n for n in names if (v := manifest_version(n)) is not None and v not in keep]
        data = [n for n in names if is_data_file(n) and n not in listed]
        deleted: list[str] = []
        for group in (manifests, data):
            result = self.storage.delete_many([self._path(n) for n in group])
            deleted += [p.rpartition("/")[2] for p in result.deleted]
            for path, why in result.failed.items():  # unlisted: read by no one; a later clean retries
                log.warning("could not delete %s: %s", self.storage.uri(path), why)
            self.listener.reached(Step.LSM_CLEANING, len(deleted))
        return deleted
