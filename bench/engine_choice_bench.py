"""Where an embedded JVM starts to pay: whole `hudi-assets clean --dry-run --json` processes with
`--engine local` vs `--engine spark` (a cold embedded `local[*]`, what the default engine was before
`auto`) on tables of growing size, medians of interleaved runs, wall and CPU of the process and its
children, the load; checks both engines' plans have one digest.

    .venv/bin/python bench/engine_choice_bench.py [--runs 2] [--partitions 1 20 200]

Each table is `--partitions` x 100 file groups x 10 commits (about 1,000 files a partition), built
once under bench/out/ and reused (the 1-partition table has 10 files: 5 groups x 2 commits).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchlib import build_table, load, plan_digest

ROOT = Path(__file__).resolve().parent
CLI = [sys.executable, "-m", "hudi_assets.cli"]


def table_path(partitions: int) -> Path:
    if partitions == 1:
        path = ROOT / "out" / "startup_table_10"
        build_table(path, partitions=1, groups=5, commits=2)
    else:
        path = ROOT / "out" / f"clean_table_{partitions}"
        build_table(path, partitions, groups=100, commits=10)
    return path


def dry_run(table: Path, engine: str) -> tuple[float, float, str, int]:
    """One dry-run process: (wall, CPU seconds, plan digest, planned files)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "PYTHONDONTWRITEBYTECODE")}
    retained = "1" if "startup" in table.name else "2"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*CLI, "clean", str(table), "--dry-run", "--json", "--engine", engine,
                           "--hoodie-conf", f"hoodie.cleaner.commits.retained={retained}"],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{engine}: exit {done.returncode}\n{done.stderr[-3000:]}")
    plan = json.loads(done.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, plan_digest(plan), plan["totals"]["files"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--partitions", type=int, nargs="+", default=[1, 20, 200])
    args = parser.parse_args()
    for partitions in args.partitions:
        table = table_path(partitions)
        runs: dict[str, list[tuple[float, float]]] = {"local": [], "spark": []}
        digests: set[str] = set()
        for n in range(args.runs):
            for engine in (("local", "spark") if n % 2 == 0 else ("spark", "local")):
                wall, cpu, digest, files = dry_run(table, engine)
                runs[engine].append((wall, cpu))
                digests.add(digest)
        assert len(digests) == 1, f"the engines' plans differ: {digests}"
        (lw, lc), (sw, sc) = ((statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
                              for r in (runs["local"], runs["spark"]))
        print(f"{partitions} partitions ({files} files to delete, digest {digests.pop()[:8]}): "
              f"local {lw:.2f} s wall / {lc:.2f} s CPU, cold local[*] {sw:.2f} s / {sc:.2f} s CPU "
              f"= {sw / lw:.1f}x wall; medians of {args.runs}; {load()}", flush=True)


if __name__ == "__main__":
    main()
