"""Write a realistic Hudi 0.14/0.15 (table version 6) table history through `Storage`; at table version 9
as Hudi 1.1 writes it (`demo.versions.TableFormat`: timeline layout 2, a log file per deltacommit).

The history is what Hudi's Spark writer leaves behind (direct file listing unless a metadata table is
asked for, timeline-server markers, eager rollback of failed writes), state file by state file and
data file by data file:

1. an INSERT creating file groups in every partition but the last (which a later upsert creates);
2. UPSERTs rewriting some file groups (COW: a new base file version of the whole group; MOR: a new
   log file of AVRO_DATA blocks on the group's current slice), every third one also inserting into a
   new file group;
3. an INSERT_OVERWRITE replacecommit replacing every file group of one partition by new ones;
4. a savepoint of a commit two thirds in (its instant time is the savepointed commit's, as in Hudi);
5. MOR only: a pending compaction plan over every file group that has log files;
6. a failed write: requested and inflight files, a base file of a new group and a new version of an
   existing group (COW) or a log block (MOR), and its markers, but no completed file.

`generate_table` returns a `DemoTable` describing the timeline and, for each completed commit, the rows
a snapshot read as of that commit must return. With `fast=True` the same timeline, file names and
commit metadata are written, but data files are empty, for building very large tables quickly.
"""

from __future__ import annotations

import itertools
import os
import random
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from hudi_assets import bloom
from hudi_assets.demo.formats import (
    PRECOMBINE_FIELD,
    RECORD_KEY_FIELD,
    TableSchema,
    avro_log_file,
    marker_name,
    parquet_base_file,
    partition_metadata,
    timeline_server_markers,
)
from hudi_assets.demo.metadata import DemoMetadataWriter, max_commits_without_compaction, records_stats
from hudi_assets.demo.versions import table_format
from hudi_assets.exceptions import HudiAssetsError, HudiInputError
from hudi_assets.java_collections import in_java_hashmap_order, java_hashmap_order
from hudi_assets.logformat import LogFileName
from hudi_assets.metadata.payloads import ColumnRange
from hudi_assets.storage import Storage
from hudi_assets.table_config import COPY_ON_WRITE, MERGE_ON_READ, write_table_config
from hudi_assets.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_assets.timeline.instant import (
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    SAVEPOINT,
    Instant,
    State,
)

PARTITION_METAFILE = ".hoodie_partition_metadata"
BASE_FILE_EXTENSION = ".parquet"
HOODIE_DIRS = (".hoodie/.aux/.bootstrap/.partitions", ".hoodie/.aux/.bootstrap/.fileids", ".hoodie/.schema",
               ".hoodie/.temp", ".hoodie/archived")
DATA_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
_RIDERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_MB = 1024 * 1024
_MAX_PARQUET_FILE_SIZE = 120 * _MB  # hoodie.parquet.max.file.size, used by the compaction metrics


_STAT_TEMPLATE = WriteStat.new().fields


def _stat(**values: Any) -> WriteStat:
    """`WriteStat.new(**values)` without its per-call validation (a million stats add up); delta-stat
    keys must come in Hudi's order. Tests hold the two equal."""
    fields = dict(_STAT_TEMPLATE)
    fields.update(values)
    return WriteStat(fields)


def instant_time(moment: datetime) -> str:
    """A 17-digit `yyyyMMddHHmmssSSS` instant time."""
    return f"{moment:%Y%m%d%H%M%S}{moment.microsecond // 1000:03d}"


# ----------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class DemoFileSlice:
    """A file slice as Hudi's file-system view lists it: base file (None for log-only) and logs,
    newest log first (Hudi's slice order)."""

    partition: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[str, ...] = ()

    @property
    def paths(self) -> list[str]:
        names = ([self.base_file] if self.base_file else []) + list(self.log_files)
        return [f"{self.partition}/{n}" if self.partition else n for n in names]


@dataclass
class DemoTable:
    """What `generate_table` wrote.

    `instants`: every instant in its final state, in Hudi's order (the savepoint shares its time
    with the savepointed commit). `snapshots[t]`: record key -> row (meta and data columns) that a
    snapshot read as of completed commit `t` returns; empty dicts in fast mode, which writes no rows.
    `latest_file_slices`: the newest slice of every live (not replaced) file group that holds files,
    i.e. what a snapshot reader merges; it includes a log file of the failed MOR write, as Hudi's
    file-system view does (readers skip its blocks). Hudi's view also puts an empty slice at the
    pending compaction's instant for each file group of `compaction_file_ids`; that one is not listed.
    `replaced_file_ids`: replacecommit time -> partition -> replaced file ids. `savepointed_files`:
    partition -> file names in the savepoint. `failed_files`: paths (relative to the base path) the
    failed write left behind. `data_files_written` counts base and log files.
    """

    storage: Storage
    name: str
    table_type: str
    partition_field: str
    hive_style: bool
    partitions: list[str]
    instants: list[Instant]
    operations: dict[str, str]
    snapshots: dict[str, dict[str, dict[str, Any]]]
    latest_file_slices: list[DemoFileSlice]
    replaced_file_ids: dict[str, dict[str, list[str]]]
    savepoint: str | None
    savepointed_files: dict[str, list[str]]
    pending_compaction: str | None
    compaction_file_ids: list[str]
    failed_instant: str | None
    failed_files: list[str]
    data_files_written: int
    fast: bool
    seed: int

    @property
    def base_path(self) -> str:
        return self.storage.base_uri

    @property
    def is_mor(self) -> bool:
        return self.table_type == MERGE_ON_READ

    @property
    def completed_commits(self) -> list[str]:
        """Times of completed commit/deltacommit/replacecommit instants, oldest first."""
        return [i.timestamp for i in self.instants if i.is_completed and i.action in DATA_ACTIONS]

    def completed(self, action: str) -> list[str]:
        return [i.timestamp for i in self.instants if i.is_completed and i.action == action]

    @property
    def latest_rows(self) -> dict[str, dict[str, Any]]:
        return self.snapshots[self.completed_commits[-1]]

    def rows_as_of(self, ts: str) -> dict[str, dict[str, Any]]:
        """Rows of a snapshot read as of `ts` (the latest completed commit at or before it)."""
        done = [t for t in self.completed_commits if t <= ts]
        return self.snapshots[done[-1]] if done else {}


# ------------------------------------------------------------------------------- internal state
@dataclass
class _Slice:
    base_instant: str
    base_file: str | None
    base_size: int
    logs: list[tuple[str, int]] = field(default_factory=list)  # (name, size), oldest version first

    def logs_newest_first(self) -> list[str]:
        return [name for name, _ in reversed(self.logs)]


@dataclass
class _Group:
    partition: str
    file_id: str
    num_records: int
    keys: list[str]
    slice: _Slice
    replaced_by: str | None = None
    pending_compaction: str | None = None


@dataclass
class _Write:
    """One data file of a commit: its stat, what completion changes, the file for markers."""

    partition: str
    stat: WriteStat
    marker: str
    apply: Callable[[], None]
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    # A log file lands in its committed slice even when its write fails (readers skip its blocks).
    in_view_if_failed: bool = False


@dataclass
class _Commit:
    ts: str
    moment: datetime
    action: str
    operation: str
    stage: int
    task: int = 0
    writes: list[_Write] = field(default_factory=list)
    inserts: dict[str, int] = field(default_factory=dict)  # partition -> new records (workload)
    updates: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict)  # p -> fid -> (prev, n)
    replaced: dict[str, list[str]] | None = None
    new_partitions: list[str] = field(default_factory=list)
    jobs: list[Callable[[], _Write]] = field(default_factory=list)  # data files, in task order
    on_complete: list[Callable[[], None]] = field(default_factory=list)
    removed_keys: list[str] = field(default_factory=list)
    log_ranges: dict[str, list[ColumnRange]] = field(default_factory=dict)  # log path -> column ranges


class _Generator:
    def __init__(self, storage: Storage, table_type: str, *, name: str, partition_values: Sequence[str],
                 partition_field: str, hive_style: bool, commits: int, start_time: datetime,
                 interval: timedelta, seed: int, fast: bool, files_per_partition: int,
                 records_per_file: int, update_fraction: float, bloom_entries: int, savepoint: bool,
                 insert_overwrite: bool, pending_compaction: bool, failed_write: bool, metadata_table: bool,
                 table_version: int = 6):
        if table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
            raise HudiInputError(f"table type must be {COPY_ON_WRITE} or {MERGE_ON_READ}, not {table_type!r}")
        if commits < 1 or files_per_partition < 1 or records_per_file < 1 or not partition_values:
            raise HudiInputError("commits, files_per_partition, records_per_file and partitions must be >= 1")
        if len(set(partition_values)) != len(partition_values):
            raise HudiInputError("partition values must be distinct")
        if interval < timedelta(milliseconds=1):
            raise HudiInputError("the interval between instants must be at least one millisecond")
        if metadata_table and fast:
            raise HudiInputError("a metadata table indexes the data files' contents: fast mode writes none")
        self.format = table_format(table_version)
        if metadata_table and self.format.hudi_1x and commits > max_commits_without_compaction():
            raise HudiInputError(
                f"a table version {table_version} demo table with a metadata table takes at most "
                f"{max_commits_without_compaction()} commits, not {commits}: more would need a compaction of "
                "its metadata table, which hudi-assets does not write on Hudi 1.x tables yet")
        self.storage = storage
        self.table_type = table_type
        self.is_mor = table_type == MERGE_ON_READ
        self.name = name
        self.schema = TableSchema(name, partition_field)
        self.partition_field = partition_field
        self.hive_style = hive_style
        self.values = {self._path(v): v for v in partition_values}
        self.partitions = list(self.values)
        self.commits = commits
        self.start = start_time if start_time.tzinfo else start_time.replace(tzinfo=UTC)
        self.interval = interval
        self.seed = seed
        self.fast = fast
        self.files_per_partition = files_per_partition
        self.records_per_file = records_per_file
        self.update_fraction = update_fraction
        self.bloom_entries = bloom_entries
        self.want_savepoint = savepoint
        self.want_replace = insert_overwrite
        self.want_compaction = pending_compaction and self.is_mor
        self.want_failed = failed_write
        # Structure (timeline, file ids, counts) and data values come from separate streams, so
        # fast mode, which draws no data values, writes exactly the same names and commit metadata.
        self.rng = random.Random(seed)
        self.data_rng = random.Random(f"{seed}/data")
        self.next_index = 0
        self.stage = self.rng.randint(10, 30)
        self.attempt = self.rng.randint(10, 60)
        self.groups: dict[tuple[str, str], _Group] = {}
        self.rows: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []
        self.local_dirs: set[str] = set()
        self.empty_files: list[str] = []
        self.instants: list[Instant] = []
        self.operations: dict[str, str] = {}
        self.snapshots: dict[str, dict[str, dict[str, Any]]] = {}
        self.replaced_ids: dict[str, dict[str, list[str]]] = {}
        self.data_files = 0
        self.savepoint: str | None = None
        self.savepointed_files: dict[str, list[str]] = {}
        self.compaction: str | None = None
        self.compaction_ids: list[str] = []
        self.failed: str | None = None
        self.failed_files: list[str] = []
        self.metadata = (DemoMetadataWriter(storage, self.schema, seed, self.format.hudi_1x) if metadata_table
                         else None)
        self.metadata_initialized = False

    # ------------------------------------------------------------------------ naming
    def _path(self, value: str) -> str:
        return f"{self.partition_field}={value}" if self.hive_style else value

    def _next_instant(self) -> tuple[str, datetime]:
        step_ms = self.interval // timedelta(milliseconds=1)
        jitter = self.rng.randrange(min(1000, step_ms))
        moment = self.start + self.interval * self.next_index + timedelta(milliseconds=jitter)
        self.next_index += 1
        return instant_time(moment), moment

    def _new_file_id(self) -> str:
        return f"{uuid.UUID(int=self.rng.getrandbits(128), version=4)}-0"

    def _new_key(self) -> str:
        return str(uuid.UUID(int=self.data_rng.getrandbits(128), version=4))

    def _token(self, commit: _Commit) -> tuple[int, str]:
        task = commit.task
        commit.task += 1
        self.attempt += 1
        return task, f"{task}-{commit.stage}-{self.attempt}"

    # ---------------------------------------------------------------------- storage
    def _put(self, rel: str, data: bytes) -> None:
        if not self.storage.create_if_absent(rel, data):
            raise HudiAssetsError(f"{self.storage.uri(rel)} already exists; the demo writes only new tables")

    def _put_data(self, rel: str, data: bytes) -> None:
        self.data_files += 1
        if self.fast:
            self.empty_files.append(rel)  # created in a batch at the end of the commit's writes
        else:
            self._put(rel, data)

    def _flush_empty_files(self) -> None:
        """Create the queued empty data files, several at a time (the syscalls, or requests on an
        object store, release the GIL). Locally they are created in place, still write-once. Each
        local directory's files are created by one thread in the order queued, and directories in
        sorted order, so a file system that lists in creation order lists the same on every build."""
        if not self.empty_files:
            return
        local = self.storage.is_local
        if local:
            for directory in sorted({rel.rpartition("/")[0] for rel in self.empty_files} - self.local_dirs):
                os.makedirs(f"{self.storage.root}/{directory}", exist_ok=True)
                self.local_dirs.add(directory)

        def create(rel: str) -> None:
            if local:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
                os.close(os.open(f"{self.storage.root}/{rel}", flags, 0o644))
            else:
                self._put(rel, b"")

        def create_all(rels: list[str]) -> None:
            for rel in rels:
                create(rel)

        workers = 4 if local else 32
        files, self.empty_files = self.empty_files, []
        if local:
            by_directory: dict[str, list[str]] = {}
            for rel in files:
                by_directory.setdefault(rel.rpartition("/")[0], []).append(rel)
            chunks = list(by_directory.values())
        else:  # an object store lists in key order whatever the order of writes
            chunks = [files[i : i + 512] for i in range(0, len(files), 512)]
        with ThreadPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
            for _ in pool.map(create_all, chunks):
                pass

    def _put_instant(self, instant: Instant, data: bytes = b"", moment: datetime | None = None) -> None:
        """A state file; a completed one of a layout-2 table completes half an interval after
        `moment` (its requested time), which names it."""
        completion = ""
        if moment is not None:
            completion = instant_time(moment + max(self.interval / 2, timedelta(milliseconds=1)))
        self._put(self.format.state_file(instant, completion), data)

    # -------------------------------------------------------------------------- rows
    def _row(self, commit: _Commit, task: int, counter: int, partition: str, file_name: str, *,
             key: str, previous: dict[str, Any] | None) -> dict[str, Any]:
        rng = self.data_rng
        epoch_ms = int(commit.moment.timestamp() * 1000) + rng.randrange(1000)
        row = {
            "_hoodie_commit_time": commit.ts,
            "_hoodie_commit_seqno": f"{commit.ts}_{task}_{counter}",
            "_hoodie_record_key": key,
            "_hoodie_partition_path": partition,
            "_hoodie_file_name": file_name,
            PRECOMBINE_FIELD: epoch_ms,
            RECORD_KEY_FIELD: key,
            "rider": previous["rider"] if previous else f"rider-{rng.choice(_RIDERS)}",
            "driver": f"driver-{rng.choice(_RIDERS)}",
            "fare": round(rng.uniform(5.0, 120.0), 2),
            self.partition_field: self.values[partition],
        }
        return row

    # ------------------------------------------------------------------------ writes
    def _create(self, commit: _Commit, partition: str, num_records: int) -> _Write:
        """A new file group (Hudi's create handle)."""
        file_id = self._new_file_id()
        task, token = self._token(commit)
        name = f"{file_id}_{token}_{commit.ts}{BASE_FILE_EXTENSION}"
        rel = f"{partition}/{name}"
        rows: dict[str, dict[str, Any]] = {}
        data = b""
        if not self.fast:
            for counter in range(num_records):
                key = self._new_key()
                rows[key] = self._row(commit, task, counter, partition, name, key=key, previous=None)
            data = parquet_base_file(self.schema, list(rows.values()), bloom_entries=self.bloom_entries)
        self._put_data(rel, data)
        stat = _stat(
            fileId=file_id, path=rel, prevCommit="null", numWrites=num_records, numInserts=num_records,
            totalWriteBytes=len(data), partitionPath=partition, fileSizeInBytes=len(data),
            runtimeStats=self._runtime(create=True),
        )
        group = _Group(partition, file_id, num_records, list(rows), _Slice(commit.ts, name, len(data)))

        def apply() -> None:
            self.groups[(partition, file_id)] = group

        return _Write(partition, stat, marker_name(partition, name, "CREATE"), apply, rows)

    def _update(self, commit: _Commit, group: _Group, num_updates: int) -> _Write:
        """Update `num_updates` records of a group: COW merge handle, MOR append handle."""
        task, token = self._token(commit)
        partition, file_id, current = group.partition, group.file_id, group.slice
        chosen = set(self.data_rng.sample(group.keys, num_updates)) if not self.fast else set()
        rows: dict[str, dict[str, Any]] = {}
        if not self.is_mor:
            name = f"{file_id}_{token}_{commit.ts}{BASE_FILE_EXTENSION}"
            data = b""
            if not self.fast:
                counter = 0
                for key in group.keys:  # the merge handle rewrites every record, in file order
                    old = self.rows[key]
                    if key in chosen:
                        rows[key] = self._row(commit, task, counter, partition, name, key=key, previous=old)
                        counter += 1
                    else:
                        rows[key] = {**old, "_hoodie_file_name": name}
                data = parquet_base_file(self.schema, list(rows.values()), bloom_entries=self.bloom_entries)
            self._put_data(f"{partition}/{name}", data)
            stat = _stat(
                fileId=file_id, path=f"{partition}/{name}", prevCommit=current.base_instant,
                numWrites=group.num_records, numUpdateWrites=num_updates, totalWriteBytes=len(data),
                partitionPath=partition, fileSizeInBytes=len(data), runtimeStats=self._runtime(create=False),
            )

            def apply_cow() -> None:
                group.slice = _Slice(commit.ts, name, len(data))

            return _Write(partition, stat, marker_name(partition, name, "MERGE"), apply_cow, rows)

        version = self._next_log_version(group)
        # 1.x names a log file after the deltacommit writing it; 0.x after its slice's base instant.
        log_instant = commit.ts if self.format.log_file_per_commit else current.base_instant
        name = LogFileName(file_id, log_instant, "log", version, token).format()
        rel = f"{partition}/{name}"
        data = b""
        if not self.fast:
            for counter, key in enumerate(k for k in group.keys if k in chosen):
                rows[key] = self._row(commit, task, counter, partition, file_id, key=key,
                                      previous=self.rows[key])
            data = avro_log_file(self.schema.writer_schema_with_meta, commit.ts, rows.values())
        self._put_data(rel, data)
        column_stats: dict[str, Any] = {"val": None}
        if self.metadata is not None:
            commit.log_ranges[rel] = self.metadata.log_file_ranges(rows.values())
            column_stats = records_stats(rel, commit.log_ranges[rel])
        stat = _stat(
            fileId=file_id, path=rel, prevCommit=current.base_instant,
            numWrites=num_updates, numUpdateWrites=num_updates, totalWriteBytes=len(data),
            partitionPath=partition, fileSizeInBytes=len(data), runtimeStats=self._runtime(create=False),
            logVersion=version, logOffset=0, baseFile=current.base_file or "",
            logFiles=[*current.logs_newest_first(), name],
            # A JSON-only field: 1.x's Avro write stat has none.
            **({} if self.format.hudi_1x else {"recordsStats": column_stats}),
        )

        def apply_mor() -> None:
            current.logs.append((name, len(data)))

        if self.format.log_file_per_commit:  # 1.x marks the log file it creates
            return _Write(partition, stat, marker_name(partition, name, "CREATE"), apply_mor, rows)
        # 0.x names an append handle's marker after the slice's base file name.
        marker = f"{file_id}_{token}_{current.base_instant}{BASE_FILE_EXTENSION}"
        return _Write(partition, stat, marker_name(partition, marker, "APPEND"), apply_mor, rows, True)

    def _next_log_version(self, group: _Group) -> int:
        """The version of the log file an append to `group`'s current slice writes (1.x: a new file)."""
        return 1 if self.format.log_file_per_commit else len(group.slice.logs) + 1

    def _runtime(self, create: bool) -> dict[str, int]:
        millis = self.rng.randint(40, 900)
        return {"totalScanTime": 0, "totalUpsertTime": 0 if create else millis,
                "totalCreateTime": millis if create else 0}

    # --------------------------------------------------------------------- metadata
    def _workload(self, commit: _Commit) -> CommitMetadata:
        """The inflight file: Hudi's workload profile (`saveWorkloadProfileMetadataToInflight`)."""
        stats: dict[str, list[WriteStat]] = {}
        for partition in java_hashmap_order([*commit.inserts, *commit.updates]):
            stats[partition] = [self._profile_stat("", "null", inserts=commit.inserts.get(partition, 0))]
            updates = commit.updates.get(partition, {})
            for file_id in java_hashmap_order(updates):
                prev, count = updates[file_id]
                stats[partition].append(self._profile_stat(file_id, prev, updates=count))
        return CommitMetadata(stats, extra_metadata={}, operation_type=commit.operation)

    @staticmethod
    def _profile_stat(file_id: str, prev: str, inserts: int = 0, updates: int = 0) -> WriteStat:
        return _stat(fileId=file_id, path=None, prevCommit=prev, numUpdateWrites=updates,
                             numInserts=inserts, partitionPath=None)

    def _completed_metadata(self, commit: _Commit) -> CommitMetadata:
        by_partition: dict[str, list[WriteStat]] = {}
        for write in commit.writes:
            by_partition.setdefault(write.partition, []).append(write.stat)
        return CommitMetadata(
            in_java_hashmap_order(by_partition),
            extra_metadata={"schema": self.schema.writer_schema},
            operation_type=commit.operation,
            partition_to_replace_file_ids=(
                None if commit.replaced is None else in_java_hashmap_order(commit.replaced)
            ),
        )

    # ---------------------------------------------------------------------- commits
    def _begin(self, action: str, operation: str) -> _Commit:
        ts, moment = self._next_instant()
        self.stage += self.rng.randint(2, 12)
        return _Commit(ts, moment, action, operation, self.stage)

    def _write_commit(self, commit: _Commit, plan: Callable[[_Commit], None], complete: bool = True) -> None:
        """Requested, inflight (workload), data files, then completed: the order Hudi writes them in."""
        requested = Instant(commit.ts, commit.action, State.REQUESTED)
        if commit.action == REPLACE_COMMIT:
            # Spark's insert_overwrite writes `new HoodieRequestedReplaceMetadata()`: every field null.
            empty = {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}
            self._put_instant(requested, self.format.plan("HoodieRequestedReplaceMetadata", empty))
        else:
            self._put_instant(requested)
        self._metadata_table_services(commit.moment)
        plan(commit)  # decides the workload, drawing all structure randomness first
        workload = self.format.commit_metadata(self._workload(commit))
        self._put_instant(requested.with_state(State.INFLIGHT), workload)
        for partition in commit.new_partitions:
            depth = partition.count("/") + 1
            metadata = partition_metadata(commit.ts, depth, commit.moment)
            self._put(f"{partition}/{PARTITION_METAFILE}", metadata)
        self._execute(commit)
        if not complete:
            markers = timeline_server_markers(w.marker for w in commit.writes)
            for file_name, data in markers.items():
                self._put(f".hoodie/.temp/{commit.ts}/{file_name}", data)
            self._record_failed(commit, requested.with_state(State.INFLIGHT))
            return
        metadata = self._completed_metadata(commit)
        if self.metadata is not None:  # the metadata table is written before the data commit completes
            # ...and completes before it does (a quarter of an interval after its requested time, half)
            self.metadata.commit(commit.ts, metadata.partition_to_write_stats, commit.log_ranges,
                                 instant_time(commit.moment + self.interval / 4))
        self._put_instant(requested.with_state(State.COMPLETED), self.format.commit_metadata(metadata),
                          commit.moment)
        self._record_completed(commit, requested.with_state(State.COMPLETED))

    def _metadata_table_services(self, moment: datetime | None = None) -> None:
        """What the write client does for the metadata table once a write is requested at `moment`:
        create it on the first write (its deltacommits completing a millisecond apart; with no
        `moment`, on the clock), then compact it when due."""
        if self.metadata is None:
            return
        if not self.metadata_initialized:
            times = (instant_time(moment + timedelta(milliseconds=n)) for n in itertools.count(1))
            self.metadata.initialize(None if moment is None else times)
            self.metadata_initialized = True
        self.metadata.run_table_services()

    def _record_failed(self, commit: _Commit, last: Instant) -> None:
        """Bookkeeping of a write that stopped at `last`: its log files stay in their slices."""
        self.instants.append(last)
        for write in commit.writes:
            if write.in_view_if_failed:
                write.apply()
        self.failed = commit.ts
        self.failed_files = [w.stat.path for w in commit.writes if w.stat.path]

    def _record_completed(self, commit: _Commit, completed: Instant) -> None:
        """Bookkeeping of a completed commit: file groups, rows and the snapshot as of it."""
        for key in commit.removed_keys:
            self.rows.pop(key, None)
        for write in commit.writes:
            write.apply()
            self.rows.update(write.rows)
        for action in commit.on_complete:
            action()
        self.created.extend(commit.new_partitions)
        self.instants.append(completed)
        self.operations[commit.ts] = commit.operation
        self.snapshots[commit.ts] = dict(self.rows) if not self.fast else {}

    def _execute(self, commit: _Commit) -> None:
        for job in commit.jobs:
            commit.writes.append(job())
        self._flush_empty_files()

    # The plan functions decide what a commit writes (drawing structure randomness) and queue jobs.
    def _plan_insert(self, commit: _Commit, partitions: Sequence[str]) -> None:
        for partition in partitions:
            if partition not in self.created and partition not in commit.new_partitions:
                commit.new_partitions.append(partition)
            for _ in range(self.files_per_partition):
                self._plan_insert_one(commit, partition)

    def _live_groups(self) -> list[_Group]:
        return [g for g in self.groups.values() if g.replaced_by is None]

    def _plan_updates(self, commit: _Commit, groups: Sequence[_Group]) -> None:
        by_partition: dict[str, list[_Group]] = {}
        for group in groups:
            by_partition.setdefault(group.partition, []).append(group)
        for partition in self.partitions:
            for group in by_partition.get(partition, []):
                count = self.rng.randint(1, group.num_records)
                commit.updates.setdefault(partition, {})[group.file_id] = (group.slice.base_instant, count)
                commit.jobs.append(lambda g=group, n=count: self._update(commit, g, n))

    def _plan_upsert(self, index: int, late_partition: str | None) -> Callable[[_Commit], None]:
        def plan(commit: _Commit) -> None:
            live = self._live_groups()
            count = max(1, round(self.update_fraction * len(live)))
            chosen = sorted(self.rng.sample(range(len(live)), min(count, len(live))))
            self._plan_updates(commit, [live[i] for i in chosen])
            if late_partition is not None:
                self._plan_insert(commit, [late_partition])
            if index % 3 == 0:
                self._plan_insert_one(commit, self.rng.choice(self.created))
        return plan

    def _plan_insert_one(self, commit: _Commit, partition: str) -> None:
        commit.inserts[partition] = commit.inserts.get(partition, 0) + self.records_per_file
        commit.jobs.append(lambda: self._create(commit, partition, self.records_per_file))

    def _plan_replace(self, partition: str) -> Callable[[_Commit], None]:
        def plan(commit: _Commit) -> None:
            old = [g for g in self._live_groups() if g.partition == partition]
            commit.replaced = {partition: [g.file_id for g in old]}
            self.replaced_ids[commit.ts] = commit.replaced
            self._plan_insert(commit, [partition])
            commit.removed_keys.extend(key for group in old for key in group.keys)

            def retire() -> None:
                for group in old:
                    group.replaced_by = commit.ts

            commit.on_complete.append(retire)
        return plan

    # --------------------------------------------------------------------- services
    def _write_savepoint(self, ts: str, moment: datetime) -> None:
        """`SavepointActionExecutor`: latest base and log files per partition, then inflight, completed."""
        files: dict[str, list[str]] = {p: [] for p in self.created}
        for group in self._live_groups():
            if group.slice.base_file:
                files[group.partition].append(group.slice.base_file)
            files[group.partition].extend(group.slice.logs_newest_first())
        record = {
            "savepointedBy": "hudi-assets-demo",
            "savepointedAt": int((moment + self.interval / 2).timestamp() * 1000),
            "comments": "demo savepoint",
            "partitionMetadata": {
                p: {"partitionPath": p, "savepointDataFile": files[p]} for p in java_hashmap_order(files)
            },
            "version": 1,
        }
        inflight = Instant(ts, SAVEPOINT, State.INFLIGHT)
        self._put_instant(inflight)
        completed = self.format.plan("HoodieSavepointMetadata", record)
        # Completes after the savepointed commit did (layout 2 names it by its completion time).
        self._put_instant(inflight.with_state(State.COMPLETED), completed, moment + self.interval / 4)
        self.instants.append(inflight.with_state(State.COMPLETED))
        self.savepoint = ts
        self.savepointed_files = files

    def _write_compaction_plan(self) -> None:
        """Schedule (not run) a compaction of every slice with log files, as `compaction.requested`."""
        candidates = [g for g in self._live_groups() if g.slice.logs]
        if not candidates:
            return
        ts, _ = self._next_instant()
        operations = []
        for group in candidates:
            current = group.slice
            log_size = sum(size for _, size in current.logs)
            read_mb = (current.base_size + log_size) // _MB
            write_mb = (current.base_size if current.base_file else _MAX_PARQUET_FILE_SIZE) // _MB
            metrics = {"TOTAL_IO_READ_MB": float(read_mb), "TOTAL_IO_WRITE_MB": float(write_mb),
                       "TOTAL_IO_MB": float(read_mb + write_mb), "TOTAL_LOG_FILES_SIZE": float(log_size),
                       "TOTAL_LOG_FILES": float(len(current.logs))}
            operations.append({
                "baseInstantTime": current.base_instant,
                "deltaFilePaths": [name for name, _ in current.logs],
                "dataFilePath": current.base_file,
                "fileId": group.file_id,
                "partitionPath": group.partition,
                "metrics": in_java_hashmap_order(metrics),
                "bootstrapFilePath": None,
            })
            group.pending_compaction = ts
        # LogFileSizeBasedCompactionStrategy: biggest log size first.
        operations.sort(key=lambda op: -op["metrics"]["TOTAL_LOG_FILES_SIZE"])
        plan = {"operations": operations, "extraMetadata": None, "version": 2, "strategy": None,
                "preserveHoodieMetadata": False}
        requested = Instant(ts, COMPACTION, State.REQUESTED)
        self._put_instant(requested, self.format.plan("HoodieCompactionPlan", plan))
        self.instants.append(requested)
        self.compaction = ts
        self.compaction_ids = [op["fileId"] for op in operations]

    def _plan_failed(self) -> Callable[[_Commit], None]:
        def plan(commit: _Commit) -> None:
            target = [g for g in self._live_groups() if g.pending_compaction is None]
            if target:
                self._plan_updates(commit, [self.rng.choice(target)])
            self._plan_insert_one(commit, self.rng.choice(self.created))
        return plan

    # -------------------------------------------------------------------------- run
    def run(self) -> DemoTable:
        self._init_table()
        action = DELTA_COMMIT if self.is_mor else COMMIT
        late = self.partitions[-1] if len(self.partitions) >= 3 and self.commits >= 2 else None
        first = [p for p in self.partitions if p != late]
        replace_at = self.commits // 2 if self.want_replace and self.commits >= 4 else None
        savepoint_at = None
        if self.want_savepoint and self.commits >= 3:
            savepoint_at = (2 * self.commits) // 3
            if savepoint_at == replace_at:
                savepoint_at += 1
            savepoint_at = min(savepoint_at, self.commits - 1)
        for index in range(self.commits):
            if index == 0:
                commit = self._begin(action, "INSERT")
                self._write_commit(commit, lambda c: self._plan_insert(c, first))
            elif index == replace_at:
                commit = self._begin(REPLACE_COMMIT, "INSERT_OVERWRITE")
                self._write_commit(commit, self._plan_replace(self.rng.choice(self.created)))
            else:
                commit = self._begin(action, "UPSERT")
                self._write_commit(commit, self._plan_upsert(index, late if index == 1 else None))
            if index == savepoint_at:
                self._write_savepoint(commit.ts, commit.moment)
        if self.want_compaction:
            self._write_compaction_plan()
        if self.want_failed:
            commit = self._begin(action, "UPSERT")
            self._write_commit(commit, self._plan_failed(), complete=False)
        return self._result()

    def _init_table(self) -> None:
        if self.storage.exists(".hoodie"):
            raise HudiInputError(f"{self.storage.base_uri}: already holds a .hoodie folder")
        if self.storage.is_local:  # object stores have no directories: nothing to create there
            for directory in (*HOODIE_DIRS, f"{self.format.timeline_folder}/history"):
                self.storage.mkdirs(directory)
        props = {
            "hoodie.table.type": self.table_type,
            "hoodie.table.precombine.field": PRECOMBINE_FIELD,
            "hoodie.table.partition.fields": self.partition_field,
            "hoodie.archivelog.folder": "archived",
            "hoodie.table.create.schema": self.schema.create_schema,
            "hoodie.timeline.layout.version": "1",
            "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.table.recordkey.fields": RECORD_KEY_FIELD,
            "hoodie.table.name": self.name,
            "hoodie.datasource.write.hive_style_partitioning": str(self.hive_style).lower(),
            "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
            "hoodie.database.name": "default",
            "hoodie.datasource.write.partitionpath.urlencode": "false",
            "hoodie.table.base.file.format": "PARQUET",
            "hoodie.table.version": "6",
        }
        if self.is_mor:
            payload = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
            props = {
                "hoodie.compaction.payload.class": payload,
                **props,
                "hoodie.compaction.record.merger.strategy": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
            }
        write_table_config(self.storage, self.format.properties(props))

    def _result(self) -> DemoTable:
        slices = [
            DemoFileSlice(g.partition, g.file_id, g.slice.base_instant, g.slice.base_file,
                          tuple(g.slice.logs_newest_first()))
            for g in self._live_groups()
        ]
        return DemoTable(
            storage=self.storage, name=self.name, table_type=self.table_type,
            partition_field=self.partition_field, hive_style=self.hive_style, partitions=list(self.created),
            instants=sorted(self.instants, key=lambda i: i.sort_key), operations=self.operations,
            snapshots=self.snapshots, latest_file_slices=slices, replaced_file_ids=self.replaced_ids,
            savepoint=self.savepoint, savepointed_files=self.savepointed_files,
            pending_compaction=self.compaction, compaction_file_ids=self.compaction_ids,
            failed_instant=self.failed, failed_files=self.failed_files, data_files_written=self.data_files,
            fast=self.fast, seed=self.seed,
        )


def default_partition_values(count: int, start: datetime, hive_style: bool) -> list[str]:
    """`count` days from `start`: `2024/01/01`-style values, or `2024-01-01` for hive-style paths."""
    days = [start.date() + timedelta(days=n) for n in range(count)]
    return [f"{d:%Y-%m-%d}" if hive_style else f"{d:%Y/%m/%d}" for d in days]


def generate_table(
    storage: Storage,
    table_type: str = COPY_ON_WRITE,
    *,
    name: str = "demo",
    partitions: int | Sequence[str] = 3,
    partition_field: str = "dt",
    hive_style: bool = False,
    commits: int = 12,
    files_per_partition: int = 2,
    records_per_file: int = 4,
    update_fraction: float = 0.3,
    start_time: datetime = datetime(2024, 1, 1, tzinfo=UTC),
    interval: timedelta = timedelta(minutes=1),
    seed: int = 0,
    fast: bool = False,
    savepoint: bool = True,
    insert_overwrite: bool = True,
    pending_compaction: bool = True,
    failed_write: bool = True,
    bloom_entries: int = bloom.DEFAULT_NUM_ENTRIES,
    metadata_table: bool = False,
    table_version: int = 6,
) -> DemoTable:
    """Write a new Hudi table (table version 6 or 9) with a realistic history into `storage` (see module doc).

    `partitions` is a count of daily partitions from `start_time` or the partition values themselves;
    the partition path of a value is `<partition_field>=<value>` with `hive_style`, else the value.
    `commits` counts completed data commits (commit/deltacommit/replacecommit); the savepoint, the
    pending compaction (MOR) and the failed write come on top. `update_fraction` of the live file
    groups is rewritten by each upsert. `bloom_entries` sizes the bloom filter in each base file
    footer (Hudi's `hoodie.index.bloom.num_entries`; the default 60000 makes ~430 KB footers).
    `metadata_table` keeps a metadata table with `files`, `column_stats` and `bloom_filters` as the
    writer would (see `hudi_assets.demo.metadata`); not with `fast`.
    Same arguments and seed give the same data table, whatever `fast` and `metadata_table` are.
    `table_version` 9 writes the table as Hudi 1.1 would (`demo.versions`), its metadata table too
    (then with at most `demo.metadata.max_commits_without_compaction()` commits).
    """
    values = (default_partition_values(partitions, start_time, hive_style) if isinstance(partitions, int)
              else list(partitions))
    return _Generator(
        storage, table_type, name=name, partition_values=values, partition_field=partition_field,
        hive_style=hive_style, commits=commits, start_time=start_time, interval=interval, seed=seed,
        fast=fast, files_per_partition=files_per_partition, records_per_file=records_per_file,
        update_fraction=update_fraction, bloom_entries=bloom_entries, savepoint=savepoint,
        insert_overwrite=insert_overwrite, pending_compaction=pending_compaction, failed_write=failed_write,
        metadata_table=metadata_table, table_version=table_version,
    ).run()
