"""Archive benchmark: archiving 10,000 commits (30,000 state files) vs a plain script that reads those
files, writes their bytes into one file and deletes them; reading 100,000 archived entries vs bare
fastavro. Medians of interleaved runs, wall and CPU time, with the machine's load; then one archive
run's CPU time per phase.

Run: .venv/bin/python bench/archive_bench.py
"""

from __future__ import annotations

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
from hudi_assets.timeline.archived import ArchivedTimeline

SCHEMA = java_schema_json("HoodieArchivedMetaEntry")
STAT = {"fileId": "f", "path": "p/f.parquet", "prevCommit": "null", "numWrites": 10, "numDeletes": 0,
        "numUpdateWrites": 1, "numInserts": 9, "totalWriteBytes": 100, "totalWriteErrors": 0,
        "partitionPath": "p", "totalLogRecords": 0, "fileSizeInBytes": 100}


def _table(root: Path, commits: int) -> HoodieTable:
    storage = Storage(str(root))
    write_table_config(storage, {"hoodie.table.name": "b", "hoodie.table.type": "COPY_ON_WRITE",
                                 "hoodie.table.version": "6"})
    body = json.dumps({"partitionToWriteStats": {"p": [STAT] * 4}, "compacted": False,
                       "extraMetadata": {}, "operationType": "UPSERT"}).encode()
    hoodie = root / ".hoodie"
    for i in range(commits):
        t = f"2024010{1 + i // 86_400_000}{i % 86_400_000:09d}"
        (hoodie / f"{t}.commit.requested").write_bytes(b"")
        (hoodie / f"{t}.inflight").write_bytes(body)
        (hoodie / f"{t}.commit").write_bytes(body)
    return HoodieTable(storage)


def plain_archive(root: Path, names: list[str]) -> int:
    """The floor: read the state files, write their bytes into one file, delete them."""
    hoodie = root / ".hoodie"
    with open(hoodie / "archived" / "plain", "wb") as out:
        for name in names:
            out.write((hoodie / name).read_bytes())
    for name in names:
        (hoodie / name).unlink()
    return len(names)


def bench_archive(root: Path, n: int = 10_000, runs: int = 3) -> None:
    """Archiving n commits (3n state files) vs the plain script over the same files, interleaved."""
    ours_wall, ours_cpu, floor_wall, floor_cpu = [], [], [], []
    for run in range(runs):
        for kind in ("ours", "floor"):
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            table = _table(root, n + 20)
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
                wall, cpu, _ = cpu_timed(lambda: plain_archive(root, names))  # noqa: B023
                floor_wall.append(wall)
                floor_cpu.append(cpu)
            print(f"run {run + 1} {kind}: {len(names)} state files, {wall:.2f} s ({cpu:.2f} s CPU)",
                  flush=True)
    report(f"archive {n} commits", ours_wall, floor_wall, 3.0)
    report(f"archive {n} commits", ours_cpu, floor_cpu, 3.0, "CPU")


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


def bench_phases(root: Path, n: int = 10_000) -> None:
    """One archive run of n commits with CPU time per phase."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    table = _table(root, n + 20)
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
    print(load(), flush=True)
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        bench_archive(Path(a) / "t")
        bench_phases(Path(a) / "t")
        bench_read(Path(b))
    print(load())
