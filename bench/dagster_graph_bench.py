"""Dagster graph benchmark: the whole maintenance graph of one demo table, as a run launched on an instance.

Run: .venv/bin/python bench/dagster_graph_bench.py [--engine spark|local] [--master local[*]]

Writes the demo COW table (14 commits) into a temporary folder, then executes the table's job with the
job's own executor (in-process: one Spark session shared by the steps) on a temporary instance, and
prints the wall time of the run and of each step. The target is the whole graph in under 30 s with Spark.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import dagster as dg

from hudi_assets.demo import write_demo_tables
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.demo import DEMO_HOODIE_CONF, QUIET
from hudi_assets.orchestration.resources import HudiTableRegistry, spark_resource
from hudi_assets.orchestration.tables import HudiTranslator, describe_tables

TARGET_SECONDS = 30.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="spark", choices=["spark", "local"])
    parser.add_argument("--master", default=None, help="Spark master (default local[*])")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root, dg.instance_for_test() as instance:
        cow = next(p for p in write_demo_tables(root) if p.endswith("demo_cow"))
        registry = HudiTableRegistry(base_paths=[cow], hoodie_conf=DEMO_HOODIE_CONF, dry_run=False,
                                     engine=args.engine)
        defs = build_definitions(registry, spark_resource(args.master))
        job = defs.get_job_def(HudiTranslator().job_name(describe_tables(registry)[0]))
        started = time.monotonic()
        result = job.execute_in_process(QUIET, instance=instance, raise_on_error=False)
        elapsed = time.monotonic() - started
        print(f"table: {Path(cow).name}, engine: {args.engine}, executor: {job.executor_def.name}")
        for stats in instance.get_run_step_stats(result.run_id):
            print(f"  {stats.step_key:<60} {stats.end_time - stats.start_time:6.1f} s")
        verdict = "within" if elapsed < TARGET_SECONDS else "OVER"
        print(f"whole graph: {elapsed:.1f} s ({verdict} the {TARGET_SECONDS:.0f} s target), "
              f"{'succeeded' if result.success else 'FAILED'}")


if __name__ == "__main__":
    main()
