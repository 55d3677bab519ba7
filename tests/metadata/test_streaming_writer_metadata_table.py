"""The live writer (`hudi_assets.demo.streaming`) keeping a metadata table: every completed commit (and
MOR inline compaction) is in the `files` listing, and it compacts the metadata table after
`hoodie.metadata.compact.max.delta.commits` deltacommits, as its settings say."""

from __future__ import annotations

import pytest

from hudi_assets.demo.streaming import COMPLETED, StreamingSettings, StreamingWriter
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.validate import validate_files
from hudi_assets.storage import Storage
from hudi_assets.table_config import COPY_ON_WRITE, MERGE_ON_READ
from hudi_assets.timeline.instant import COMMIT, DELTA_COMMIT


@pytest.mark.parametrize("table_type", [COPY_ON_WRITE, MERGE_ON_READ])
def test_the_live_writer_keeps_and_compacts_its_metadata_table(tmp_path, table_type):
    writer = StreamingWriter(Storage(str(tmp_path / "t")), table_type,
                             StreamingSettings(crash_rate=0.0, compact_every=5, seed=4),
                             commit_log=str(tmp_path / "commits.jsonl"), metadata_table=True,
                             hoodie_conf={"hoodie.metadata.compact.max.delta.commits": "4"})
    writer.open()
    assert [writer.commit_once() for _ in range(14)] == [COMPLETED] * 14

    metadata = MetadataTable(str(tmp_path / "t"))
    assert validate_files(metadata) == []
    completed = metadata.data_timeline.commits_timeline().filter_completed().timestamps
    assert set(completed) <= set(metadata.timeline.filter_completed().timestamps)  # one deltacommit each
    # Compacted once 4 deltacommits had piled up since the last compaction (or the start), before the
    # next write's (on MOR an inline data compaction adds a fifth: it writes without the check).
    since = 0
    for instant in metadata.timeline.filter_completed().filter_actions({COMMIT, DELTA_COMMIT}):
        if instant.action == COMMIT:
            assert since == 4 or (since == 5 and table_type == MERGE_ON_READ), instant
            since = 0
        else:
            since += 1
    assert since < 4 and metadata.latest_compaction() is not None
