"""A clean's dry run through the warm engine (a Spark Connect server started once, `--spark-remote`)
vs the local engine vs a cold embedded Spark (`local[*]`, a JVM per run): whole `hudi-assets clean
--dry-run --json` processes, medians of interleaved runs, the ratios, the machine's load; checks the
three plans have one digest.

    .venv/bin/python bench/warm_engine_bench.py [--runs 3] [--partitions 20] [--target 2.0]

The table (`--partitions` x 100 file groups x 10 commits, commits.retained=2) is built once under
bench/out/ and reused; the server runs `local[*]`, as the cold runs do, and is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import build_table, load, plan_digest, report, timed

ROOT = Path(__file__).resolve().parent
CLI = [sys.executable, "-m", "hudi_assets.cli"]
RETAINED = ["--hoodie-conf", "hoodie.cleaner.commits.retained=2"]


def table_path(partitions: int) -> Path:
    path = ROOT / "out" / f"clean_table_{partitions}"
    build_table(path, partitions, groups=100, commits=10)
    return path


def dry_run(table: Path, engine: list[str]) -> tuple[float, str, int]:
    """One dry-run process: (wall seconds, plan digest, planned files)."""
    env = {k: v for k, v in os.environ.items() if k != "SPARK_REMOTE"}  # each variant says its engine
    took, done = timed(lambda: subprocess.run([*CLI, "clean", str(table), "--dry-run", "--json", *RETAINED,
                                               *engine], capture_output=True, text=True, env=env))
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(engine)}: exit {done.returncode}\n{done.stderr[-3000:]}")
    plan = json.loads(done.stdout)
    return took, plan_digest(plan), plan["totals"]["files"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=20)
    parser.add_argument("--target", type=float, default=2.0,
                        help="warm engine vs local engine, wall time")
    args = parser.parse_args()
    from hudi_assets.spark_connect import start_server

    table = table_path(args.partitions)
    with tempfile.TemporaryDirectory(prefix="warm-engine-bench-") as work:
        up, server = timed(lambda: start_server(0, log=Path(work) / "server.log"))
        try:
            print(f"Spark Connect server {server.url} up in {up:.1f} s", flush=True)
            variants = {"warm": ["--engine", "spark", "--spark-remote", server.url],
                        "local": ["--engine", "local"],
                        "cold": ["--engine", "spark", "--spark-master", "local[*]"]}
            first, _, files = dry_run(table, variants["warm"])  # the server's Python workers start
            print(f"first warm run {first:.2f} s; the plan deletes {files} files", flush=True)
            times: dict[str, list[float]] = {name: [] for name in variants}
            digests: dict[str, set[str]] = {name: set() for name in variants}
            for _ in range(args.runs):
                for name, engine in variants.items():
                    took, digest, _ = dry_run(table, engine)
                    times[name].append(took)
                    digests[name].add(digest)
        finally:
            server.stop()
    for name, runs in times.items():
        print(f"{name}: {', '.join(f'{t:.2f}' for t in runs)} s (median {statistics.median(runs):.2f} s)")
    found = set().union(*digests.values())
    assert len(found) == 1, f"the plans differ: {digests}"
    print(f"plan digest {found.pop()} ({args.partitions} partitions, one for all three engines)")
    report(f"dry run on the warm engine vs --engine local ({args.partitions} partitions)",
           times["warm"], times["local"], args.target)
    cold, warm = statistics.median(times["cold"]), statistics.median(times["warm"])
    print(f"cold local[*] vs warm: {cold:.2f} s vs {warm:.2f} s = {cold / warm:.2f}x faster warm; {load()}")


if __name__ == "__main__":
    main()
