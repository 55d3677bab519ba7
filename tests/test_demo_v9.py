"""Demo tables at table version 9 (issue 24 item 5): written as Hudi 1.1 would, read back by hudi-rs
(the time-travel oracle of the version 6 demo tests), rolled back by hudi-assets."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hudi import HudiReadOptions, HudiTable

from hudi_assets.avro import deserialize_metadata
from hudi_assets.cli import main
from hudi_assets.demo import generate_table
from hudi_assets.fsview import LogFile
from hudi_assets.rollback import Rollbacker
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.layout2 import CommitMetadataSerDeV2, parse_layout2_name

SMALL = {"commits": 8, "partitions": 2, "files_per_partition": 2, "records_per_file": 3, "bloom_entries": 100,
         "seed": 5, "table_version": 9}


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def demo(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"v9-{request.param}")
    return generate_table(Storage(str(root / "t")), request.param, **SMALL)


def _read(base: str, as_of: str | None = None) -> dict[str, tuple[str, float]]:
    options = HudiReadOptions() if as_of is None else HudiReadOptions().with_as_of_timestamp(as_of)
    batches = HudiTable(base).read(options)
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return {r["id"]: (r["_hoodie_commit_time"], r["fare"]) for r in rows}


def _values(rows) -> dict[str, tuple[str, float]]:
    return {r["id"]: (r["_hoodie_commit_time"], r["fare"]) for r in rows}


def test_hudi_rs_time_travel_matches_every_completed_instant(demo):
    for ts in demo.completed_commits:
        assert _read(demo.base_path, ts) == _values(demo.snapshots[ts].values()), f"as of {ts}"
    assert _read(demo.base_path) == _values(demo.latest_rows.values())


def test_hudi_rs_latest_file_slices_match(demo):
    """Log files join slices by their deltacommit's completion time; a pending compaction's and the
    failed write's files are not in them."""
    theirs = sorted((s.partition_path, s.file_id, s.base_file_name, sorted(s.log_file_names))
                    for s in HudiTable(demo.base_path).get_file_slices())
    assert theirs == sorted((s.partition, s.file_id, s.base_file, sorted(s.log_files))
                            for s in demo.latest_file_slices)


def test_the_timeline_is_layout_2_with_avro_commit_metadata(demo):
    storage = Storage(demo.base_path)
    names = [s.name for s in storage.list(".hoodie/timeline") if not s.is_dir]
    completed = {}
    for name in names:
        instant, completion = parse_layout2_name(name)
        if instant.is_completed:
            assert completion is not None and completion > instant.timestamp, name
            if instant.action != "savepoint":  # a savepoint shares its commit's time
                completed[instant.timestamp] = name
    table = HoodieTable(demo.base_path)
    assert table.config.table_version == 9 and table.config.timeline_layout_version == 2
    assert [i.timestamp for i in table.active_timeline.commits_timeline().filter_completed()] == \
        demo.completed_commits
    for ts in demo.completed_commits:
        data = storage.read(f".hoodie/timeline/{completed[ts]}")
        assert data[:4] == b"Obj\x01"  # an Avro container, as 1.x writes commit metadata
        metadata = CommitMetadataSerDeV2().deserialize(data, completed[ts])
        assert metadata.operation_type == demo.operations[ts]
    savepoint = next(n for n in names if n.endswith(".savepoint") and "_" in n)
    record = deserialize_metadata(storage.read(f".hoodie/timeline/{savepoint}"), "HoodieSavepointMetadata",
                                  savepoint)
    assert record["comments"] == "demo savepoint"


def test_log_files_are_named_by_the_deltacommit_writing_them(demo):
    if not demo.is_mor:
        pytest.skip("copy-on-write tables have no log files")
    storage = Storage(demo.base_path)
    deltacommits = set(demo.completed("deltacommit")) | {demo.failed_instant}
    logs = [LogFile.parse(s.name) for s in storage.list("", recursive=True) if LogFile.parse(s.name)]
    assert logs and all(f.base_instant in deltacommits and f.version == 1 for f in logs)
    markers = storage.read(f".hoodie/.temp/{demo.failed_instant}/MARKERS0").decode().split()
    assert any(LogFile.parse(m.rpartition("/")[2].removesuffix(".marker.CREATE")) for m in markers)
    assert all(m.endswith(".marker.CREATE") or m.endswith(".marker.MERGE") for m in markers)


def test_the_failed_write_is_rolled_back_and_hudi_rs_reads_the_same_rows(tmp_path):
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        demo = generate_table(Storage(str(tmp_path / table_type)), table_type, **SMALL)
        before = _read(demo.base_path)
        [done] = Rollbacker(HoodieTable(demo.base_path)).rollback(demo.failed_instant).executed
        assert done.files_deleted == len(demo.failed_files) and done.rollback_log_files == 0
        storage = Storage(demo.base_path)
        assert not any(storage.exists(f) for f in demo.failed_files)
        assert _read(demo.base_path) == before == _values(demo.latest_rows.values())


def test_the_cli_writes_version_9_demo_tables_and_keeps_6_by_default(tmp_path, capsys):
    """The MOR table (both, with --metadata-table) gets a 1.1 metadata table, and then 6 commits."""
    assert main(["demo", str(tmp_path / "v9"), "--table-version", "9"]) == 0
    for name, has_metadata in (("demo_cow", False), ("demo_mor", True)):
        table = HoodieTable(str(tmp_path / "v9" / name))
        assert table.config.table_version == 9 and table.config.has_metadata_table == has_metadata
        commits = table.active_timeline.commits_timeline().filter_completed()
        assert len(commits.filter_actions({"commit", "deltacommit", "replacecommit"})) == (6 if has_metadata
                                                                                            else 14)
    assert main(["demo", str(tmp_path / "v6")]) == 0
    assert HoodieTable(str(tmp_path / "v6" / "demo_mor")).config.table_version == 6
    assert main(["demo", str(tmp_path / "mdt"), "--table-version", "9", "--metadata-table"]) == 0
    for name in ("demo_cow", "demo_mor"):
        table = HoodieTable(str(tmp_path / "mdt" / name))
        assert table.config.has_metadata_table
        assert main(["metadata", table.base_path, "--validate"]) == 0
    capsys.readouterr()
