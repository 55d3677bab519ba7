"""`hudi-assets timeline PATH [--json] [--active-only] [--file NAME]`: the active and archived
timeline of a table, or the history of one data file in it."""

from __future__ import annotations

import argparse
import json
import sys

from hudi_assets.cli.main import add_table_arguments, open_table


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("timeline")
    add_table_arguments(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--active-only", action="store_true", help="skip the archived timeline")
    parser.add_argument("--file", metavar="NAME",
                        help="the history of one data file (name, or partition/name): the commit that "
                             "wrote it, the clean or rollback that deleted it, and when")
    parser.set_defaults(func=run)


def _file_history(table, name: str, as_json: bool) -> int:
    from hudi_assets.timeline.file_history import file_history

    history = file_history(table, name)
    if as_json:
        json.dump(history.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    where = f"{history.partition}/{history.name}" if history.partition else history.name
    state = {True: "exists", False: "does not exist", None: "partition unknown"}[history.exists]
    print(f"{where} ({state})")
    for e in history.events:
        print(f"  {e.instant}  {e.action:<13} {e.event:<20} {e.timeline}"
              + (f", completed {_utc(e.completed_ms)}" if e.completed_ms else ""))
    for note in history.notes:
        print(f"  note: {note}")
    return 0


def _utc(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def run(args: argparse.Namespace) -> int:
    from hudi_assets.timeline.report import timeline_rows

    table = open_table(args)
    if args.file:
        return _file_history(table, args.file, args.json)
    rows = timeline_rows(table, include_archived=not args.active_only)
    if args.json:
        json.dump({"table": table.config.name, "base_path": table.base_path,
                   "table_type": table.config.table_type, "instants": rows}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"{table.config.name} ({table.config.table_type}, table version {table.config.table_version}) "
          f"at {table.base_path}")
    header = ("timeline", "requested", "completed", "action", "state", "files", "bytes")
    widths = (8, 20, 20, 13, 9, 5, 10)
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for row in rows:
        cells = (row["timeline"], row["instant"], row["completion_time"] or "", row["action"], row["state"],
                 str(row.get("files_written", "")), str(row.get("bytes_written", "")))
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)))
    active = sum(1 for r in rows if r["timeline"] == "active")
    print(f"{active} active, {len(rows) - active} archived instants")
    return 0
