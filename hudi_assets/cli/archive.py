"""`hudi-assets archive PATH [--dry-run] [--props FILE] [--hoodie-conf k=v ...]`."""

from __future__ import annotations

import argparse
import logging

from hudi_assets.archive.archiver import HoodieTimelineArchiver
from hudi_assets.archive.lsm_writer import TARGET_FILE_MAX_BYTES, LayerSummary
from hudi_assets.archive.selection import ArchiveSelection
from hudi_assets.cli.main import (
    add_settings_parser,
    add_strict_argument,
    add_table_arguments,
    check_settings,
    open_table,
)
from hudi_assets.config_options import ARCHIVE_OPTIONS, METRICS_OPTIONS

log = logging.getLogger("hudi_assets.archive")


def add_parser(subparsers) -> None:
    parser = add_settings_parser(subparsers, "archive", (*ARCHIVE_OPTIONS, *METRICS_OPTIONS))
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


def _describe_layers(layers: list[LayerSummary], target_bytes: int) -> None:
    """The LSM history of a Hudi 1.x table, layer by layer, and a compaction an oversized file blocks."""
    for layer in layers:
        print(f"history layer {layer.layer}: {layer.files} files, {layer.instants} instants, "
              f"{layer.size_bytes} bytes")
        if layer.blocked_by:
            print(f"  compaction of layer {layer.layer} is blocked: {layer.blocked_by} is its oldest file "
                  f"and bigger than the {target_bytes}-byte target, and Hudi 1.0/1.1 compact a layer "
                  "from its oldest file (apache/hudi #17783). The history stays correct, but this layer "
                  "gains a file per archival; Hudi releases with apache/hudi PR #17784 skip such a file "
                  "and compact the rest")


def run(args: argparse.Namespace) -> int:
    table = open_table(args)
    check_settings(table, args.strict)
    archiver = HoodieTimelineArchiver.for_table(table)
    if args.dry_run:
        result = archiver.dry_run()
        _describe(result.selection)
        _describe_layers(result.layers, TARGET_FILE_MAX_BYTES)
        return 0
    result = archiver.archive()
    _describe(result.selection)
    if result.merge_recovery:
        print(f"merge recovery: {result.merge_recovery}")
    if result.archive_file:
        print(f"archived {result.records_written} entries to {table.storage.uri(result.archive_file)}; "
              f"deleted {result.deleted} state files, {result.markers_removed} marker directories, "
              f"{result.aux_removed} plan copies in .hoodie/.aux in {result.seconds:.2f}s")
    if result.archived_before:
        print(f"{result.archived_before} selected instants were in the history already (a crashed run's): "
              f"their state files were deleted")
    if result.compaction:
        for name, sources in result.compaction.merged.items():
            print(f"compacted {len(sources)} history files into {name}")
        if result.compaction.cleaned:
            print(f"cleaned {len(result.compaction.cleaned)} files of old history snapshots")
    if result.skipped:
        print(f"skipped {len(result.skipped)} unconvertible state files: {', '.join(result.skipped)}")
    if result.merged_file and result.compaction is None:
        print(f"merged small archive files into {result.merged_file}")
    return 0
