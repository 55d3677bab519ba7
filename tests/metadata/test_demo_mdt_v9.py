"""The metadata table of a version-9 demo table (issue 24): written as Hudi 1.1 writes one, through the
same 1.x writer the clean uses, listed through by hudi-rs, validated by `metadata --validate`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiReadOptions, HudiTable
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets.cli import main
from hudi_assets.demo import generate_table
from hudi_assets.demo.metadata import max_commits_without_compaction
from hudi_assets.exceptions import HudiInputError
from hudi_assets.hfile import HFileReader
from hudi_assets.logformat import LogFileName, read_blocks
from hudi_assets.logformat.hfile_block import decode_hfile_data_block
from hudi_assets.metadata.payloads import WRITER_SCHEMA_1_1, with_meta_fields
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline.instant import DELTA_COMMIT
from hudi_assets.timeline.layout2 import parse_layout2_name
from hudi_assets.timeline.metadata import commit_metadata

SMALL = {"partitions": 2, "files_per_partition": 2, "records_per_file": 3, "bloom_entries": 100, "seed": 5,
         "table_version": 9, "metadata_table": True, "commits": max_commits_without_compaction()}
V9_WITH_METADATA = [n for n in table_zips(9) if "_meta" in n and "nometa" not in n]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("v9-mdt")
    return generate_table(Storage(str(root / "t")), "MERGE_ON_READ", **SMALL)


def _mdt(demo) -> Path:
    return Path(demo.base_path) / ".hoodie" / "metadata"


def _values(rows) -> dict[str, tuple[str, float]]:
    return {r["id"]: (r["_hoodie_commit_time"], r["fare"]) for r in rows}


def _slices(base: str) -> list[tuple[str, str]]:
    return sorted((s.partition_path, s.file_id) for s in HudiTable(base).get_file_slices())


@pytest.mark.parametrize("name", params_or_skip(V9_WITH_METADATA, "v9 table with a metadata table"))
def test_the_1_1_record_schema_is_the_java_written_one(tmp_path, name):
    mdt = HoodieTable(str(unzip_table(name, tmp_path) / ".hoodie" / "metadata"))
    timeline = mdt.active_timeline
    latest = timeline.filter_completed().filter_actions({DELTA_COMMIT}).last()
    assert commit_metadata(timeline, latest).extra_metadata["schema"] == WRITER_SCHEMA_1_1


def test_hudi_rs_time_travels_through_the_metadata_table(demo):
    for ts in demo.completed_commits:
        options = HudiReadOptions().with_as_of_timestamp(ts)
        rows = pa.Table.from_batches(HudiTable(demo.base_path).read(options)).to_pylist()
        assert _values(rows) == _values(demo.snapshots[ts].values()), f"as of {ts}"
    assert _slices(demo.base_path) == sorted((s.partition, s.file_id) for s in demo.latest_file_slices)


def test_hudi_rs_lists_files_through_the_metadata_table(demo, tmp_path):
    """A copy of a base file under a new file id, unknown to the metadata table: hudi-rs does not see
    it while the table has a metadata table, and does once the metadata table is gone."""
    base = Path(shutil.copytree(demo.base_path, tmp_path / "t"))
    before = _slices(str(base))
    original = next(base.glob(f"{demo.partitions[0]}/*.parquet"))
    _, token, instant = original.stem.rsplit("_", 2)
    stray = original.with_name(f"00000000-0000-4000-8000-000000000000-0_{token}_{instant}.parquet")
    shutil.copyfile(original, stray)
    assert _slices(str(base)) == before
    table = HoodieTable(str(base))
    Storage(str(base)).delete_dir(".hoodie/metadata")
    write_table_config(table.storage, {**table.config.props, "hoodie.table.metadata.partitions": ""})
    assert (demo.partitions[0], "00000000-0000-4000-8000-000000000000-0") in _slices(str(base))


def test_the_metadata_table_is_written_as_hudi_1_1_writes_it(demo):
    mdt = HoodieTable(str(_mdt(demo)))
    assert mdt.config.table_version == 9 and mdt.config.timeline_layout_version == 2
    assert mdt.config.props["hoodie.record.merge.mode"] == "CUSTOM"
    timeline = mdt.active_timeline
    deltacommits = timeline.filter_completed().filter_actions({DELTA_COMMIT})
    assert deltacommits.timestamps == ["00000000000000000", "00000000000000001", "00000000000000002",
                                       *demo.completed_commits]
    assert len(deltacommits.timestamps) < 10  # under the compaction trigger
    names = [p.name for p in (_mdt(demo) / ".hoodie" / "timeline").iterdir() if p.is_file()]
    for ts in deltacommits.timestamps:
        [done] = [n for n in names if n.startswith(f"{ts}_") and n.endswith(".deltacommit")]
        completion = parse_layout2_name(done)[1]
        instant = next(i for i in deltacommits if i.timestamp == ts)
        assert completion > ts
        assert commit_metadata(timeline, instant).extra_metadata["schema"] == WRITER_SCHEMA_1_1
        if ts in demo.completed_commits:  # before the data commit completes
            data_done = next(p.name for p in (Path(demo.base_path) / ".hoodie" / "timeline").iterdir()
                             if p.name.startswith(f"{ts}_") and not p.name.endswith(".savepoint"))
            assert completion < parse_layout2_name(data_done)[1]
    value_types = set()
    for log in _mdt(demo).glob("*/.*.log.*"):
        name = LogFileName.parse(log.name)
        assert name.version == 1 and name.base_instant in deltacommits.timestamps
        if log.parent.name == "column_stats" and name.base_instant in demo.completed_commits:
            rel = f"column_stats/{log.name}"
            for block in read_blocks(log.read_bytes(), rel):
                value_types |= {(v["ColumnStatsMetadata"]["columnName"], v["ColumnStatsMetadata"]["valueType"]
                                 ["typeOrdinal"]) for _, v in decode_hfile_data_block(block, path=rel)}
    assert {("_hoodie_record_key", 7), ("ts", 4), ("fare", 6)} <= value_types
    [base_file] = (_mdt(demo) / "files").glob("*.hfile")
    reader = HFileReader(base_file.read_bytes())
    assert reader.file_info[b"schema"].decode() == with_meta_fields(WRITER_SCHEMA_1_1)


def test_metadata_validate_passes(demo, capsys):
    assert main(["metadata", demo.base_path, "--validate"]) == 0
    assert "consistent" in capsys.readouterr().out


def test_the_same_arguments_write_the_same_metadata_table(demo, tmp_path):
    again = generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", **SMALL)

    def files(table) -> list[str]:
        return sorted(str(p.relative_to(_mdt(table))) for p in _mdt(table).rglob("*") if p.is_file())
    assert files(again) == files(demo)


def test_more_commits_than_the_compaction_trigger_allows_are_refused(tmp_path):
    with pytest.raises(HudiInputError, match="at most 6 commits"):
        generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", **{**SMALL, "commits": 7})
    assert not (tmp_path / "t").exists()
