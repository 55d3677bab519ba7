"""`hudi-assets timeline PATH [--json] [--active-only]`: the active and archived timeline of a table."""

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
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_assets.timeline.report import timeline_rows

    table = open_table(args)
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
