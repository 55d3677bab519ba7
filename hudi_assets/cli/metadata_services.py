"""The metadata table services' face of `hudi-assets metadata`: `--services` (what is due and what
blocks it) and `--compact`/`--clean`/`--archive`/`--run-services` (with `--dry-run`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hudi_assets.metadata_services.services import MetadataServices, ServicesResult
from hudi_assets.metadata_services.status import MetadataServicesStatus
from hudi_assets.table import HoodieTable


def run_services(table: HoodieTable, args: argparse.Namespace) -> int:
    services = MetadataServices(table)
    if args.services:
        status = services.status()
        _emit(status.to_dict(), args.json, lambda: print_status(status))
        return 0
    result = services.run(tuple(args.service), dry_run=args.dry_run, no_active_writer=args.no_active_writer)
    _emit(result_dict(result), args.json, lambda: print_result(result))
    return 0


def _emit(view: dict[str, Any], as_json: bool, text) -> None:
    if as_json:
        json.dump(view, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        text()


def result_dict(result: ServicesResult) -> dict[str, Any]:
    return {"dry_run": result.dry_run, "compacted": result.compacted, "cleaned": result.cleaned,
            "files_cleaned": result.files_cleaned, "instants_archived": result.archived,
            "before": result.before.to_dict(), "after": result.after.to_dict() if result.after else None}


def print_status(status: MetadataServicesStatus) -> None:
    print(f"metadata table services of {status.base_path}: {status.deltacommits_since_compaction} "
          f"deltacommits since the last compaction ({status.latest_compaction or 'none'}), "
          f"{status.log_files} log files, {status.log_bytes} bytes")
    for name in ("compaction", "clean", "archive"):
        service = getattr(status, name)
        verdict = "due" if service.due else "blocked" if service.blocked_by else "not due"
        at = f" at {service.instant}" if service.instant else ""
        print(f"  {name}: {verdict}{at}" + (f" ({service.detail})" if service.detail else ""))
        for blocker in service.blocked_by:
            print(f"    {name} blocked: {blocker.reason}")
    for group in status.file_groups:
        if group.log_files:
            print(f"  {group.partition}/{group.file_id}: {group.log_files} log files, "
                  f"{group.log_bytes} bytes")
    print("  retention: " + ", ".join(f"{k}={v}" for k, v in status.retention.items()))


def print_result(result: ServicesResult) -> None:
    if result.dry_run:
        print("dry run: nothing was changed")
        print_status(result.before)
        return
    after = result.after
    print(f"compacted: {', '.join(result.compacted) or 'nothing'}; cleaned: "
          f"{', '.join(result.cleaned) or 'nothing'} ({result.files_cleaned} files); archived "
          f"{result.archived} instants")
    if after is not None:
        print(f"log files {result.before.log_files} -> {after.log_files}, bytes {result.before.log_bytes} -> "
              f"{after.log_bytes}; deltacommits since compaction {after.deltacommits_since_compaction}")
