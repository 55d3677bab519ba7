"""`hudi-assets metadata PATH [--json] [--validate | --services | --compact | --clean | --archive |
--run-services]`: a table's metadata table.

Without an action, read-only: the metadata partitions with the latest merged file slice of each file
group, the latest metadata compaction and the deltacommits since, and per data partition what the
`files` partition lists. `--validate` compares that listing with storage: exit 0 consistent, 1 drift
(each difference named), 2 bad input or no metadata table; orphans (data files no completed write
lists, which the metadata table rightly leaves out) are named too, and are no drift. `--services`
says for each of the metadata table's services whether it is due and what blocks it; `--compact`,
`--clean`, `--archive` run one, `--run-services` all three in Hudi's order (each with `--dry-run`;
table version 6 metadata tables), only under a lock provider shared with the writers or with
`--no-active-writer`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hudi_assets.cli.main import add_settings_parser, add_table_arguments, open_table, parse_storage_options
from hudi_assets.cli.metadata_services import run_services
from hudi_assets.config_options import METADATA_SERVICES_OPTIONS
from hudi_assets.metadata.file_group import DataFile, MetadataFileSlice
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.metadata.validate import validate
from hudi_assets.metadata_services.services import SERVICES


def add_parser(subparsers) -> None:
    parser = add_settings_parser(subparsers, "metadata", METADATA_SERVICES_OPTIONS)
    add_table_arguments(parser, config=True)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--validate", action="store_true",
                        help="compare the files listing with storage: exit 1 on any difference")
    action.add_argument("--services", action="store_true",
                        help="for compaction, clean and archive of the metadata table: due or not, and "
                             "what blocks it")
    for flag, service in (("--compact", "compaction"), ("--clean", "clean"), ("--archive", "archive")):
        action.add_argument(flag, dest="service", action="append_const", const=service,
                            help=f"run the metadata table's {service} as its writer would")
    action.add_argument("--run-services", dest="service", action="store_const", const=list(SERVICES),
                        help="finish a pending compaction, then clean, compact and archive the metadata "
                             "table, in Hudi's order (under LAZY, failed data writes are rolled back first)")
    parser.add_argument("--dry-run", action="store_true", help="with a service: say what it would do")
    parser.add_argument("--no-active-writer", action="store_true",
                        help="state that no writer is running (checked: no pending data instant and none "
                             "completed in the last hour); needed unless a lock provider is configured")
    parser.set_defaults(func=run, service=None)


def run(args: argparse.Namespace) -> int:
    if args.services or args.service:
        return run_services(open_table(args), args)
    metadata = MetadataTable(args.path, parse_storage_options(args.storage_option))
    if args.validate:
        return _report_validation(metadata, args.json)
    view = describe(metadata)
    if args.json:
        json.dump(view, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_view(view)
    return 0


def describe(metadata: MetadataTable) -> dict[str, Any]:
    """The metadata table as one JSON-ready object."""
    compaction = metadata.latest_compaction()
    return {
        "base_path": metadata.data_storage.base_uri,
        "table_version": metadata.data_config.table_version,
        "metadata_table_version": metadata.config.table_version,
        "metadata_partitions": [
            {"partition": partition, "file_groups": [_file_group(s) for s in metadata.file_slices(partition)]}
            for partition in metadata.partitions
        ],
        "latest_compaction": compaction.timestamp if compaction else None,
        "deltacommits_since": [i.timestamp for i in metadata.deltacommits_since(compaction)],
        "files": metadata.files_listing.partitions,
    }


def _file_group(file_slice: MetadataFileSlice) -> dict[str, Any]:
    return {"file_id": file_slice.file_id,
            "base_file": _file(file_slice.base_file) if file_slice.base_file else None,
            "log_files": [_file(f) for f in file_slice.log_files]}


def _file(file: DataFile) -> dict[str, Any]:
    return {"name": file.name, "size": file.size}


def _print_view(view: dict[str, Any]) -> None:
    print(f"metadata table of {view['base_path']} (table version {view['table_version']}, "
          f"metadata table version {view['metadata_table_version']})")
    for partition in view["metadata_partitions"]:
        groups = partition["file_groups"]
        print(f"  {partition['partition']}: {len(groups)} file groups")
        for group in groups:
            base = group["base_file"]
            base_text = f"base {base['name']} ({base['size']} bytes)" if base else "no base file"
            print(f"    {group['file_id']}: {base_text}, {len(group['log_files'])} log files")
            for log_file in group["log_files"]:
                print(f"      {log_file['name']} ({log_file['size']} bytes)")
    since = view["deltacommits_since"]
    print(f"latest compaction: {view['latest_compaction'] or 'none'}; {len(since)} deltacommits since"
          + (f" ({', '.join(since)})" if since else ""))
    files = view["files"]
    print(f"data partitions listed: {len(files)}")
    for partition, listed in files.items():
        print(f"  {partition or '(non-partitioned)'}: {len(listed)} files, {sum(listed.values())} bytes")


def _report_validation(metadata: MetadataTable, as_json: bool) -> int:
    validation = validate(metadata)
    differences = validation.differences
    listed = metadata.files_listing.total_files
    if as_json:
        json.dump({"base_path": metadata.data_storage.base_uri, "files_listed": listed,
                   "consistent": not differences,
                   **{key: [{"partition": d.partition, "file": d.file, "problem": d.problem} for d in found]
                      for key, found in (("differences", differences), ("orphans", validation.orphans))}},
                  sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for difference in differences:
            print(f"drift: {difference}")
        for orphan in validation.orphans:
            print(f"orphan: {orphan}")
        verdict = f"{len(differences)} differences" if differences else "consistent"
        print(f"{listed} files listed by the metadata table of {metadata.data_storage.base_uri}: {verdict}")
    return 1 if differences else 0
