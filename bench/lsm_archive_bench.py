"""LSM archive benchmark (Hudi 1.x tables): archiving 10,000 commits of a v9 table (30,000 state
files) into the LSM history vs a plain script that reads those files, writes one parquet file of
their bytes with pyarrow and deletes them; reading 100,000 archived instants (the archived timeline
our readers load; and, for information, every `Instant` of it made) vs `pyarrow.parquet.read_table`
of the same files. Medians of interleaved runs.

Run: .venv/bin/python bench/lsm_archive_bench.py [--read]   (--read: the reading part only)
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from benchlib import cpu_timed, load, report

from hudi_assets.archive import ArchiveConfig
from hudi_assets.archive.archiver_v2 import TimelineArchiverV2
from hudi_assets.archive.lsm_writer import LSMTimelineWriter
from hudi_assets.clean.config import CleanConfig
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_assets.timeline.history import LSMHistory
from hudi_assets.timeline.layout2 import CommitMetadataSerDeV2

HISTORY = ".hoodie/timeline/history"
CONFIG = ArchiveConfig(cleaner=CleanConfig())  # keep.min/max 20/30: 9,980 commits archived


def _table(root: Path, commits: int) -> None:
    storage = Storage(str(root))
    write_table_config(storage, {"hoodie.table.name": "b", "hoodie.table.type": "COPY_ON_WRITE",
                                 "hoodie.table.version": "9", "hoodie.timeline.layout.version": "2",
                                 "hoodie.timeline.path": "timeline",
                                 "hoodie.timeline.history.path": "history"})
    stats = {"p": [WriteStat.new(fileId=f"f{n}", path=f"p/f{n}.parquet", partitionPath="p",
                                 numWrites=10, totalWriteBytes=100, fileSizeInBytes=100) for n in range(4)]}
    body = CommitMetadataSerDeV2().serialize(CommitMetadata(stats, operation_type="UPSERT"))
    timeline = root / ".hoodie/timeline"
    timeline.mkdir(parents=True, exist_ok=True)
    storage.mkdirs(".hoodie/.aux")
    for i in range(commits):
        t = f"2024{i:013d}"
        (timeline / f"{t}.commit.requested").write_bytes(b"")
        (timeline / f"{t}.inflight").write_bytes(body)
        (timeline / f"{t}_{t[:-1]}5.commit").write_bytes(body)


def plain_archive(root: Path, archived: int) -> int:
    """The floor: read the state files of the first `archived` instants, write one parquet file of
    their bytes with pyarrow, delete them."""
    timeline = root / ".hoodie/timeline"
    names = sorted(p.name for p in timeline.iterdir() if p.is_file())
    completed = [n for n in names if "_" in n][:archived]
    times = [n.partition("_")[0] for n in completed]
    chosen = set(times)
    rows = {"instantTime": times, "completionTime": [n.partition("_")[2][:17] for n in completed],
            "action": ["commit"] * len(times), "metadata": [(timeline / n).read_bytes() for n in completed]}
    pending = [n for n in names if "_" not in n and n.partition(".")[0] in chosen]
    for name in pending:
        (timeline / name).read_bytes()
    (root / HISTORY).mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(rows), root / HISTORY / "plain.parquet")
    for name in pending + completed:
        (timeline / name).unlink()
    return len(times)


def ours(root: Path) -> int:
    return TimelineArchiverV2(HoodieTable(str(root)), CONFIG).archive().records_written


def bench_archive(work: Path, runs: int) -> None:
    template = work / "template"
    _table(template, 10_000)
    times: dict[str, tuple[list[float], list[float]]] = {"ours": ([], []), "floor": ([], [])}
    for _ in range(runs):
        for key, fn in (("ours", ours), ("floor", lambda r: plain_archive(r, 9_980))):
            copy = work / "copy"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(template, copy)
            wall, cpu, written = cpu_timed(lambda fn=fn, copy=copy: fn(copy))
            assert written == 9_980, written
            times[key][0].append(wall)
            times[key][1].append(cpu)
    for n, what in enumerate(("wall", "CPU")):
        report("archive 10,000 commits into the LSM history", times["ours"][n], times["floor"][n], 3.0, what)


def bench_read(work: Path, runs: int) -> None:
    root = work / "history"
    storage = Storage(str(root))
    writer = LSMTimelineWriter(storage, HISTORY, batch_size=100)
    body = b"x" * 600
    for f in range(10):
        times = [f"2024{f * 10_000 + i:013d}" for i in range(10_000)]
        writer.write([{"instantTime": t, "completionTime": t, "action": "commit", "metadata": body,
                       "plan": None, "version": 1} for t in times])
    files = [str(root / HISTORY / f.name) for f in LSMHistory(storage, HISTORY).files()]
    columns = ["instantTime", "completionTime", "action"]
    rows, timelines, instants, floor = [], [], [], []
    for _ in range(runs):
        wall, _, table = cpu_timed(lambda: LSMHistory(storage, HISTORY).read())
        assert len(table) == 100_000
        rows.append(wall)
        wall, _, timeline = cpu_timed(lambda: LSMHistory(storage, HISTORY).timeline())
        assert len(timeline) == 100_000
        timelines.append(wall)
        wall, _, made = cpu_timed(lambda: list(LSMHistory(storage, HISTORY).timeline()))
        assert len(made) == 100_000
        instants.append(wall)
        wall, _, tables = cpu_timed(lambda: [pq.read_table(f, columns=columns) for f in files])
        assert sum(len(t) for t in tables) == 100_000
        floor.append(wall)
    report("read 100,000 archived instants' rows (LSMHistory.read)", rows, floor, 1.5)
    report("read 100,000 archived instants as a Timeline (its Instants made on first use)",
           timelines, floor, 1.5)
    # Information, not a target: what a caller that walks every archived instant pays.
    report("read 100,000 archived instants and make every Instant", instants, floor, 1.5)


if __name__ == "__main__":
    print(f"load: {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        if "--read" not in sys.argv:
            bench_archive(Path(tmp), 3)
        bench_read(Path(tmp), 5)
