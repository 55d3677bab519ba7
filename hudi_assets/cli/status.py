"""`hudi-assets status PATH [--json]`: what the table services are doing, whether each is due and
why not, the compaction backlog, file sizes and the metadata table (`hudi_assets.status`)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

from hudi_assets.cli.main import add_settings_parser, add_table_arguments, open_table
from hudi_assets.config_options import STATUS_OPTIONS

WIDTH = 100


def add_parser(subparsers) -> None:
    parser = add_settings_parser(subparsers, "status", STATUS_OPTIONS)
    add_table_arguments(parser, config=True)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_assets.status import table_status

    report = table_status(open_table(args)).to_dict()
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print("\n".join(text_lines(report)))
    return 0


def _wrapped(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=" " * (len(indent) + 2),
                         break_long_words=True, break_on_hyphens=False)


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def _service(name: str, view: dict[str, Any]) -> list[str]:
    verdict = "unknown" if view["due"] is None else "due" if view["due"] else "not due"
    if view["blocked"]:
        verdict += f", blocked since {view['blocked_since']}"
    lines = [f"{name}: {verdict}"]
    for reason in view["reasons"]:
        lines += _wrapped(reason, "  - ")
    return lines


def text_lines(report: dict[str, Any]) -> list[str]:
    """The report for a terminal, no line longer than 100 columns."""
    table, timeline = report["table"], report["timeline"]
    lines = [f"{table['name']} ({table['table_type']}, table version {table['table_version']}) at "
             f"{table['base_path']}"]
    lines.append(f"timeline: {timeline['active_instants']} active, {timeline['archived_instants']} archived "
                 f"instants; latest {timeline['latest_instant']}")
    for what, last in timeline["last"].items():
        if last:
            lines.append(f"  last {what}: {last.get('instant') or last.get('file')}, "
                         f"{_age(last['age_seconds'])} ago")
    for row in report["pending"]:
        lines.append(f"  pending {row['action']} {row['instant']} {row['state'].lower()}, "
                     f"{_age(row['age_seconds'])} old, heartbeat {row['heartbeat']}")
    lines += _service("clean", report["clean"]) + _service("archive", report["archive"])
    files = report["files"]
    sizes = files["base_file_size"]
    lines.append(f"files: {files['file_groups']} file groups in {files['partitions']} partitions, "
                 f"{files['base_bytes']} bytes; base file size p10/p50/p90/max "
                 f"{sizes['p10']}/{sizes['p50']}/{sizes['p90']}/{sizes['max']}")
    lines.append(f"  {files['small_files']} small files (< {files['small_file_limit']} bytes)"
                 + (" in " + ", ".join(f"{p['partition']}: {p['small_files']}"
                                       for p in files["small_files_by_partition"][:3]) if files["small_files"]
                    else ""))
    lines[-1:] = _wrapped(lines[-1], "")
    backlog = report["compaction_backlog"]
    if backlog is not None:
        per = backlog["log_files_per_file_group"]
        lines.append(f"compaction backlog: {backlog['log_files']} log files, {backlog['log_bytes']} bytes in "
                     f"{backlog['file_groups_with_logs']} file groups (per group p50 {per['p50']}, "
                     f"max {per['max']})")
        lines.append(f"  {backlog['deltacommits_since_compaction']} deltacommits since the last compaction "
                     f"({backlog['last_compaction'] or 'none'}); pending compactions: "
                     f"{', '.join(backlog['pending_compactions']) or 'none'}")
    metadata = report["metadata_table"]
    if metadata is not None:
        if "error" in metadata:
            lines.append(f"metadata table: {metadata['error']}")
        else:
            lines.append(f"metadata table: latest deltacommit {metadata['latest_deltacommit']}, "
                         f"{metadata['data_instants_behind']} data instants behind, "
                         f"{metadata['deltacommits_since_compaction']} deltacommits since compaction")
            for name, view in metadata["services"].items():
                lines += ["  " + line for line in _service(f"metadata {name}", view)]
    return [wrapped for line in lines for wrapped in
            (_wrapped(line.lstrip(), line[:len(line) - len(line.lstrip())]) if len(line) > WIDTH else [line])]
