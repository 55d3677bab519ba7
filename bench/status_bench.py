"""`hudi-assets status --json` vs `hudi-assets clean --dry-run --json --engine local` (whole processes,
interleaved, medians) on the 1,000-partition, 1,000,000-file table of `clean_plan_bench.py`
(commits.retained=2): the status lists the table once, as the dry run does, and decides the plan in
the same partition tasks, so it should stay within 1.2x of the dry run. Checks that both count the
same files to delete.

    .venv/bin/python bench/status_bench.py [--runs 3] [--partitions 1000] [--table PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchlib import interleaved, scandir_walk
from clean_plan_bench import CLI, RETAINED, dry_run, table_path


def status(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "status", str(path), "--json", *RETAINED], check=True, capture_output=True,
                          text=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--table", type=Path, help="an already built table (default: built under bench/out)")
    args = parser.parse_args()
    path = args.table or table_path(args.partitions)
    scandir_walk(str(path), stat=True)  # warm the page cache before anything is measured
    planned, reported = interleaved("status vs dry run", 1.2, args.runs,
                                    ("dry run", lambda: dry_run(path, "--json")),
                                    ("status", lambda: status(path)))
    files = json.loads(planned.stdout)["totals"]["files"]
    clean = json.loads(reported.stdout)["clean"]
    assert clean["files_to_delete"] == files, f"status counts {clean['files_to_delete']}, the plan {files}"
    print(f"both count {files} files to delete")


if __name__ == "__main__":
    sys.exit(main())
