"""`hudi-assets clean PATH`: run Hudi's cleaner on a table (or show its plan with --dry-run)."""

from __future__ import annotations

import argparse
import sys

from hudi_assets.cli import add_table_arguments, open_engine, open_table
from hudi_assets.config_options import CLEAN_OPTIONS, settings_epilog


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "clean", help="clean old file versions as Hudi 0.15's cleaner does",
        description="Finish pending cleans, plan a new clean with Hudi's policy settings and run it.",
        epilog=settings_epilog(CLEAN_OPTIONS), formatter_class=argparse.RawDescriptionHelpFormatter)
    add_table_arguments(parser, config=True, engine=True)
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan (files, bytes, ECTR, policy) and write nothing")
    parser.add_argument("--discard-pending", metavar="INSTANT",
                        help="remove the pending clean INSTANT (for example one refused as unsafe) from "
                             "the timeline, keeping a copy of its state files in "
                             ".hoodie/.aux/hudi-assets/discarded/")
    parser.set_defaults(func=run)


def _print_violations(report) -> None:
    for violation in report.violations:
        print(f"refused {violation.plan_file}: {violation.path}: {violation.problem}")


def _print_plan(table, plan, pending: list[str]) -> None:
    from hudi_assets.fsview import FileSystemView

    ectr = plan.earliest_instant_to_retain
    print(f"policy: {plan.policy}")
    print(f"earliest commit to retain: {f'{ectr.timestamp} ({ectr.action})' if ectr else 'none'}")
    print(f"last completed commit: {plan.last_completed_commit_timestamp or 'none'}")
    if pending:
        print(f"pending cleans to finish first: {', '.join(pending)}")
    view = FileSystemView(table)
    total_bytes = 0
    for partition in sorted(plan.file_paths_to_delete):
        files = plan.file_paths_to_delete[partition]
        sizes = view.file_sizes(partition) if table.storage.exists(partition) else {}
        names = [f.file_path.rpartition("/")[2] for f in files]
        size = sum(sizes.get(n, 0) for n in names)
        total_bytes += size
        print(f"partition {partition or '(none)'}: {len(files)} files, {size} bytes")
        for name in names:
            print(f"  {name}  {sizes.get(name, 0)}")
    for partition in plan.partitions_to_delete:
        print(f"partition to delete: {partition}")
    print(f"dry run: {plan.total_files} files, {total_bytes} bytes would be deleted "
          f"in {len(plan.file_paths_to_delete)} partitions; nothing written")


def run(args: argparse.Namespace) -> int:
    from hudi_assets.clean.config import CleanConfig
    from hudi_assets.clean.workflow import (
        clean_table,
        discard_pending,
        pending_cleans,
        refuse_unsupported,
        schedule_clean,
        validate_pending,
    )

    table = open_table(args)
    if args.discard_pending:
        for copy in discard_pending(table, args.discard_pending):
            print(f"discarded: state file kept as {copy}")
        return 0
    write_config = table.write_config
    config = CleanConfig.from_write_config(write_config)
    refuse_unsupported(table, config)
    engine = open_engine(args, write_config)
    if args.dry_run:
        pending = pending_cleans(table)
        report = validate_pending(table, config, pending)
        _print_violations(report)
        report.raise_if_unsafe(table.base_path)
        plan, _ = schedule_clean(table, config, engine, dry_run=True)
        _print_plan(table, plan, [p.instant.timestamp for p in pending])
        return 0

    live = sys.stderr.isatty()  # one updating line on a terminal, plain lines in a log

    def progress(done: int, total: int) -> None:
        if live:
            print(f"\rdeleted {done} of {total} files", end="\n" if done == total else "", file=sys.stderr,
                  flush=True)
        elif done == total or done % 1000 == 0:
            print(f"deleted {done} of {total} files", file=sys.stderr, flush=True)

    result = clean_table(table, config, engine, progress=progress)
    if not result.executed:
        print(f"nothing to clean ({config.policy}): no plan lists a file")
    else:
        cleans = ", ".join(result.completed)
        print(f"cleaned {table.config.name}: {result.files_deleted} files deleted, "
              f"{result.partitions_deleted} partitions deleted, clean instant(s) {cleans}")
    return 0
