"""The README's first command: demo tables, then the whole maintenance graph on an embedded instance.

`python -m hudi_assets.orchestration.demo DIR` writes the COW and MOR demo tables into DIR, runs every
asset and check of the graph for both tables on a Dagster instance kept in `DIR/.dagster_home`
(telemetry off), and prints what each step did.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import dagster as dg

from hudi_assets.config import parse_overrides
from hudi_assets.demo import demo_table_specs, write_demo_tables
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.instance import prepare_dagster_home
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.orchestration.tables import HudiTranslator, describe_tables
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant_time import instant_epoch

DEMO_ENTRIES = {*demo_table_specs(), ".dagster_home"}
# Small retention so that the 14-commit demo tables have something to clean and to archive.
# The reader window is on, as a guard beside a live writer should be. The generator writes the whole
# history in seconds: `_date_completed_commits` dates each completed state file at its instant time, as
# if that history had happened then (else whether a version is held back would race the run's speed).
DEMO_HOODIE_CONF = {"hoodie.cleaner.commits.retained": "3", "hoodie.keep.min.commits": "5",
                    "hoodie.keep.max.commits": "7", "hudi_assets.cleaner.reader.window": "2h"}
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
# Numeric metadata worth a line of the summary, by asset.
SUMMARY_KEYS = ("active_instants", "archived_instants", "pending_instants", "commits_since_last_clean",
                "source", "policy", "earliest_commit_to_retain_instant", "files_to_delete",
                "bytes_to_delete_text", "files_deleted", "files_failed", "bytes_reclaimed_text",
                "active_instants_before",
                "active_instants_after", "instants_archived", "archive_file", "reason", "files_merged")


def snapshot_rows(base_path: Path) -> dict | None:
    """The latest snapshot as the independent hudi-rs reader sees it (None where it is not installed)."""
    try:
        from hudi import HudiTable
    except ImportError:
        return None
    return {r["_hoodie_record_key"]: r for b in HudiTable(str(base_path)).read() for r in b.to_pylist()}


def _date_completed_commits(base: Path) -> None:
    """Set each completed state file's modification time (what the reader window reads on table
    version 6) to its instant time."""
    table = HoodieTable(str(base))
    timeline = table.active_timeline
    for instant in timeline.filter_completed():
        epoch = instant_epoch(instant.timestamp, table.config.timeline_timezone)
        if epoch is not None:
            os.utime(base / timeline.state_file_path(instant), (epoch, epoch))


def run_demo(root: Path, hoodie_conf: dict[str, str]) -> bool:
    tables = [Path(p) for p in write_demo_tables(str(root))]
    for table in tables:
        _date_completed_commits(table)
    before = {t: snapshot_rows(t) for t in tables}
    home = prepare_dagster_home(root / ".dagster_home")
    # The demo opts in to deleting: a registry is a dry run unless told otherwise.
    registry = HudiTableRegistry(base_paths=[str(t) for t in tables], hoodie_conf=hoodie_conf, dry_run=False)
    defs = build_definitions(registry)
    jobs = {spec.key: HudiTranslator().job_name(spec) for spec in describe_tables(registry)}
    ok = True
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for table in tables:
            result = defs.get_job_def(jobs[table.name]).execute_in_process(QUIET, instance=instance,
                                                                           raise_on_error=False)
            ok &= result.success
            print(f"{table.name}: {'succeeded' if result.success else 'FAILED'} ({table})")
            for event in result.get_asset_materialization_events():
                materialization = event.step_materialization_data.materialization
                values = {k: v.value for k, v in materialization.metadata.items() if k in SUMMARY_KEYS}
                print(f"  {materialization.asset_key.to_user_string()}: "
                      + ", ".join(f"{k}={v}" for k, v in values.items()))
            for event in result.all_events:
                if event.event_type_value == "ASSET_CHECK_EVALUATION":
                    check = event.asset_check_evaluation_data
                    verdict = "passed" if check.passed else (
                        "WARNING" if check.severity == dg.AssetCheckSeverity.WARN else "FAILED")
                    print(f"  check {check.asset_key.path[-1]}.{check.check_name}: {verdict}"
                          + ("" if check.passed else f" - {check.description}"))
            if before[table] is not None:
                same = snapshot_rows(table) == before[table]
                ok &= same
                print(f"  hudi-rs reads the latest snapshot {'the same' if same else 'DIFFERENTLY'} "
                      f"after maintenance ({len(before[table])} rows)")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="folder for the demo tables (rebuilt from scratch)")
    parser.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    if root.exists():
        foreign = sorted(p.name for p in root.iterdir() if p.name not in DEMO_ENTRIES)
        if foreign:
            print(f"{root}: holds {', '.join(foreign)}; the demo replaces only its own folder",
                  file=sys.stderr)
            return 2
        shutil.rmtree(root)
    return 0 if run_demo(root, {**DEMO_HOODIE_CONF, **parse_overrides(args.hoodie_conf)}) else 1


if __name__ == "__main__":
    sys.exit(main())
