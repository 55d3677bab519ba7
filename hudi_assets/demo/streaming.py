"""A live writer: the demo generator committing every few hundred milliseconds, as a multi-writer Hudi
writer does under `hoodie.write.concurrency.mode=OPTIMISTIC_CONCURRENCY_CONTROL` with the LAZY
failed-writes policy, beside which hudi-assets' clean and archive must run safely.

Each commit follows BaseHoodieWriteClient's order (Hudi 0.15):

1. under the table's lock (`hudi_assets.transaction.table_lock`, so the provider and settings of the
   maintenance runs): a new instant time, the heartbeat file `.hoodie/.heartbeat/<instant>` (started
   before the requested file, so no other client ever sees the write without one), `requested`;
2. without the lock: `inflight` (workload profile), data files (COW: new base file versions, MOR: new
   log files), each with its DIRECT write marker, while a thread renews the heartbeat every
   `hoodie.client.heartbeat.interval_in_ms`; a renewal that comes later than the tolerated misses
   stops renewing, so the write stays expired (Hudi's HoodieHeartbeatClient);
3. under the lock: abort if the heartbeat expired or the write was rolled back meanwhile
   (`HeartbeatUtils.abortIfHeartbeatExpired`), else write `completed`;
4. without the lock (postCommit): delete the marker directory and the heartbeat file.

With `metadata_table`, the writer keeps a metadata table as Hudi's does: right after `requested`,
under the lock (`initTable`), it creates the metadata table on the first write and otherwise runs its
compaction when `hoodie.metadata.compact.max.delta.commits` deltacommits wait and no earlier data
instant is pending; each commit (and inline compaction) writes its metadata deltacommit under the
lock right before `completed`. It never cleans or archives the metadata table (hudi-assets does).

On MOR every few commits are followed by an inline compaction, as Hudi's writer runs it: the plan
(`compaction.requested`) scheduled under the lock, new base files of the merged slices written, the
`commit` completed under the lock. Compactions never crash (a pending one is resumed, not rolled back).

A commit chosen to crash stops after its requested file, its inflight file or some of its data files,
leaving them (and markers) in place and letting its heartbeat go stale, as a killed writer does; the
next cleaner rolls it back. Every outcome is appended to a JSON-lines commit log: completed commits
with the rows a snapshot read as of them returns (record key -> [commit time, fare]).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hudi_assets import config_options as opt
from hudi_assets.config import parse_overrides
from hudi_assets.demo.formats import marker_name, parquet_base_file, partition_metadata
from hudi_assets.demo.generator import (
    BASE_FILE_EXTENSION,
    PARTITION_METAFILE,
    _Commit,
    _Generator,
    _Group,
    _Slice,
    _stat,
    _Write,
    default_partition_values,
)
from hudi_assets.heartbeat import HeartbeatConfig, delete_heartbeat, heartbeat_path
from hudi_assets.rollback.markers import delete_marker_dir, marker_dir
from hudi_assets.rollback.planner import latest_log_file, pending_writes
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import COPY_ON_WRITE, MERGE_ON_READ
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, Instant, State
from hudi_assets.timeline.instant_time import new_instant_time, parse_instant_time
from hudi_assets.transaction import table_lock
from hudi_assets.transaction.renewal import Renewal

log = logging.getLogger(__name__)

CRASH_STAGES = ("requested", "inflight", "data")
COMPLETED, KILLED, ABORTED = "completed", "killed", "aborted"
EXPIRED = "its heartbeat expired"
ROLLED_BACK_LIVE = "it was rolled back while its heartbeat was live"


@dataclass(frozen=True)
class StreamingSettings:
    """How the live writer behaves. `crash_rate`: the share of commits that crash half-way;
    `insert_every`: every n-th commit also creates a file group; `updates`: file groups each commit
    rewrites (COW) or appends to (MOR); `compact_every`: MOR, every n-th commit is followed by an
    inline compaction of every slice with log files."""

    interval_seconds: float = 0.2
    crash_rate: float = 0.1
    insert_every: int = 10
    updates: int = 2
    compact_every: int = 8
    seed: int = 0


class WriterHeartbeat:
    """HoodieHeartbeatClient for one instant: the file is written at start and on every beat; a beat
    later than the tolerated misses ends the renewals, so the write stays expired and aborts."""

    def __init__(self, storage: Storage, instant_time: str, config: HeartbeatConfig):
        self.storage = storage
        self.instant_time = instant_time
        self.config = config
        self._last = time.monotonic()
        self.storage.write(heartbeat_path(instant_time), b"")
        self._thread = Renewal(f"heartbeat {instant_time}", config.interval_ms / 1000, self._beat)

    def _beat(self) -> bool:
        now = time.monotonic()
        if (now - self._last) * 1000 > self.config.max_allowed_ms:
            log.error("heartbeat of %s was late by %.0f ms: no longer renewed", self.instant_time,
                      (now - self._last) * 1000)
            return False
        self.storage.write(heartbeat_path(self.instant_time), b"")
        self._last = now
        return True

    def expired(self) -> bool:
        """Whether the file went unrenewed longer than tolerated at some point, so that another
        client may rightly have rolled the write back."""
        late = (time.monotonic() - self._last) * 1000 > self.config.max_allowed_ms
        return late or self._thread.lost.is_set()

    def stop(self) -> None:
        """Stop renewing (a crashed writer's heartbeat just goes stale)."""
        self._thread.stop()


class StreamingWriter(_Generator):
    """The demo generator, committing live into a new table (see the module doc)."""

    def __init__(self, storage: Storage, table_type: str, settings: StreamingSettings, *,
                 commit_log: str, props_file: str | None = None,
                 hoodie_conf: dict[str, str] | None = None, partitions: Sequence[str] | None = None,
                 metadata_table: bool = False):
        values = list(partitions or default_partition_values(2, datetime.now(), hive_style=False))
        # start_time and interval only space the generator's synthetic instants; these take the clock
        super().__init__(storage, table_type, name="live", partition_values=values, partition_field="dt",
                         hive_style=False, commits=1, start_time=datetime.now(),
                         interval=timedelta(seconds=1),
                         seed=settings.seed, fast=False, files_per_partition=2, records_per_file=4,
                         update_fraction=0.0, bloom_entries=100, savepoint=False, insert_overwrite=False,
                         pending_compaction=False, failed_write=False, metadata_table=metadata_table)
        self.settings = settings
        self.crash_rng = random.Random(f"{settings.seed}/crash")
        self.commit_log = commit_log
        self.props_file = props_file
        self.hoodie_conf = dict(hoodie_conf or {})
        self.table: HoodieTable | None = None
        self.heartbeat_config = HeartbeatConfig()
        self.index = 0

    # ----------------------------------------------------------------------- instants
    def _next_instant(self) -> tuple[str, datetime]:
        """A wall-clock instant time past every instant on the timeline (called under the lock)."""
        assert self.table is not None
        existing = [i.timestamp for i in self.table.reload_timeline().raw_instants]
        ts = new_instant_time(existing, self.table.config.timeline_timezone)
        moment = parse_instant_time(ts)
        assert moment is not None
        return ts, moment.astimezone()

    def _next_log_version(self, group: _Group) -> int:
        """HoodieLogFormat's writer: one past the slice's latest log file on storage, which a
        rollback block of another client may have advanced."""
        latest = latest_log_file(self.table, group.partition, group.file_id, group.slice.base_instant)
        return 1 if latest is None else latest.version + 1

    @contextmanager
    def _locked(self, operation: str) -> Iterator[None]:
        assert self.table is not None
        with table_lock(self.table, operation):
            yield

    # ------------------------------------------------------------------------- commits
    def _plan(self, commit: _Commit) -> None:
        if not self.created:
            self._plan_insert(commit, self.partitions)
            return
        live = self._live_groups()
        chosen = self.rng.sample(live, min(self.settings.updates, len(live)))
        self._plan_updates(commit, sorted(chosen, key=lambda g: (g.partition, g.file_id)))
        if self.index % self.settings.insert_every == 0:
            self._plan_insert_one(commit, self.rng.choice(self.created))

    def commit_once(self) -> str:
        """One commit, completed, crashed or aborted; returns its outcome."""
        assert self.table is not None
        action = DELTA_COMMIT if self.is_mor else COMMIT
        crash = None
        if self.index and self.crash_rng.random() < self.settings.crash_rate:
            crash = self.crash_rng.choice(CRASH_STAGES)
        with self._locked("write"):
            commit = self._begin(action, "INSERT" if self.index == 0 else "UPSERT")
            heartbeat = WriterHeartbeat(self.storage, commit.ts, self.heartbeat_config)
            requested = Instant(commit.ts, action, State.REQUESTED)
            self._put_instant(requested)
        if self.metadata is not None:
            with self._locked("metadata table services"):
                self._metadata_table_services()
        try:
            outcome = self._write(commit, requested, crash, heartbeat)
        finally:
            heartbeat.stop()
            self.index += 1
        if outcome == COMPLETED:  # postCommit
            delete_marker_dir(self.storage, commit.ts)
            delete_heartbeat(self.storage, commit.ts)
            if self.is_mor and self.index % self.settings.compact_every == 0:
                self.compact()
        return outcome

    # ---------------------------------------------------------------------- compaction
    def compact(self) -> None:
        """Schedule, execute and complete a compaction of every slice with log files."""
        with self._locked("compaction"):
            self._write_compaction_plan()
        if self.compaction is None:
            return
        ts, self.compaction = self.compaction, None
        requested = Instant(ts, COMPACTION, State.REQUESTED)
        moment = parse_instant_time(ts)
        assert moment is not None
        commit = _Commit(ts, moment.astimezone(), COMMIT, "COMPACT", self.stage)
        self._put_instant(requested.with_state(State.INFLIGHT))
        for group in [g for g in self._live_groups() if g.pending_compaction == ts]:
            write = self._compact_slice(commit, group)
            commit.writes.append(write)
            self._put(f"{marker_dir(ts)}/{write.marker}", b"")
        completed = requested.with_state(State.COMPLETED)
        metadata = self._completed_metadata(commit)
        metadata.compacted = True
        with self._locked("commit"):
            self._complete(commit, completed, metadata)
        self._record_completed(commit, completed)
        self.snapshots.pop(ts, None)
        delete_marker_dir(self.storage, ts)
        self._log_completed(commit)

    def _compact_slice(self, commit: _Commit, group: _Group) -> _Write:
        """A new base file holding the slice's merged records (Hudi's compactor, a create handle)."""
        _, token = self._token(commit)
        name = f"{group.file_id}_{token}_{commit.ts}{BASE_FILE_EXTENSION}"
        rows = {key: {**self.rows[key], "_hoodie_file_name": name} for key in group.keys}
        data = parquet_base_file(self.schema, list(rows.values()), bloom_entries=self.bloom_entries)
        self._put_data(f"{group.partition}/{name}", data)
        current = group.slice
        stat = _stat(fileId=group.file_id, path=f"{group.partition}/{name}", prevCommit=current.base_instant,
                     numWrites=len(rows), numUpdateWrites=len(rows), totalWriteBytes=len(data),
                     partitionPath=group.partition, fileSizeInBytes=len(data),
                     totalLogFilesCompacted=len(current.logs), runtimeStats=self._runtime(create=False))

        def apply() -> None:
            group.slice = _Slice(commit.ts, name, len(data))
            group.pending_compaction = None

        return _Write(group.partition, stat, marker_name(group.partition, name, "CREATE"), apply, rows)

    def _write(self, commit: _Commit, requested: Instant, crash: str | None,
               heartbeat: WriterHeartbeat) -> str:
        if crash == "requested":
            return self._crashed(commit, requested, crash)
        self._plan(commit)
        inflight = requested.with_state(State.INFLIGHT)
        self._put_instant(inflight, self._workload(commit).to_json())
        if crash == "inflight":
            return self._crashed(commit, inflight, crash)
        for partition in commit.new_partitions:
            self._put(f"{partition}/{PARTITION_METAFILE}",
                      partition_metadata(commit.ts, partition.count("/") + 1, commit.moment))
        stop_after = self.crash_rng.randint(1, len(commit.jobs)) if crash == "data" else None
        for job in commit.jobs:
            write = job()
            commit.writes.append(write)
            self._put(f"{marker_dir(commit.ts)}/{write.marker}", b"")
            if len(commit.writes) == stop_after:
                return self._crashed(commit, inflight, crash)
        with self._locked("commit"):
            problem = self._abort_reason(commit.ts, heartbeat)
            if problem is None:
                completed = requested.with_state(State.COMPLETED)
                self._complete(commit, completed, self._completed_metadata(commit))
        if problem is not None:
            log.error("commit %s aborted: %s", commit.ts, problem)
            self._record_failed(commit, inflight)
            self._log(commit.ts, ABORTED, reason=problem, files=[w.stat.path for w in commit.writes])
            return ABORTED
        self._record_completed(commit, completed)
        self.snapshots.pop(commit.ts, None)  # the commit log keeps them
        self._log_completed(commit)
        return COMPLETED

    def _complete(self, commit: _Commit, completed: Instant, metadata: CommitMetadata) -> None:
        """Under the lock: the commit's metadata deltacommit (with a metadata table), then `completed`."""
        if self.metadata is not None:
            self.metadata.commit(commit.ts, metadata.partition_to_write_stats, commit.log_ranges)
        self._put_instant(completed, metadata.to_json())

    def _abort_reason(self, instant_time: str, heartbeat: WriterHeartbeat) -> str | None:
        """Why the write must not complete: its heartbeat expired (another client may have rolled it
        back), or, which no client may do, it was rolled back although its heartbeat was live."""
        assert self.table is not None
        if heartbeat.expired():
            return EXPIRED
        if pending_writes(self.table.reload_timeline()).get(instant_time) is None:
            return ROLLED_BACK_LIVE
        return None

    def _crashed(self, commit: _Commit, last: Instant, stage: str) -> str:
        self._record_failed(commit, last)
        self._log(commit.ts, KILLED, stage=stage, files=[w.stat.path for w in commit.writes])
        return KILLED

    def _log_completed(self, commit: _Commit) -> None:
        rows = {key: [row["_hoodie_commit_time"], row["fare"]] for key, row in self.rows.items()}
        self._log(commit.ts, COMPLETED, files=[w.stat.path for w in commit.writes], rows=rows)

    def _log(self, instant_time: str, outcome: str, **details: Any) -> None:
        line = json.dumps({"instant": instant_time, "outcome": outcome, **details}) + "\n"
        with open(self.commit_log, "a", encoding="utf-8") as out:
            out.write(line)

    # ----------------------------------------------------------------------------- run
    def open(self) -> HoodieTable:
        """Create the table (refused where one exists: the writer knows only what it wrote), then
        open it with the writer's settings."""
        self._init_table()
        self.table = HoodieTable(self.storage, hoodie_conf=self.hoodie_conf, props_file=self.props_file)
        self.heartbeat_config = HeartbeatConfig.from_write_config(self.table.write_config)
        if self.metadata is not None:
            max_delta_commits = self.table.write_config.get(opt.METADATA_COMPACT_MAX_DELTA_COMMITS)
            self.metadata.max_delta_commits = max_delta_commits
        return self.table

    def run(self, seconds: float, stop: Callable[[], bool] = lambda: False) -> dict[str, int]:
        """Commit every `interval_seconds` for `seconds`; returns the count of each outcome."""
        self.open()
        counts = {COMPLETED: 0, KILLED: 0, ABORTED: 0}
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not stop():
            started = time.monotonic()
            counts[self.commit_once()] += 1
            time.sleep(max(0.0, self.settings.interval_seconds - (time.monotonic() - started)))
        return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hudi_assets.demo.streaming",
                                     description="Commit live into a demo table for a while.")
    parser.add_argument("path", help="base path of the new table")
    parser.add_argument("--table-type", choices=(COPY_ON_WRITE, MERGE_ON_READ), default=COPY_ON_WRITE)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between commits")
    parser.add_argument("--crash-rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--commit-log", required=True, help="JSON-lines file of every commit's outcome")
    parser.add_argument("--props", help="properties file of hoodie.* settings (lock, heartbeat)")
    parser.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--metadata-table", action="store_true",
                        help="keep a metadata table (files, column_stats, bloom_filters) as the writer would")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = StreamingSettings(interval_seconds=args.interval, crash_rate=args.crash_rate, seed=args.seed)
    writer = StreamingWriter(Storage(args.path), args.table_type, settings, commit_log=args.commit_log,
                             props_file=args.props, hoodie_conf=parse_overrides(args.hoodie_conf),
                             metadata_table=args.metadata_table)
    counts = writer.run(args.seconds)
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
