"""`hudi-assets demo PATH [--metadata-table] [--table-version 6|9]`: write the demo COW and MOR tables."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("demo")
    parser.add_argument("path", help="directory to create the demo tables in")
    parser.add_argument("--metadata-table", action="store_true",
                        help="give both tables a metadata table (files, column_stats, bloom_filters); "
                             "by default only the MOR table has one")
    parser.add_argument("--table-version", type=int, choices=(6, 9), default=6,
                        help="6: as Hudi 0.14/0.15 writes (default); 9: as Hudi 1.1 writes (timeline "
                             "layout 2, Avro commit metadata, a log file per deltacommit; a table with a "
                             "metadata table then has 6 commits, under its compaction trigger)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when run: the generator (and what it writes with) is not loaded for other commands.
    from hudi_assets.demo import write_demo_tables

    paths = write_demo_tables(args.path, metadata_table=args.metadata_table, table_version=args.table_version)
    for path in paths:
        print(f"wrote demo table {path}")
    return 0
