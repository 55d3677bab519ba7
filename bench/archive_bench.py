"""Archive benchmark: archiving 10,000 commits (30,000 state files) vs a plain script that reads those
files, writes their bytes into one file and deletes them; reading 100,000 archived entries vs bare
fastavro. Medians of interleaved runs, wall and CPU time, with the machine's load; then one archive
run's CPU time per phase.

Each commit lists `--write-stats` files (default 4; real commits list every file they wrote), each
stat with its own file id and path, in Hudi's Jackson layout, as a writer leaves them.

Run: .venv/bin/python bench/archive_bench.py [--write-stats N] [--commits N] [--skip-read]
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import fastavro
from benchlib import cpu_timed, load, report

from hudi_assets.archive import HoodieTimelineArchiver
from hudi_assets.avro import java_schema_json
from hudi_assets.listener import Listener, Step
from hudi_assets.logformat.archived import archive_file_name, encode_archive_file
from hudi_assets.logformat.reader import read_blocks
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline import jackson
from hudi_assets.timeline.archived import ArchivedTimeline
from hudi_assets.timeline.commit_metadata import WriteStat

SCHEMA = java_schema_json("HoodieArchivedMetaEntry")
STAT = {"fileId": "f", "path": "p/f.parquet", "prevCommit": "null", "numWrites": 10, "numDeletes": 0,
        "numUpdateWrites": 1, "numInserts": 9, "totalWriteBytes": 100, "totalWriteErrors": 0,
        "partitionPath": "p", "totalLogRecords": 0, "fileSizeInBytes": 100}


def _commit_body(write_stats: int) -> str:
    """A commit's JSON in Hudi's layout with `write_stats` files in two partitions; `@T@` stands for
    the commit time, so that each commit names its own files."""
    stats = {}
    for n in range(write_stats):
        partition = f"2024/01/0{1 + n % 2}"
        file_id = f"{n:08d}-6b1e-4c2a-9f0d-@T@-0"
        stats.setdefault(partition, []).append(WriteStat.new(
            fileId=file_id, path=f"{partition}/{file_id}_0-7-{n}_@T@.parquet", prevCommit="null",
            numWrites=1000 + n, numUpdateWrites=n, numInserts=1000, totalWriteBytes=435_000 + n,
            partitionPath=partition, fileSizeInBytes=435_000 + n,
            runtimeStats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 1200 + n}).fields)
    return jackson.dumps({"partitionToWriteStats": stats, "compacted": False,
                          "extraMetadata": {"schema": '{"type":"record","name":"b","fields":[]}'},
                          "operationType": "UPSERT"})


def _table(root: Path, commits: int, write_stats: int = 4) -> HoodieTable:
    storage = Storage(str(root))
    write_table_config(storage, {"hoodie.table.name": "b", "hoodie.table.type": "COPY_ON_WRITE",
                                 "hoodie.table.version": "6"})
    body = _commit_body(write_stats)
    hoodie = root / ".hoodie"
    for i in range(commits):
        t = f"2024010{1 + i // 86_400_000}{i % 86_400_000:09d}"
        data = body.replace("@T@", t).encode()
        (hoodie / f"{t}.commit.requested").write_bytes(b"")
        (hoodie / f"{t}.inflight").write_bytes(data)
        (hoodie / f"{t}.commit").write_bytes(data)
    return HoodieTable(storage)


def plain_archive(root: Path, names: list[str], parse: bool = False) -> int:
    """The floor: read the state files, write their bytes into one file, delete them; with `parse`,
    each non-empty file is parsed by `json.loads` too (nothing built from it), for information."""
    hoodie = root / ".hoodie"
    with open(hoodie / "archived" / "plain", "wb") as out:
        for name in names:
            data = (hoodie / name).read_bytes()
            if parse and data:
                json.loads(data)
            out.write(data)
    for name in names:
        (hoodie / name).unlink()
    return len(names)


def bench_archive(root: Path, n: int = 10_000, write_stats: int = 4, runs: int = 3) -> None:
    """Archiving n commits (3n state files) vs the plain script over the same files, interleaved; and,
    for information, vs the plain script that also parses each file with `json.loads`."""
    ours_wall, ours_cpu, floor_wall, floor_cpu, parsing_wall, parsing_cpu = [], [], [], [], [], []
    for run in range(runs):
        for kind in ("ours", "floor", "parsing floor"):
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            table = _table(root, n + 20, write_stats)
            selection = HoodieTimelineArchiver.for_table(table).plan()
            names = [i.file_name for i in selection.state_files]
            if kind == "ours":
                wall, cpu, result = cpu_timed(
                    lambda: HoodieTimelineArchiver.for_table(table).archive())  # noqa: B023
                assert result.records_written == len(names), result
                ours_wall.append(wall)
                ours_cpu.append(cpu)
            else:
                (root / ".hoodie" / "archived").mkdir(exist_ok=True)
                parse = kind == "parsing floor"
                wall, cpu, _ = cpu_timed(lambda: plain_archive(root, names, parse))  # noqa: B023
                (parsing_wall if parse else floor_wall).append(wall)
                (parsing_cpu if parse else floor_cpu).append(cpu)
            print(f"run {run + 1} {kind}: {len(names)} state files, {wall:.2f} s ({cpu:.2f} s CPU), "
                  f"{load()}", flush=True)
    name = f"archive {n} commits of {write_stats} write stats"
    report(name, ours_wall, floor_wall, 2.0)
    report(name, ours_cpu, floor_cpu, 2.0, "CPU")
    print("for information, against a floor that parses each file with json.loads:")
    report(name, ours_wall, parsing_wall, 2.0)
    report(name, ours_cpu, parsing_cpu, 2.0, "CPU")


class PhaseClock(Listener):
    """CPU seconds between the archiver's steps: where a run's time goes, without a profiler's
    overhead distorting the many small calls."""

    def __init__(self) -> None:
        self.marks = [("start", time.process_time())]

    def reached(self, step: Step | str, count: int = 0) -> None:
        self.marks.append((step, time.process_time()))

    def report(self) -> str:
        names = {Step.ARCHIVE_BEFORE_WRITE: "select, convert, encode, frame",
                 Step.ARCHIVE_AFTER_WRITE: "write, read back, verify, markers",
                 Step.ARCHIVE_BEFORE_DELETE: "lock check",
                 Step.ARCHIVE_DELETING_COMPLETED: "delete pending (+1 completed)", "end": "delete completed"}
        return ", ".join(f"{names.get(step, step)} {b - a:.2f} s"
                         for (_, a), (step, b) in zip(self.marks, self.marks[1:], strict=False))


def bench_phases(root: Path, n: int = 10_000, write_stats: int = 4) -> None:
    """One archive run of n commits with CPU time per phase."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    table = _table(root, n + 20, write_stats)
    clock = PhaseClock()
    HoodieTimelineArchiver.for_table(table, clock).archive()
    clock.reached("end")
    print(f"phases (CPU): {clock.report()}", flush=True)


def bench_read(root: Path, n: int = 100_000, runs: int = 3) -> None:
    storage = Storage(str(root))
    write_table_config(storage, {"hoodie.table.name": "r", "hoodie.table.type": "COPY_ON_WRITE",
                                 "hoodie.table.version": "6"})
    payload = {"partitionToWriteStats": {"p": [{**STAT, "totalLogFiles": None}]},
               "extraMetadata": {"ROLLING_STAT": ""}, "version": None, "operationType": "UPSERT"}
    records = [{"commitTime": f"{i:017d}", "actionType": "commit", "actionState": "COMPLETED",
                "version": None,
                "stateTransitionTime": f"{i:017d}", "hoodieCommitMetadata": payload} for i in range(n)]
    for k in range(10):
        part = records[k * n // 10:(k + 1) * n // 10]
        storage.write(f".hoodie/archived/{archive_file_name(k + 1)}", encode_archive_file(part, SCHEMA, 10))
    table = HoodieTable(storage)
    writer = fastavro.parse_schema(json.loads(SCHEMA))

    def ours() -> int:
        return sum(1 for _ in ArchivedTimeline.load(table).entries())

    def bare() -> int:  # the floor: the same blocks, one schemaless_reader call per record
        count = 0
        for f in sorted((root / ".hoodie/archived").iterdir()):
            for block in read_blocks(f.read_bytes()):
                content = io.BytesIO(block.content)
                content.read(4)
                for _ in range(int.from_bytes(content.read(4), "big")):
                    size = int.from_bytes(content.read(4), "big")
                    fastavro.schemaless_reader(io.BytesIO(content.read(size)), writer)
                    count += 1
        return count

    ours_times, bare_times = [], []
    for _ in range(runs):  # interleaved, so that load on a shared machine hits both alike
        ours_times.append(_timed(ours, n))
        bare_times.append(_timed(bare, n))
    mine, floor = statistics.median(ours_times), statistics.median(bare_times)
    print(f"read {n} archived entries (median of {runs}): {n / mine:,.0f} entries/s ({mine:.2f}s); "
          f"bare fastavro {n / floor:,.0f} entries/s ({floor:.2f}s); ratio {mine / floor:.2f}x")


def _timed(fn, expected: int) -> float:
    start = time.perf_counter()
    count = fn()
    took = time.perf_counter() - start
    assert count == expected, f"read {count} entries, expected {expected}"
    return took

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-stats", type=int, default=4, help="files each commit lists (default 4)")
    parser.add_argument("--commits", type=int, default=10_000, help="commits to archive (default 10,000)")
    parser.add_argument("--skip-read", action="store_true", help="skip the archived-timeline read bench")
    args = parser.parse_args()
    print(load(), flush=True)
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        bench_archive(Path(a) / "t", args.commits, args.write_stats)
        bench_phases(Path(a) / "t", args.commits, args.write_stats)
        if not args.skip_read:
            bench_read(Path(b))
    print(load())
