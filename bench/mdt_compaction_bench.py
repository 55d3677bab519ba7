"""Benchmark: compact a metadata table whose `files` partition lists N files (default 1,000,000) and
whose `column_stats` holds one record per file, against the floor of the same work: reading the
same records (HFile base + log blocks, merged) and writing them once as HFiles. Target: <= 2x.

The data table is a small fast-mode demo table (its completed commits make the metadata blocks
valid); the metadata table is initialized from it, then `--commits` deltacommits (at the data
table's commit times) each add N / commits files spread over `--partitions` partitions, with a
column-stats record per file, so the compaction merges a base file and one log per deltacommit.

    .venv/bin/python bench/mdt_compaction_bench.py [--files 1000000] [--partitions 1000] [--commits 5]

Prints records/s of both, the ratio and the peak resident memory of the process.
"""

from __future__ import annotations

import argparse
import resource
import shutil
from pathlib import Path

from benchlib import timed

from hudi_assets.demo import generate_table
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.compaction import (
    base_file_bytes,
    compaction_due,
    execute_compaction,
    merged_records,
    schedule_compaction,
)
from hudi_assets.metadata.initializer import initialize_from_filesystem
from hudi_assets.metadata.keys import COLUMN_STATS
from hudi_assets.metadata.payloads import (
    ColumnRange,
    column_stats_record,
    partition_files_record,
    partition_list_record,
    wrap,
)
from hudi_assets.metadata.writer import MetadataTableWriter
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

ROOT = Path(__file__).resolve().parent


def build(path: Path, files: int, partitions: int, commits: int) -> None:
    if path.exists():
        shutil.rmtree(path)
    demo = generate_table(Storage(str(path)), "COPY_ON_WRITE", name="bench", partitions=1, commits=commits,
                          files_per_partition=1, fast=True, savepoint=False, insert_overwrite=False,
                          failed_write=False)
    for data_file in path.rglob("*.parquet"):
        data_file.write_bytes(b"x")
    initialize_from_filesystem(HoodieTable(str(path)), {COLUMN_STATS: []})
    table = HoodieTable(str(path))
    times = [i.timestamp for i in table.active_timeline.filter_completed().commits_timeline()][-commits:]
    names = [f"p{p:04d}" for p in range(partitions)]
    per_commit = files // commits
    writer = MetadataTableWriter(table)
    for c, instant in enumerate(times):
        records = [partition_list_record(names)]
        first = c * per_commit
        for p, partition in enumerate(names):
            chunk = range(first + p, first + per_commit, partitions)
            added = {f"f{i:08d}_0-0-0_{instant}.parquet": 1000 + i for i in chunk}
            records.append(partition_files_record(partition, added))
            value = ColumnRange("id", wrap("LongWrapper", 0), wrap("LongWrapper", 99), 0, 100, 800, 900)
            records += [column_stats_record(partition, name, value) for name in added]
        writer.commit(instant, records)
    print(f"built {demo.base_path}: {files} files in {partitions} partitions, {commits} deltacommits",
          flush=True)


def floor(metadata: MetadataTable) -> int:
    """Read every planned slice's records merged and write them once, in memory."""
    count = 0
    for partition in metadata.partitions:
        for file_slice in metadata.file_slices(partition):
            if file_slice.log_files:
                records, schema = merged_records(metadata.storage, file_slice, metadata.block_filter)
                base_file_bytes(records, schema, f"{file_slice.file_id}_0-0-0_0.hfile")
                count += len(records)
    return count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=5)
    args = parser.parse_args()
    path = ROOT / "out" / f"mdt_compaction_{args.files}"
    elapsed, _ = timed(lambda: build(path, args.files, args.partitions, args.commits))
    print(f"built in {elapsed:.1f} s", flush=True)
    metadata = MetadataTable(str(path))
    floor(metadata)  # warm the page cache and the decoders: both runs below read warm files
    base_seconds, records = timed(lambda: floor(metadata))
    instant = compaction_due(metadata, max_delta_commits=1)
    schedule_compaction(metadata, instant)
    seconds, _ = timed(lambda: execute_compaction(MetadataTable(str(path)), instant))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"records merged: {records}")
    print(f"read + write once: {base_seconds:.1f} s ({records / base_seconds:,.0f} records/s)")
    print(f"compaction:        {seconds:.1f} s ({records / seconds:,.0f} records/s)")
    print(f"ratio {seconds / base_seconds:.2f} (target <= 2.00); peak memory {peak_mb:,.0f} MB")


if __name__ == "__main__":
    main()
