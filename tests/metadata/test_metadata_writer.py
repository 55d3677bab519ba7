"""Writing the metadata table: initialization from storage and deltacommits, read back with our
reader (itself proven on Java-written metadata tables) and validated against storage."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.builders import TableBuilder, base_file, log_file

from hudi_assets.cli import main
from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.hfile import HFileReader
from hudi_assets.logformat import BlockType, HeaderKey, read_blocks
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.initializer import initialize_from_filesystem
from hudi_assets.metadata.keys import column_stats_key, file_group_index
from hudi_assets.metadata.payloads import (
    ColumnRange,
    column_stats_delete_record,
    column_stats_record,
    partition_files_record,
    partition_list_record,
    wrap,
)
from hudi_assets.metadata.validate import validate_files
from hudi_assets.metadata.writer import MetadataTableWriter
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.timeline import ActiveTimeline

T1, T2, T3 = "20240101000000000", "20240101000001000", "20240101000002000"


def _builder(root: Path, table_type: str = "MERGE_ON_READ", partitioned: bool = True) -> TableBuilder:
    b = TableBuilder(root, table_type, partitioned=partitioned)
    partition = "p1" if partitioned else ""
    b.commit(T1, {partition: [base_file("a", T1), base_file("b", T1)]})
    if table_type == "MERGE_ON_READ":
        b.commit(T2, {partition: [log_file("a", T1)]})
    else:
        b.commit(T2, {partition: [base_file("a", T2)]})
    return b


def _mdt_instants(root: Path) -> list[str]:
    timeline = ActiveTimeline.load(HoodieTable(str(root / ".hoodie/metadata")).storage)
    return [f"{i.timestamp}.{i.action}.{i.state.name.lower()}" for i in timeline]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("partitioned", [True, False])
def test_initialize_lists_every_data_file_and_validates(tmp_path, capsys, table_type, partitioned):
    table = _builder(tmp_path, table_type, partitioned).table()
    assert initialize_from_filesystem(table) == {"files": f"{T2}010"}
    assert HoodieTable(str(tmp_path)).config.metadata_partitions == ["files"]
    assert HoodieTable(str(tmp_path)).config.props["hoodie.table.metadata.partitions.inflight"] == ""
    partition = "p1" if partitioned else ""
    expected = {base_file("a", T1), base_file("b", T1),
                log_file("a", T1) if table_type == "MERGE_ON_READ" else base_file("a", T2)}
    assert set(MetadataTable(str(tmp_path)).files_listing.partitions[partition]) == expected
    assert main(["metadata", str(tmp_path), "--validate"]) == 0
    capsys.readouterr()
    mdt = tmp_path / ".hoodie/metadata"
    assert (mdt / "files/.files-0000-0_20240101000001000010.log.1_0-0-0").is_file()
    props = (mdt / ".hoodie/hoodie.properties").read_text()
    assert "hoodie.table.base.file.format=HFILE" in props and "hoodie.table.version=6" in props
    assert _mdt_instants(tmp_path) == [f"{T2}010.deltacommit.completed"]
    assert not (mdt / ".hoodie/.temp" / f"{T2}010").exists()


def test_initialize_refuses_a_table_that_has_one(tmp_path):
    initialize_from_filesystem(_builder(tmp_path).table())
    with pytest.raises(HudiAssetsError, match="already has a metadata table"):
        initialize_from_filesystem(HoodieTable(str(tmp_path)))


def test_deltacommit_of_deletes_and_a_retry_rolls_back_first(tmp_path):
    b = _builder(tmp_path)
    initialize_from_filesystem(b.table())
    writer = MetadataTableWriter(HoodieTable(str(tmp_path)))
    records = [partition_files_record("p1", deleted=[base_file("b", T1)])]
    written = writer.commit(T3, records)
    (stat,) = written.partition_to_write_stats["files"]
    assert stat.fields["logFiles"] == [".files-0000-0_20240101000001000010.log.2_1-0-1"]
    assert stat.fields["baseFile"] == "files-0000-0_0-0-0_20240101000001000010.hfile"
    assert stat.prev_commit == f"{T2}010"
    # The data instant has not completed: readers do not see the block yet.
    assert base_file("b", T1) in MetadataTable(str(tmp_path)).files_listing.partitions["p1"]
    b.clean(T3, T1)
    assert base_file("b", T1) not in MetadataTable(str(tmp_path)).files_listing.partitions["p1"]
    # Retried at the same time (a run killed before its data instant completed): rolled back, re-applied.
    writer.commit(T3, records)
    instants = _mdt_instants(tmp_path)
    assert instants[-2:] == [f"{T3}.deltacommit.completed", instants[-1]]
    assert instants[-1].endswith(".rollback.completed")
    names = sorted(p.name for p in (tmp_path / ".hoodie/metadata/files").glob(".files-*"))
    assert names[-3:] == [f".files-0000-0_{T2}010.log.{v}_1-0-1" for v in (2, 3, 4)]
    folder = tmp_path / ".hoodie/metadata/files"
    blocks = [block for n in names[-3:] for block in read_blocks((folder / n).read_bytes(), n)]
    assert [b.block_type for b in blocks] == [BlockType.HFILE_DATA, BlockType.COMMAND, BlockType.HFILE_DATA]
    assert blocks[1].header[HeaderKey.TARGET_INSTANT_TIME] == T3
    listing = MetadataTable(str(tmp_path)).files_listing.partitions["p1"]
    assert base_file("b", T1) not in listing and base_file("a", T1) in listing


def test_records_go_to_the_file_group_of_their_key(tmp_path):
    table = _builder(tmp_path).table()
    names = [base_file("a", T1), base_file("b", T1), base_file("a", T2)]
    seeded = [column_stats_record("p1", n, ColumnRange(c, wrap("LongWrapper", 1), wrap("LongWrapper", 2),
                                                       0, 1, 9, 9))
              for n in names for c in ("id", "ts", "name")]
    assert initialize_from_filesystem(table, {"column_stats": seeded}) == {"files": f"{T2}010",
                                                                          "column_stats": f"{T2}011"}
    assert HoodieTable(str(tmp_path)).config.metadata_partitions == ["column_stats", "files"]
    folder = tmp_path / ".hoodie/metadata/column_stats"
    by_group = {path.name[:14]: {row.decode() for row, _ in HFileReader(path.read_bytes()).entries()}
                for path in folder.glob("col-stats-*.hfile")}
    assert sorted(by_group) == ["col-stats-0000", "col-stats-0001"]
    assert set().union(*by_group.values()) == {r.key for r in seeded}
    for group, keys in by_group.items():
        assert {f"col-stats-{file_group_index(k, 2):04d}" for k in keys} == {group}
    writer = MetadataTableWriter(HoodieTable(str(tmp_path)))
    deletes = [column_stats_delete_record("p1", names[1], c) for c in ("id", "ts", "name")]
    metadata = writer.commit(T3, [*deletes, partition_files_record("p1", deleted=[names[1]])])
    assert sorted(metadata.partition_to_write_stats) == ["column_stats", "files"]
    assert sum(s.fields["numWrites"] for s in metadata.partition_to_write_stats["column_stats"]) == 3
    assert column_stats_key("p1", names[1], "id") in {r.key for r in deletes}


def test_partition_list_delete_drops_the_partition(tmp_path):
    b = TableBuilder(tmp_path)
    b.commit(T1, {"p1": [base_file("a", T1)], "p2": [base_file("b", T1)]})
    initialize_from_filesystem(b.table())
    MetadataTableWriter(HoodieTable(str(tmp_path))).commit(T2, [
        partition_files_record("p2", deleted=[base_file("b", T1)]), partition_list_record(["p2"], True)])
    b.clean(T2, T1)
    assert list(MetadataTable(str(tmp_path)).files_listing.partitions) == ["p1"]
    assert validate_files(MetadataTable(str(tmp_path))) != []  # p2's file is still on storage
