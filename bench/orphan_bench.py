"""Orphan-file detection on the clean bench's generated COW table (1,000 partitions x 100 file groups x
10 slices = 1,000,000 files at the default size) against its floor measured in the same run: an
`os.scandir` + `stat` walk of the tree plus reading the commit metadata of the active and archived
timelines (what any detection must read: the JSON parsed, nothing built from it). Medians of
interleaved runs, wall and CPU time (the machine is shared: CPU time is the steadier).

    .venv/bin/python bench/orphan_bench.py [--runs 3] [--partitions 1000]

The table is written once by the demo generator's fast mode under bench/out/ and reused; one orphan
per partition is added (a failed write's copy), so the bench also checks the count found.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchlib import build_table, cpu_timed, load, report, scandir_walk

from hudi_assets.engine import LocalEngine
from hudi_assets.repair import OrphanConfig, OrphanFileRepair
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.archived import ArchivedTimeline

ROOT = Path(__file__).resolve().parent
TARGET = 1.5
MONTH = 30 * 86400


def table_path(partitions: int) -> Path:
    path = ROOT / "out" / f"clean_table_{partitions}"
    build_table(path, partitions, groups=100, commits=10)
    return path


def add_orphans(path: Path) -> int:
    """One failed write's file per partition (an instant after every commit: on neither timeline)."""
    added = 0
    for metafile in path.rglob(".hoodie_partition_metadata"):
        if ".hoodie" in metafile.parent.relative_to(path).parts:
            continue
        orphan = metafile.parent / "orphan-0_0-0-0_29991231000000000.parquet"
        orphan.touch()
        added += 1
    return added


def floor(path: Path) -> int:
    """The walk with a stat per file, and every completed commit's metadata, active and archived:
    the active commits' JSON parsed as it is (`json.loads`, no objects of ours), the archived
    entries decoded."""
    files = scandir_walk(str(path), stat=True)
    table = HoodieTable(str(path))
    active = table.active_timeline
    for instant in active.filter_completed().write_timeline():
        json.loads(active.read_details(instant))
    for _entry in ArchivedTimeline.load(table).entries():
        pass
    return files


def ours(path: Path) -> int:
    service = OrphanFileRepair(HoodieTable(str(path)), OrphanConfig(), LocalEngine(),
                               lambda: time.time() + MONTH)
    return len(service.plan().orphans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=1000)
    args = parser.parse_args()
    path = table_path(args.partitions)
    expected = add_orphans(path)
    print(f"{floor(path):,} files; {load()}", flush=True)  # a warm-up of the page cache
    mine, base, mine_wall, base_wall = [], [], [], []
    for _ in range(args.runs):
        wall, cpu, found = cpu_timed(lambda: ours(path))
        assert found == expected, f"found {found} orphans, expected {expected}"
        mine.append(cpu)
        mine_wall.append(wall)
        wall, cpu, _files = cpu_timed(lambda: floor(path))
        base.append(cpu)
        base_wall.append(wall)
        print(f"run: ours {mine[-1]:.2f} s CPU ({mine_wall[-1]:.2f} s wall), floor {base[-1]:.2f} s CPU "
              f"({base_wall[-1]:.2f} s wall); {load()}", flush=True)
    report(f"orphan detection, {args.partitions} partitions", mine_wall, base_wall, TARGET)
    report(f"orphan detection, {args.partitions} partitions", mine, base, TARGET, "CPU")


if __name__ == "__main__":
    main()
