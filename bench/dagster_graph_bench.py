"""Dagster graph benchmark: the whole maintenance graph of the demo tables, as runs on an instance.

Run: .venv/bin/python bench/dagster_graph_bench.py [--engine spark|local] [--master local[*]]
     .venv/bin/python bench/dagster_graph_bench.py --warm [--runs 3] [--sensor-tables 20] [--target 2.0]

Default: writes the demo COW table (14 commits) into a temporary folder, then executes the table's job
with the job's own executor (in-process: one Spark session shared by the steps) on a temporary
instance, and prints the wall time of the run and of each step. The target is the whole graph in
under 30 s with Spark.

`--warm`: one Spark Connect server (started here, stopped at the end) serves every run. Per demo table,
the table's job (`execute_in_process`, definitions built once) on a fresh copy of the written table
vs `hudi-assets clean --spark-remote URL` then `hudi-assets archive` on another fresh copy with the
same settings, both in-process (`hudi_assets.cli.main`, the same warm client) and as subprocesses
(what a user runs); medians of interleaved runs after one unmeasured warm-up each. The ratio graph /
in-process CLI decides (target <= 2); the goal is under 10 s per table. Both must leave the same data
files. Then one sensor tick over `--sensor-tables` copies of the maintained tables (nothing due).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import logging
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import dagster as dg
from benchlib import load, timed

from hudi_assets.demo import write_demo_tables
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.demo import DEMO_HOODIE_CONF, QUIET
from hudi_assets.orchestration.resources import HudiTableRegistry, spark_resource
from hudi_assets.orchestration.tables import HudiTranslator, describe_tables

TARGET_SECONDS = 30.0
WARM_GOAL_SECONDS = 10.0
CLI = [sys.executable, "-m", "hudi_assets.cli"]
CONF = [arg for key, value in DEMO_HOODIE_CONF.items() for arg in ("--hoodie-conf", f"{key}={value}")]


def commands(path: str, remote: str) -> list[list[str]]:
    """`hudi-assets clean` on the warm engine, then `hudi-assets archive`, with the graph's settings."""
    return [["clean", path, *CONF, "--engine", "spark", "--spark-remote", remote], ["archive", path, *CONF]]


def cold_graph(engine: str, master: str | None) -> None:
    with tempfile.TemporaryDirectory() as root, dg.instance_for_test() as instance:
        cow = next(p for p in write_demo_tables(root) if p.endswith("demo_cow"))
        registry = HudiTableRegistry(base_paths=[cow], hoodie_conf=DEMO_HOODIE_CONF, dry_run=False,
                                     engine=engine)
        defs = build_definitions(registry, spark_resource(master))
        job = defs.resolve_job_def(HudiTranslator().job_name(describe_tables(registry)[0]))
        started = time.monotonic()
        result = job.execute_in_process(QUIET, instance=instance, raise_on_error=False)
        elapsed = time.monotonic() - started
        print(f"table: {Path(cow).name}, engine: {engine}, executor: {job.executor_def.name}")
        for stats in instance.get_run_step_stats(result.run_id):
            print(f"  {stats.step_key:<60} {stats.end_time - stats.start_time:6.1f} s")
        verdict = "within" if elapsed < TARGET_SECONDS else "OVER"
        print(f"whole graph: {elapsed:.1f} s ({verdict} the {TARGET_SECONDS:.0f} s target), "
              f"{'succeeded' if result.success else 'FAILED'}")


def fresh(pristine: Path, target: Path) -> str:
    """`target` as a copy of the table as written, so every measured run starts from one state."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(pristine, target)
    return str(target)


def data_files(base: Path) -> set[str]:
    return {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file() and ".hoodie" not in p.parts}


def cli_in_process(path: str, remote: str) -> None:
    from hudi_assets.cli.main import main as cli_main

    for argv in commands(path, remote):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = cli_main(argv)
        if code != 0:
            raise RuntimeError(f"hudi-assets {' '.join(argv)}: exit {code}\n{out.getvalue()[-3000:]}")


def cli_subprocess(path: str, remote: str) -> None:
    for argv in commands(path, remote):
        done = subprocess.run([*CLI, *argv], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"hudi-assets {' '.join(argv)}: exit {done.returncode}\n{done.stderr[-3000:]}")


def sensor_cycle(maintained: list[Path], root: Path, count: int, instance: dg.DagsterInstance) -> None:
    """One tick of the sensor over `count` copies of the maintained tables, none of them due."""
    copies = [fresh(table, root / f"{table.name}_{i:03d}")
              for i, table in zip(range(count), itertools.cycle(maintained), strict=False)]
    registry = HudiTableRegistry(base_paths=copies, hoodie_conf=DEMO_HOODIE_CONF, dry_run=False)
    built, defs = timed(lambda: build_definitions(registry))
    sensor = defs.resolve_sensor_def("hudi_maintenance_sensor")
    context = dg.build_sensor_context(instance=instance, resources={"hudi": registry}, definitions=defs)
    took, result = timed(lambda: sensor.evaluate_tick(context))
    if result.run_requests:
        raise RuntimeError(f"the sensor requested runs: {[r.tags for r in result.run_requests]}")
    print(f"sensor tick over {count} tables, nothing due: {took:.2f} s (definitions built in {built:.2f} s); "
          f"{load()}", flush=True)
    print(f"  e.g. {result.skip_message.split('; ')[0]}")


def compare(pristine: list[Path], work: Path, remote: str, runs: int,
            instance: dg.DagsterInstance) -> dict[tuple[str, str], list[float]]:
    """Wall times per (table, variant): the table's job vs the CLI in-process vs as subprocesses, each
    on a fresh copy; one unmeasured warm-up per table and variant, which also checks that the graph
    and the CLI leave the same data files."""
    registry = HudiTableRegistry(base_paths=[fresh(t, work / "graph" / t.name) for t in pristine],
                                 hoodie_conf=DEMO_HOODIE_CONF, dry_run=False, engine="spark",
                                 spark_remote=remote)
    defs = build_definitions(registry)
    jobs = {spec.key: defs.resolve_job_def(HudiTranslator().job_name(spec))
            for spec in describe_tables(registry)}

    def graph(path: Path) -> None:
        if not jobs[path.name].execute_in_process(QUIET, instance=instance, raise_on_error=False).success:
            raise RuntimeError(f"{path.name}: the graph run failed")

    # variant -> (where its copy goes, the run); the copy is made before the clock starts
    variants = {"graph": ("graph", graph),
                "cli in-process": ("cli", lambda path: cli_in_process(str(path), remote)),
                "cli subprocesses": ("cli", lambda path: cli_subprocess(str(path), remote))}

    def measure(table: Path, variant: str) -> float:
        folder, run = variants[variant]
        path = Path(fresh(table, work / folder / table.name))
        return timed(partial(run, path))[0]

    for table in pristine:
        for variant in variants:
            measure(table, variant)
        if data_files(work / "graph" / table.name) != data_files(work / "cli" / table.name):
            raise RuntimeError(f"{table.name}: the graph and the CLI left different data files")
    times: dict[tuple[str, str], list[float]] = {(t.name, v): [] for t in pristine for v in variants}
    for _ in range(runs):
        for table, variant in itertools.product(pristine, variants):
            times[(table.name, variant)].append(measure(table, variant))
    return times


def warm_graph(runs: int, sensor_tables: int, target: float) -> None:
    from hudi_assets.spark_connect import start_server

    logging.basicConfig(level=logging.WARNING)  # the in-process CLI logs as quietly as the graph runs
    with (tempfile.TemporaryDirectory(prefix="dagster-graph-bench-") as root,
          dg.instance_for_test() as instance):
        work = Path(root)
        pristine = [Path(p) for p in write_demo_tables(str(work / "pristine"))]
        up, server = timed(lambda: start_server(0, log=work / "server.log"))
        try:
            print(f"Spark Connect server {server.url} up in {up:.1f} s", flush=True)
            times = compare(pristine, work, server.url, runs, instance)
            print(f"medians of {runs} interleaved runs on the warm engine; {load()}")
            for table in pristine:
                graph, cli, processes = (statistics.median(times[(table.name, v)])
                                         for v in ("graph", "cli in-process", "cli subprocesses"))
                goal = "within" if graph < WARM_GOAL_SECONDS else "OVER"
                verdict = "ok" if graph / cli <= target else "ABOVE TARGET"
                print(f"{table.name}: graph {graph:.2f} s ({goal} the {WARM_GOAL_SECONDS:.0f} s goal); "
                      f"clean + archive in-process {cli:.2f} s, as subprocesses {processes:.2f} s; "
                      f"graph / in-process CLI = {graph / cli:.2f}x (target <= {target}) {verdict}, "
                      f"graph / subprocesses = {graph / processes:.2f}x", flush=True)
            maintained = [work / "graph" / t.name for t in pristine]
            sensor_cycle(maintained, work / "sensor", sensor_tables, instance)
        finally:
            server.stop()  # closes this process's Connect clients first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", default="spark", choices=["spark", "local"])
    parser.add_argument("--master", default=None, help="Spark master (default local[*])")
    parser.add_argument("--warm", action="store_true",
                        help="graph vs CLI on a warm Spark Connect server, and a sensor tick")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sensor-tables", type=int, default=20)
    parser.add_argument("--target", type=float, default=2.0, help="graph / in-process CLI, wall time")
    args = parser.parse_args()
    if args.warm:
        warm_graph(args.runs, args.sensor_tables, args.target)
    else:
        cold_graph(args.engine, args.master)


if __name__ == "__main__":
    main()
