"""`hudi-assets clean PATH`: run Hudi's cleaner on a table (or show its plan with --dry-run)."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from typing import TYPE_CHECKING

from hudi_assets.cli.main import (
    add_settings_parser,
    add_strict_argument,
    add_table_arguments,
    check_settings,
    open_engine,
    open_table,
)
from hudi_assets.config_options import CLEAN_OPTIONS, METRICS_OPTIONS
from hudi_assets.engine import gc_paused
from hudi_assets.exceptions import HudiInputError
from hudi_assets.listener import QUIET, Listener

if TYPE_CHECKING:
    from hudi_assets.clean.reader_window import HeldBack

_JSON_STRING = json.encoder.encode_basestring_ascii  # a str as a JSON string literal, as json.dumps
# The ASCII characters json.dumps writes as they are (printable, neither quote nor backslash).
_PLAIN_ASCII = bytes(c for c in range(0x20, 0x7F) if c not in b'"\\')


def add_parser(subparsers) -> None:
    parser = add_settings_parser(
        subparsers, "clean", (*CLEAN_OPTIONS, *METRICS_OPTIONS),
        description="Finish pending cleans, plan a new clean with Hudi's policy settings and run it.")
    add_table_arguments(parser, config=True, engine=True)
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan's summary (policy, ECTR, files and bytes per partition) "
                             "and write nothing")
    parser.add_argument("--list-files", action="store_true",
                        help="with --dry-run: also list every planned file with its size")
    parser.add_argument("--json", action="store_true",
                        help="with --dry-run: the whole plan as one JSON object (policy, ectr, last "
                             "completed commit, files with sizes per partition, partitions to delete, "
                             "totals)")
    parser.add_argument("--discard-pending", metavar="INSTANT",
                        help="remove the pending clean INSTANT (for example one refused as unsafe) from "
                             "the timeline, keeping a copy of its state files in "
                             ".hoodie/.aux/hudi-assets/discarded/")
    add_strict_argument(parser)
    parser.set_defaults(func=run)


def _print_violations(report) -> None:
    for violation in report.violations:
        print(f"refused {violation.plan_file}: {violation.path}: {violation.problem}")


def _print_plan(plan, sizes: dict[str, list[int]], pending: list[str], list_files: bool,
                held: HeldBack) -> None:
    ectr = plan.earliest_instant_to_retain
    print(f"policy: {plan.policy}")
    print(f"earliest commit to retain: {f'{ectr.timestamp} ({ectr.action})' if ectr else 'none'}")
    print(f"last completed commit: {plan.last_completed_commit_timestamp or 'none'}")
    if pending:
        print(f"pending cleans to finish first: {', '.join(pending)}")
    for partition in sorted(plan.file_paths_to_delete):
        files = plan.file_paths_to_delete[partition]
        print(f"partition {partition or '(none)'}: {len(files)} files, {sum(sizes[partition])} bytes")
        if list_files:
            for info, size in zip(files, sizes[partition], strict=True):
                print(f"  {info.file_path.rpartition('/')[2]}  {size}")
    for partition in plan.partitions_to_delete:
        print(f"partition to delete: {partition}")
    if held.files:
        print(held.describe())
    total_bytes = sum(sum(s) for s in sizes.values())
    print(f"dry run: {plan.total_files} files, {total_bytes} bytes would be deleted "
          f"in {len(plan.file_paths_to_delete)} partitions; nothing written")


def _json_entries(paths: list[str], sizes: list[int]) -> str:
    """`{"path": ..., "size": ...}` of each file, comma-separated, as `json.dumps` writes them. When no
    path needs an escape (printable ASCII without quotes or backslashes: the names Hudi writes) the
    whole partition is one %-format in C; otherwise each path is escaped."""
    text = "".join(paths)
    if text.isascii() and not text.encode().translate(None, _PLAIN_ASCII):  # one C pass over bytes
        values = tuple(itertools.chain.from_iterable(zip(paths, sizes, strict=True)))
        return ", ".join(['{"path": "%s", "size": %d}'] * len(paths)) % values
    return ", ".join(map('{{"path": {}, "size": {}}}'.format, map(_JSON_STRING, paths), sizes))


def _write_plan_json(plan, sizes: dict[str, list[int]], pending: list[str], held: HeldBack) -> None:
    """One JSON object, written a partition at a time (a plan can list millions of files)."""
    ectr = plan.earliest_instant_to_retain
    head = {"policy": plan.policy, "ectr": ectr.timestamp if ectr else None,
            "ectr_action": ectr.action if ectr else None,
            "last_completed_commit": plan.last_completed_commit_timestamp or None,
            "pending_cleans": pending}
    out = sys.stdout
    out.write(json.dumps(head)[:-1] + ', "partitions": [')
    for n, (partition, files) in enumerate(plan.file_paths_to_delete.items()):
        entries = _json_entries([f.file_path for f in files], sizes[partition])
        out.write(f'{"," if n else ""}{{"partition": {_JSON_STRING(partition)}, '
                  f'"bytes": {sum(sizes[partition])}, "files": [{entries}]}}')
    tail = {"partitions_to_delete": plan.partitions_to_delete,
            "totals": {"files": plan.total_files, "bytes": sum(sum(s) for s in sizes.values()),
                       "partitions": len(plan.file_paths_to_delete)},
            "held_back_by_reader_window": held.as_json()}
    out.write("], " + json.dumps(tail)[1:] + "\n")


class _Progress(Listener):
    """One updating line on a terminal, plain lines in a log: called every few seconds
    (hoodie.assets.clean.progress.interval.ms), and at the first and the last round of deletes."""

    def __init__(self):
        self.start, self.end = ("\r", "") if sys.stderr.isatty() else ("", "\n")

    def progress(self, done: int, total: int) -> None:
        print(f"{self.start}deleted {done} of {total} files", end="\n" if done == total else self.end,
              file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from hudi_assets.clean.cleaner import Cleaner

    if (args.json or args.list_files) and not args.dry_run:
        raise HudiInputError("--json and --list-files describe a plan: use them with --dry-run")
    table = open_table(args)
    if args.discard_pending:
        for copy in Cleaner.for_table(table).discard_pending(args.discard_pending):
            print(f"discarded: state file kept as {copy}")
        return 0
    check_settings(table, args.strict)
    cleaner = Cleaner.for_table(table, open_engine(args, table.write_config),
                                listener=QUIET if args.dry_run else _Progress())
    config = cleaner.config
    cleaner.refuse_unsupported(dry_run=args.dry_run)
    if args.dry_run:
        pending = cleaner.pending()
        report = cleaner.validate(pending)
        _print_violations(report)
        report.raise_if_unsafe(table.base_path)
        # Paused until the plan is printed and dropped: its file infos (a tuple per planned file, none
        # cyclic) would otherwise be traversed by the collector once the planner resumes it (measured:
        # 0.24 s of a 700,000-file plan), to no end in a process that exits after printing.
        with gc_paused():
            plan = cleaner.plan(with_sizes=True)
            sizes = cleaner.file_sizes(plan)
            instants = [p.instant.timestamp for p in pending]
            held = cleaner.planner.held_back
            if args.json:
                _write_plan_json(plan, sizes, instants, held)
            else:
                _print_plan(plan, sizes, instants, args.list_files, held)
            del plan, sizes, cleaner
        return 0

    result = cleaner.clean()
    if not result.executed:
        print(f"nothing to clean ({config.policy}): no plan lists a file")
    else:
        cleans = ", ".join(result.completed)
        print(f"cleaned {table.config.name}: {result.files_deleted} files deleted, "
              f"{result.partitions_deleted} partitions deleted, clean instant(s) {cleans}")
    if result.held_back.files:
        print(result.held_back.describe())
    return 0
