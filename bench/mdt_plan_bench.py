"""Benchmark: plan a clean from the metadata table vs from a listing of storage, on a 100-partition,
100,000-file COW table (100 file groups x 10 slices per partition; commits.retained=2, a full plan).

Medians of interleaved in-process runs, each beside its floor measured in the same run (a plain
`os.scandir` walk of the table: the floor of any listing), with the machine's load. Both plans must
decide the same files (digest of the sorted plan). Also counts the directory listings of data
partitions each plan makes: on an object store each is a LIST request, which planning from the
metadata table replaces.

    .venv/bin/python bench/mdt_plan_bench.py [--partitions 100] [--groups 100] [--runs 5]

The table is written once by the demo generator's fast mode (data files of one byte), its metadata
table initialized from storage (the `files` partition), into bench/out/ and reused.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
from pathlib import Path

from benchlib import build_table, cpu_timed, load, plan_digest, scandir_walk, timed

from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.clean.config import CleanConfig
from hudi_assets.config import WriteConfig
from hudi_assets.engine import LocalEngine
from hudi_assets.metadata.initializer import initialize_from_filesystem
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

ROOT = Path(__file__).resolve().parent
# "metadata" / "listing" -> data-partition directories listed, in shared memory: the local engine's
# forked workers list partitions too, and a counter of their own would be lost with them.
LISTED = {name: multiprocessing.Value("q", 0) for name in ("metadata", "listing")}


def _count_listings(source: list[str]) -> None:
    """Count the listings of data partitions (not of .hoodie) made while `source[0]` plans, in this
    process and in the workers it forks."""
    original = Storage.list_directory

    def counting(self: Storage, rel: str = "", skip_undecodable: bool = False):
        if not rel.startswith(".hoodie"):
            counter = LISTED[source[0]]
            with counter.get_lock():
                counter.value += 1
        return original(self, rel, skip_undecodable)

    Storage.list_directory = counting


def table_path(partitions: int, groups: int) -> Path:
    path = ROOT / "out" / f"mdt_table_{partitions}x{groups}"
    build_table(path, partitions, groups, commits=10)
    if not (path / ".hoodie" / "metadata").exists():
        # The fast mode writes empty data files, which a metadata table never lists: one byte each.
        for data_file in path.rglob("*.parquet"):
            data_file.write_bytes(b"x")
        elapsed, _ = timed(lambda: initialize_from_filesystem(HoodieTable(str(path)), {}))
        print(f"metadata table initialized in {elapsed:.1f} s", flush=True)
    return path


def plan(path: Path, metadata: bool) -> tuple[str, int]:
    """(digest of the decisions, files to delete) of the full plan, from the metadata table or from
    listing. Files and partitions are sorted first: Hudi's own order of file groups sharing a bucket
    of the view's HashSet follows the listing's order, which differs between the two sources."""
    table = HoodieTable(str(path))
    conf = ["hoodie.cleaner.commits.retained=2", f"hoodie.metadata.enable={str(metadata).lower()}"]
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, conf))
    cleaner = Cleaner(table, config, LocalEngine())
    result = cleaner.plan()
    assert (cleaner.planner.metadata is not None) == metadata
    ectr = result.earliest_instant_to_retain
    digest = plan_digest({
        "policy": result.policy, "ectr": ectr.timestamp if ectr else None,
        "last_completed_commit": result.last_completed_commit_timestamp,
        "partitions": [{"partition": p, "files": [{"path": f} for f in sorted(f.file_path for f in files)]}
                       for p, files in sorted(result.file_paths_to_delete.items())],
        "partitions_to_delete": sorted(result.partitions_to_delete),
    })
    return digest, result.total_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--groups", type=int, default=100, help="file groups per partition")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    path = table_path(args.partitions, args.groups)
    source = [""]
    _count_listings(source)
    scandir_walk(str(path), stat=False)  # warm the page cache before anything is measured
    times: dict[str, list[float]] = {"metadata": [], "listing": [], "floor": []}
    cpu: dict[str, list[float]] = {"metadata": [], "listing": []}
    digests = set()
    for run in range(args.runs):
        floor, files = timed(lambda: scandir_walk(str(path), stat=False))
        times["floor"].append(floor)
        line = [f"run {run + 1}: {files} files, scandir walk {floor:.2f} s"]
        for name in ("metadata", "listing"):
            source[0] = name
            elapsed, used, (digest, planned) = cpu_timed(lambda n=name: plan(path, n == "metadata"))
            times[name].append(elapsed)
            cpu[name].append(used)
            digests.add(digest)
            line.append(f"from {name} {elapsed:.2f} s wall, {used:.2f} s CPU ({planned} files)")
        print(", ".join(line), flush=True)
    assert len(digests) == 1, f"the plans differ: {digests}"
    mdt, listing, floor = (statistics.median(times[k]) for k in ("metadata", "listing", "floor"))
    mdt_cpu, listing_cpu = (statistics.median(cpu[k]) for k in ("metadata", "listing"))
    per_run = {k: v.value // args.runs for k, v in LISTED.items()}
    print(f"median: plan from the metadata table {mdt:.2f} s ({mdt_cpu:.2f} s CPU), from listing "
          f"{listing:.2f} s ({listing_cpu:.2f} s CPU): ratio {mdt / listing:.2f} wall, "
          f"{mdt_cpu / listing_cpu:.2f} CPU; floor (scandir walk) {floor:.2f} s; data-partition "
          f"listings per plan: metadata {per_run.get('metadata', 0)}, listing {per_run.get('listing', 0)}; "
          f"plan digest {digests.pop()[:16]}; {load()}")


if __name__ == "__main__":
    main()
