"""`hudi-assets savepoint create PATH INSTANT [--comment TEXT] [--user NAME]`, `savepoint list PATH
[--json]` and `savepoint delete PATH INSTANT`, as hudi-cli's `savepoint create`, `savepoints show` and
`savepoint delete` (table versions 6, 8 and 9).

Exit 2, nothing written, when INSTANT cannot be savepointed (not a completed commit of the active
timeline, before the earliest commit the last clean retained, savepointed already) or, for delete, is
no savepoint.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime

from hudi_assets.cli.main import add_table_arguments, open_table
from hudi_assets.savepoint import Savepointer, SavepointUsage
from hudi_assets.savepoint.service import DEFAULT_COMMENT, DEFAULT_USER


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("savepoint")
    actions = parser.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="savepoint a completed commit: keep its version readable")
    add_table_arguments(create, config=True)
    create.add_argument("instant", help="instant time of a completed commit/deltacommit/replacecommit")
    create.add_argument("--comment", default=DEFAULT_COMMENT, help="why (default: %(default)s)")
    create.add_argument("--user", default=DEFAULT_USER, help="who (default: %(default)s)")
    listing = actions.add_parser("list", help="every savepoint and the bytes it keeps alive")
    add_table_arguments(listing, config=True)
    listing.add_argument("--json", action="store_true", help="one JSON document instead of a table")
    delete = actions.add_parser("delete", help="remove a savepoint: the next clean may free its files")
    add_table_arguments(delete, config=True)
    delete.add_argument("instant", help="instant time of the savepoint")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    service = Savepointer(open_table(args))
    if args.action == "create":
        savepoint = service.create(args.instant, user=args.user, comment=args.comment)
        print(f"savepoint {savepoint.instant} created: {savepoint.file_count} files in "
              f"{len(savepoint.files)} partitions")
    elif args.action == "delete":
        service.delete(args.instant)
        print(f"savepoint {args.instant} deleted")
    else:
        usages = service.list()
        print(json.dumps([_as_json(u) for u in usages], indent=2) if args.json else _as_table(usages))
    return 0


def _as_json(usage: SavepointUsage) -> dict:
    savepoint = usage.savepoint
    return {"instant": savepoint.instant, "savepointed_by": savepoint.savepointed_by,
            "savepointed_at": savepoint.savepointed_at, "comments": savepoint.comments,
            "files": savepoint.file_count, "files_kept_alive": usage.files_kept_alive,
            "bytes_kept_alive": usage.bytes_kept_alive}


def _as_table(usages: list[SavepointUsage]) -> str:
    if not usages:
        return "no savepoints"
    lines = ["instant            savepointed by   savepointed at (UTC)  files  "
             "kept alive (files, bytes)  comment"]
    for usage in usages:
        s = usage.savepoint
        when = datetime.fromtimestamp(s.savepointed_at / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
        lines.append(f"{s.instant:<18} {s.savepointed_by:<16} {when:<21} {s.file_count:>5}  "
                     f"{usage.files_kept_alive:>6} {usage.bytes_kept_alive:>19}  {s.comments}")
    return "\n".join(lines)
