"""Benchmark: build the file-system view of a 1,000-partition, ~1,000,000-file table.

Prints, from one run, the median time to build the view (list every partition, group every file
into file groups and slices, split committed from uncommitted) divided by the median time of a
plain `os.scandir` walk of the same tree (names only: the floor of any listing), and also against a
walk that stats every file (what a listing with sizes costs).

    .venv/bin/python bench/fsview_build.py [--partitions 1000] [--groups 100] [--commits 11] [--runs 3]

The table is written once by the demo generator's fast mode (empty data files, real timeline and
commit metadata) into --dir and reused by later runs.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from benchlib import build_table, load, scandir_walk, timed

from hudi_assets.engine import LocalEngine
from hudi_assets.fsview import FileSystemView
from hudi_assets.table import HoodieTable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="bench/out/fsview_table")
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--groups", type=int, default=100, help="file groups per partition")
    parser.add_argument("--commits", type=int, default=11)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1, help="listing threads of the local engine")
    args = parser.parse_args()

    base = Path(args.dir).resolve()
    build_table(base, args.partitions, args.groups, args.commits)

    scandir_walk(str(base), stat=False)  # warm the page cache before anything is measured
    floors, stat_floors, views = [], [], []
    for run in range(args.runs):
        floor, files = timed(lambda: scandir_walk(str(base), stat=False))
        stat_floor, _ = timed(lambda: scandir_walk(str(base), stat=True))
        view_time, groups = timed(
            lambda: FileSystemView(HoodieTable(str(base)), LocalEngine(args.workers)).load_all())
        floors.append(floor)
        stat_floors.append(stat_floor)
        views.append(view_time)
        print(f"run {run + 1}: {files} files, {groups} file groups | scandir {floor:.2f} s, "
              f"scandir+stat {stat_floor:.2f} s, view {view_time:.2f} s")
    floor, stat_floor, view = (statistics.median(x) for x in (floors, stat_floors, views))
    print(f"median: view {view:.2f} s; ratio to plain scandir walk {view / floor:.2f} "
          f"(target <= 1.5); ratio to scandir+stat walk {view / stat_floor:.2f}; {load()}")


if __name__ == "__main__":
    main()
