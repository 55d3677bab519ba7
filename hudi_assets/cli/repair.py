"""`hudi-assets repair orphans PATH [--dry-run] [--min-age D] [--max-orphans N] [--delete] [--json]`,
`... --undo RUN` and `... --purge-quarantine --quarantined-before D`.

Finds the data files no completed commit owns (`hudi_assets.repair`) and moves them into a quarantine
run under `.hoodie/.aux/hudi-assets/quarantine/RUN/` (RUN is printed), deletes them with `--delete`,
or only lists them with `--dry-run`: counts and bytes per partition and instant, or with `--json`
every path with its reason. Exit 2, nothing moved, on a refusal (see the package's docs).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from hudi_assets.cli.main import add_table_arguments, open_engine, open_table
from hudi_assets.exceptions import HudiInputError
from hudi_assets.repair import OrphanFileRepair, OrphanFilesResult, parse_duration


def add_parser(subparsers) -> None:
    repair = subparsers.add_parser("repair")
    kinds = repair.add_subparsers(dest="repair", required=True)
    parser = kinds.add_parser(
        "orphans", help="find the data files no commit owns; quarantine (default), delete or list them")
    add_table_arguments(parser, config=True, engine=True)
    parser.add_argument("--dry-run", action="store_true", help="list the orphans; move nothing")
    parser.add_argument("--min-age", metavar="D", help="keep files younger than this (36h, 7d; default 7d)")
    parser.add_argument("--max-orphans", metavar="N", type=int,
                        help="refuse when more orphans are found (default 100000)")
    parser.add_argument("--delete", action="store_true", help="delete the orphans instead of quarantining")
    parser.add_argument("--json", action="store_true", help="print every path with its reason as JSON")
    parser.add_argument("--undo", metavar="RUN", help="move a quarantine run's files back")
    parser.add_argument("--purge-quarantine", action="store_true",
                        help="delete the quarantine runs older than --quarantined-before")
    parser.add_argument("--quarantined-before", metavar="D", help="age of the runs to purge (e.g. 30d)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    table = open_table(args)
    chosen = [flag for flag, on in (("--undo", args.undo), ("--purge-quarantine", args.purge_quarantine),
                                    ("--delete", args.delete)) if on]
    if len(chosen) > 1:
        raise HudiInputError(f"{table.base_path}: {' and '.join(chosen)} cannot be combined")
    if args.purge_quarantine != bool(args.quarantined_before):
        raise HudiInputError(f"{table.base_path}: --purge-quarantine and --quarantined-before go together")
    min_age = parse_duration(args.min_age, "--min-age") if args.min_age else None
    service = OrphanFileRepair.for_table(table, open_engine(args, table.write_config), min_age,
                                         args.max_orphans)
    if args.undo:
        undone = service.undo(args.undo)
        print(f"restored {len(undone.restored)} files of quarantine run {undone.run}")
        return 0
    if args.purge_quarantine:
        purged = service.purge(parse_duration(args.quarantined_before, "--quarantined-before"),
                               dry_run=args.dry_run)
        verb = "would purge" if purged.dry_run else "purged"
        print(f"{verb} {len(purged.runs)} quarantine runs ({purged.files} files, {purged.bytes} bytes)"
              + "".join(f"\n  {r}" for r in purged.runs))
        return 0
    result = service.plan() if args.dry_run else service.delete() if args.delete else service.quarantine()
    print(json.dumps(as_json(result), indent=2) if args.json else summary(result))
    return 0


def as_json(result: OrphanFilesResult) -> dict:
    return {"dry_run": result.dry_run, "run": result.run, "deleted": result.deleted,
            "files": len(result.orphans), "bytes": result.total_bytes,
            "orphans": [asdict(o) for o in result.orphans], "kept": [asdict(k) for k in result.kept]}


def summary(result: OrphanFilesResult) -> str:
    """Counts and bytes per partition and instant, then what the run did."""
    lines = [f"{'partition':<30} {'instant':<18} {'files':>8} {'bytes':>14}"]
    lines += [f"{partition or '(root)':<30} {instant:<18} {files:>8} {size:>14}"
              for (partition, instant), (files, size) in result.by_partition_instant().items()]
    what = ("orphan files found (dry run: nothing moved)" if result.dry_run
            else "orphan files deleted" if result.deleted
            else f"orphan files quarantined in run {result.run}" if result.run else "orphan files")
    lines.append(f"{len(result.orphans)} {what}, {result.total_bytes} bytes; "
                 f"{len(result.kept)} candidates kept by a guard")
    return "\n".join(lines)
