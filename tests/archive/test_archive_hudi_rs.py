"""After archiving, an independent reader (hudi-rs) sees the same table as before."""

from __future__ import annotations

import pytest
from hudi import HudiTable

from hudi_assets.archive.archiver import HoodieTimelineArchiver
from hudi_assets.archive.config import ArchiveConfig
from hudi_assets.clean.config import CleanConfig
from hudi_assets.demo import generate_table
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.archived import ArchivedTimeline


def _snapshot(base: str) -> tuple[dict, set]:
    table = HudiTable(base)
    batches = table.read()  # latest snapshot, logs merged
    rows = {}
    for batch in batches:
        for row in batch.to_pylist():
            rows[row["_hoodie_record_key"]] = (row["_hoodie_commit_time"], row["fare"])
    slices = {(s.partition_path, s.file_id, s.base_file_name, tuple(sorted(s.log_file_names)))
              for s in table.get_file_slices()}
    return rows, slices


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_archived_table_reads_the_same(tmp_path, table_type):
    storage = Storage(str(tmp_path / "t"))
    generate_table(storage, table_type, partitions=2, commits=14, seed=11)
    before = _snapshot(storage.base_uri)
    table = HoodieTable(storage)
    config = ArchiveConfig(min_commits=3, max_commits=4, cleaner=CleanConfig(commits_retained=2))
    result = HoodieTimelineArchiver(table, config).archive()
    assert result.records_written > 0
    after_table = HoodieTable(storage)
    archived = ArchivedTimeline.load(after_table).instants()
    assert len(archived) > 0
    assert not set(archived.timestamps) & {i.timestamp for i in after_table.active_timeline
                                           if i.action != "savepoint"}
    assert _snapshot(storage.base_uri) == before
