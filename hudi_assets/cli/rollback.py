"""`hudi-assets rollback PATH INSTANT [--force] [--dry-run] [--props FILE] [--hoodie-conf k=v ...]`
and `hudi-assets rollback PATH --discard-pending ROLLBACK_INSTANT`.

Rolls back one failed write as Hudi 0.15 does (a pending rollback of it is resumed). Exit 2, with
nothing written, when INSTANT is not a pending commit, deltacommit or non-clustering replacecommit,
or when its writer's heartbeat is live (`--force` overrides that one check: a write without a
heartbeat, as EAGER writers leave, counts as failed, so an explicit request is trusted).
"""

from __future__ import annotations

import argparse

from hudi_assets.cli.main import add_table_arguments, open_table
from hudi_assets.exceptions import HudiInputError
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.rollback.rollbacker import Rollbacker


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("rollback")
    add_table_arguments(parser, config=True)
    parser.add_argument("instant", nargs="?",
                        help="instant time of the pending commit/deltacommit/replacecommit")
    parser.add_argument("--discard-pending", metavar="ROLLBACK_INSTANT",
                        help="remove a pending rollback (refused or stuck) from the timeline, keeping its "
                             "state files in .hoodie/.aux/hudi-assets/discarded/; only while the write it "
                             "rolls back is still pending")
    parser.add_argument("--force", action="store_true",
                        help="roll back even though the write's heartbeat is live (its writer must be gone)")
    parser.add_argument("--dry-run", action="store_true", help="print the rollback plan; write nothing")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    table = open_table(args)
    rollbacker = Rollbacker(table, metadata=MetadataTableSink(table))
    if args.discard_pending:
        if args.instant:
            raise HudiInputError(f"{table.base_path}: give either INSTANT or --discard-pending "
                                 "ROLLBACK_INSTANT, not both")
        for copy in rollbacker.discard_pending(args.discard_pending):
            print(f"discarded: state file kept as {copy}")
        return 0
    if not args.instant:
        raise HudiInputError(f"{table.base_path}: INSTANT (the pending write to roll back) is required")
    if args.dry_run:
        plan = rollbacker.dry_run(args.instant).plan
        if plan is None:
            print(f"{args.instant} is not a pending write: nothing to roll back")
            return 0
        print(f"rollback of {plan.action} {plan.instant_time}: {len(plan.requests)} requests")
        for request in plan.requests:
            for path in request.files_to_delete:
                print(f"  delete {path}")
            for path in request.log_blocks_to_delete:
                print(f"  rollback block for {path} (file group {request.file_id})")
        return 0
    for done in rollbacker.rollback(args.instant, force=args.force).executed:
        print(f"rolled back {done.action} {done.instant_time} at {done.rollback_instant}: "
              f"{done.files_deleted} files deleted, {done.rollback_log_files} rollback log files written")
    return 0
