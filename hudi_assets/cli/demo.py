"""`hudi-assets demo PATH [--metadata-table]`: write the demo COW and MOR tables."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("demo")
    parser.add_argument("path", help="directory to create the demo tables in")
    parser.add_argument("--metadata-table", action="store_true",
                        help="give both tables a metadata table (files, column_stats, bloom_filters); "
                             "by default only the MOR table has one")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when run: the generator (and what it writes with) is not loaded for other commands.
    from hudi_assets.demo import write_demo_tables

    for path in write_demo_tables(args.path, metadata_table=args.metadata_table):
        print(f"wrote demo table {path}")
    return 0
