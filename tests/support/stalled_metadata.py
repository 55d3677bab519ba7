"""A demo MOR table whose metadata-table compaction stalled behind a failed data write, as Hudi 0.15's
writer leaves one (apache/hudi #8567, #11535): the writer compacts the metadata table every 10
deltacommits (its default `hoodie.metadata.compact.max.delta.commits`) and never cleans it, until a
write dies inflight; from then on every compaction is blocked by that instant
(`validateTimelineBeforeSchedulingCompaction`) while each later write adds a metadata deltacommit."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hudi_assets.demo import generate_table
from hudi_assets.demo.generator import _Generator, default_partition_values
from hudi_assets.metadata import MetadataTable
from hudi_assets.storage import Storage
from hudi_assets.table_config import MERGE_ON_READ
from hudi_assets.timeline.instant import DELTA_COMMIT

COMMITS_BEFORE_FAILURE = 27  # three metadata compactions; the third right before the write that dies


def uncleaned_metadata_table(root: Path) -> Path:
    """30 data commits and no failure: the writer compacted its metadata table every 10 deltacommits
    and never cleaned or archived it."""
    table = generate_table(Storage(str(root / "t")), "MERGE_ON_READ", commits=30, bloom_entries=100, seed=3,
                           metadata_table=True, pending_compaction=False, failed_write=False)
    return Path(table.base_path)


@dataclass(frozen=True)
class StalledTable:
    base: Path
    blocker: str  # the failed data write's instant
    compactions: list[str]  # the metadata table's completed compactions, oldest first


def stalled_metadata_table(root: Path, deltacommits_since_compaction: int = 35,
                           seed: int = 3) -> StalledTable:
    """A table at `root` whose metadata table has 3 compactions (so 3 superseded file slices per file
    group that the metadata table's clean is due to delete) and `deltacommits_since_compaction`
    deltacommits since the last, which a data write left inflight blocks."""
    start = datetime(2024, 1, 1, tzinfo=UTC)
    writer = _Generator(
        Storage(str(root)), MERGE_ON_READ, name="stalled",
        partition_values=default_partition_values(3, start, hive_style=False), partition_field="dt",
        hive_style=False, commits=COMMITS_BEFORE_FAILURE, start_time=start,
        interval=timedelta(minutes=1), seed=seed, fast=False, files_per_partition=2, records_per_file=4,
        update_fraction=0.3, bloom_entries=100, savepoint=False, insert_overwrite=True,
        pending_compaction=False, failed_write=True, metadata_table=True)
    demo = writer.run()
    metadata = MetadataTable(str(root))
    piled = len(metadata.deltacommits_since(metadata.latest_compaction()))  # 0: the failed write compacted
    first = COMMITS_BEFORE_FAILURE
    for index in range(first, first - piled + deltacommits_since_compaction):
        commit = writer._begin(DELTA_COMMIT, "UPSERT")
        writer._write_commit(commit, writer._plan_upsert(index, None))
    assert demo.failed_instant is not None
    compactions = MetadataTable(str(root)).timeline.filter_actions({"commit"}).filter_completed().timestamps
    return StalledTable(Path(root), demo.failed_instant, list(compactions))
