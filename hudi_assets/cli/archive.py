"""`hudi-assets archive PATH [--dry-run] [--props FILE] [--hoodie-conf k=v ...]`."""

from __future__ import annotations

import argparse
import logging

from hudi_assets.archive.archiver import HoodieTimelineArchiver
from hudi_assets.archive.selection import ArchiveSelection
from hudi_assets.cli.main import add_strict_argument, add_table_arguments, check_settings, open_table
from hudi_assets.config_options import ARCHIVE_OPTIONS, settings_epilog

log = logging.getLogger("hudi_assets.archive")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "archive", epilog=settings_epilog(ARCHIVE_OPTIONS),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_table_arguments(parser, config=True)
    parser.add_argument("--dry-run", action="store_true",
                        help="list what would be archived and why each fence stands where it does")
    add_strict_argument(parser)
    parser.set_defaults(func=run)


def _describe(selection: ArchiveSelection) -> None:
    keep = selection.keep
    print(f"keep: min={keep.min_commits} max={keep.max_commits} "
          f"(configured {keep.configured_min}/{keep.configured_max}{', ADJUSTED' if keep.adjusted else ''})")
    print(f"  {keep.reason}")
    for fence in selection.fences:
        where = "none" if fence.instant is None else (fence.instant or "everything")
        print(f"fence {fence.name}: {where} - {fence.reason}")
    for note in selection.notes:
        print(f"note: {note}")
    print(f"{len(selection.clean_rollback)} clean/rollback and {len(selection.commits)} commit instants "
          f"selected; {len(selection.instants)} after the metadata-table fence, "
          f"{len(selection.state_files)} state files")
    for instant in selection.instants:
        print(f"  archive {instant.timestamp} {instant.action}")


def run(args: argparse.Namespace) -> int:
    table = open_table(args)
    check_settings(table, args.strict)
    archiver = HoodieTimelineArchiver.for_table(table)
    if args.dry_run:
        _describe(archiver.dry_run().selection)
        return 0
    result = archiver.archive()
    _describe(result.selection)
    if result.merge_recovery:
        print(f"merge recovery: {result.merge_recovery}")
    if result.archive_file:
        print(f"archived {result.records_written} entries to {table.storage.uri(result.archive_file)}; "
              f"deleted {result.deleted} state files, {result.markers_removed} marker directories, "
              f"{result.aux_removed} plan copies in .hoodie/.aux in {result.seconds:.2f}s")
    if result.skipped:
        print(f"skipped {len(result.skipped)} unconvertible state files: {', '.join(result.skipped)}")
    if result.merged_file:
        print(f"merged small archive files into {result.merged_file}")
    return 0
