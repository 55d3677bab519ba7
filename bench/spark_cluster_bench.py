"""The clean plan on a Spark standalone cluster (a master and two 1-core workers on 127.0.0.1, started
from pyspark's `spark-class`) vs `local[2]`, once each session is up: medians of interleaved runs,
the plan digests of both checked equal, with the machine's load.

Each engine lives in a child process of its own (one Spark context per process), started once and
warmed by one plan; the runs then alternate between them.

    .venv/bin/python bench/spark_cluster_bench.py [--runs 3] [--partitions 200] [--target 1.3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import build_table, cleaner_plan_digest, report, timed

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests"))
from support.spark_cluster import cluster_conf, standalone_cluster  # noqa: E402


def table_path(partitions: int) -> Path:
    path = ROOT / "out" / f"clean_table_{partitions}"
    build_table(path, partitions, groups=100, commits=10)
    return path


def serve(master: str, conf: dict[str, str], table: str) -> None:
    """The child: one session; each `plan` line on stdin plans the table and answers a JSON line."""
    from hudi_assets.clean.cleaner import Cleaner
    from hudi_assets.clean.config import CleanConfig
    from hudi_assets.engine import SparkEngine
    from hudi_assets.table import HoodieTable

    engine = SparkEngine(master=master, conf=conf)
    up, _ = timed(lambda: engine.session)
    cores = engine.session.sparkContext.defaultParallelism
    print(json.dumps({"session_s": up, "default_parallelism": cores}), flush=True)
    config = CleanConfig(commits_retained=2)
    for _ in sys.stdin:
        took, plan = timed(lambda: Cleaner(HoodieTable(table), config, engine).plan())
        print(json.dumps({"wall_s": took, "files": plan.total_files, "digest": cleaner_plan_digest(plan)}),
              flush=True)
    engine.session.stop()


class Child:
    """A `serve` process, asked for one plan at a time."""

    def __init__(self, name: str, master: str, conf: dict[str, str], table: Path, log: Path):
        self.name = name
        self.log = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", master, "--conf", json.dumps(conf), "--table", str(table)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.started = self._answer()

    def _answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name} stopped, see {self.log.name}")
        return json.loads(line)

    def plan(self) -> dict:
        self.process.stdin.write("plan\n")
        self.process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(120)
        self.log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=200)
    parser.add_argument("--target", type=float, default=1.3)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--conf", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, json.loads(args.conf), args.table)
        return
    table = table_path(args.partitions)
    with tempfile.TemporaryDirectory(prefix="spark-cluster-bench-") as work:
        work = Path(work)
        with standalone_cluster(work / "cluster", workers=2, cores=1) as master:
            children: list[Child] = []
            try:
                children.append(Child("local[2]", "local[2]", {}, table, work / "local.log"))
                children.append(Child("cluster", master, cluster_conf(cores=2), table, work / "cluster.log"))
                for child in children:
                    print(f"{child.name}: session up in {child.started['session_s']:.1f} s, default "
                          f"parallelism {child.started['default_parallelism']}", flush=True)
                    warm = child.plan()
                    print(f"{child.name}: first plan {warm['wall_s']:.2f} s, {warm['files']} files",
                          flush=True)
                times: dict[str, list[float]] = {child.name: [] for child in children}
                digests = set()
                for _ in range(args.runs):
                    for child in children:
                        answer = child.plan()
                        times[child.name].append(answer["wall_s"])
                        digests.add(answer["digest"])
            finally:
                for child in children:
                    child.close()
    for name, runs in times.items():
        print(f"{name}: {', '.join(f'{t:.2f}' for t in runs)} s (median {statistics.median(runs):.2f} s)")
    assert len(digests) == 1, f"the plans differ: {digests}"
    print(f"plan digest {digests.pop()} ({args.partitions} partitions)")
    report(f"plan on a 2-worker standalone cluster vs local[2] ({args.partitions} partitions)",
           times["cluster"], times["local[2]"], args.target)


if __name__ == "__main__":
    main()
