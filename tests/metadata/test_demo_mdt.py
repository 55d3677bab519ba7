"""`hudi-assets demo PATH --metadata-table`: demo tables whose metadata table (files, column_stats,
bloom_filters) is what a Spark 0.14/0.15 writer keeps, read back with our metadata-table reader and
checked against the data files themselves."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from hudi import HudiTable

from hudi_assets.cli import main
from hudi_assets.demo import DemoTable, demo_table_specs, generate_table
from hudi_assets.demo.formats import META_FIELDS
from hudi_assets.exceptions import HudiInputError
from hudi_assets.logformat import decode_avro_data_block, read_blocks
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.column_stats import (
    footer_bloom_filter,
    parquet_column_ranges,
    read_parquet_footer,
    record_column_ranges,
)
from hudi_assets.metadata.compaction import merged_records
from hudi_assets.metadata.keys import bloom_filter_key, column_stats_key
from hudi_assets.storage import Storage
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.instant import COMMIT, DELTA_COMMIT

SPECS = demo_table_specs()


@pytest.fixture(scope="module", params=list(SPECS))
def demo(request, tmp_path_factory) -> DemoTable:
    root = tmp_path_factory.mktemp("mdt")
    spec = {**SPECS[request.param], "metadata_table": True}
    return generate_table(Storage(str(root / request.param)), **spec)


def _committed_files(demo: DemoTable) -> dict[str, dict[str, int]]:
    """Every data file the completed commits wrote, with its size on storage."""
    base = Path(demo.base_path)
    files: dict[str, dict[str, int]] = {p: {} for p in demo.partitions}
    for ts in demo.completed_commits:
        action = next(i.action for i in demo.instants if i.timestamp == ts and i.action != "savepoint")
        metadata = CommitMetadata.from_bytes((base / ".hoodie" / f"{ts}.{action}").read_bytes(), ts)
        for stat in metadata.write_stats:
            partition, _, name = stat.path.rpartition("/")
            files[partition][name] = (base / stat.path).stat().st_size
    return files


def _json(capsys, *args: str) -> dict:
    assert main(["metadata", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_validate_is_consistent_and_the_listing_is_every_committed_file(demo, capsys):
    assert main(["metadata", demo.base_path, "--validate"]) == 0
    capsys.readouterr()
    view = _json(capsys, demo.base_path)
    assert view["files"] == _committed_files(demo)
    failed = set(demo.failed_files)
    for file_slice in demo.latest_file_slices:
        for path in file_slice.paths:
            if path not in failed:
                partition, _, name = path.rpartition("/")
                assert view["files"][partition][name] == (Path(demo.base_path) / path).stat().st_size
    assert not failed & {f"{p}/{n}" for p, names in view["files"].items() for n in names}


def test_metadata_table_has_the_writer_layout_and_timeline(demo):
    metadata = MetadataTable(demo.base_path)
    assert metadata.partitions == ["bloom_filters", "column_stats", "files"]
    assert metadata.data_config.props["hoodie.table.metadata.partitions.inflight"] == ""
    groups = {p: [s.file_id for s in metadata.file_slices(p)] for p in metadata.partitions}
    assert groups == {"files": ["files-0000-0"], "column_stats": ["col-stats-0000-0", "col-stats-0001-0"],
                      "bloom_filters": [f"bloom-filters-000{i}-0" for i in range(4)]}
    deltacommits = metadata.timeline.filter_completed().filter_actions({DELTA_COMMIT}).timestamps
    assert deltacommits == ["00000000000000010", "00000000000000011", "00000000000000012",
                            *demo.completed_commits]
    assert demo.failed_instant not in metadata.timeline.timestamps
    # Compaction after 10 deltacommits (3 initializations + 7 commits), named after the 10th.
    compaction = metadata.latest_compaction()
    assert compaction is not None and compaction.timestamp == deltacommits[9] + "001"
    assert [i.timestamp for i in metadata.timeline.filter_actions({COMMIT})] == [compaction.timestamp]
    assert not metadata.timeline.filter_pending()
    assert metadata.deltacommits_since(compaction)[0].timestamp == demo.completed_commits[7]
    files_slice = metadata.file_slices("files")[0]
    assert files_slice.base_file is not None and files_slice.base_file.instant == compaction.timestamp
    assert files_slice.log_files, "the deltacommits after the compaction are in log files"


def _index_records(metadata: MetadataTable, partition: str) -> dict[str, dict]:
    records = {}
    for file_slice in metadata.file_slices(partition):
        records.update(merged_records(metadata.storage, file_slice, metadata.block_filter)[0])
    return records


def _log_rows(path: Path) -> list[dict]:
    rows = []
    for block in read_blocks(path.read_bytes(), str(path)):
        rows.extend(decode_avro_data_block(block))
    return rows


def test_column_stats_and_bloom_filters_describe_every_data_file(demo):
    metadata = MetadataTable(demo.base_path)
    stats = _index_records(metadata, "column_stats")
    blooms = _index_records(metadata, "bloom_filters")
    columns = {name: "string" for name in META_FIELDS} | {
        "ts": "long", "id": "string", "rider": "string", "driver": "string", "fare": "double", "dt": "string"}
    base = Path(demo.base_path)
    expected_stats, expected_blooms = 0, 0
    for partition, files in metadata.files_listing.partitions.items():
        for name in files:
            path = base / partition / name
            if name.endswith(".parquet"):
                footer = read_parquet_footer(path.read_bytes(), str(path))
                ranges = parquet_column_ranges(footer, list(columns))
                bloom = blooms[bloom_filter_key(partition, name)]["BloomFilterMetadata"]
                assert (bloom["type"], bloom["bloomFilter"], bloom["isDeleted"]) == (
                    "DYNAMIC_V0", footer_bloom_filter(footer, str(path)).payload, False)
                assert bloom["timestamp"] == name.rsplit("_", 1)[-1].removesuffix(".parquet")
                expected_blooms += 1
            else:
                ranges = record_column_ranges(_log_rows(path), columns)
            assert len(ranges) == len(columns)
            for found in ranges:
                record = stats[column_stats_key(partition, name, found.column)]["ColumnStatsMetadata"]
                assert (record["fileName"], record["columnName"]) == (name, found.column)
                assert not record["isDeleted"]
                assert (record["minValue"], record["maxValue"], record["nullCount"], record["valueCount"],
                        record["totalSize"], record["totalUncompressedSize"]) == (
                    found.min_value, found.max_value, found.null_count, found.value_count, found.total_size,
                    found.total_uncompressed_size)
                expected_stats += 1
    assert (len(stats), len(blooms)) == (expected_stats, expected_blooms)


def test_log_write_stats_carry_the_column_ranges_of_their_records(demo):
    base = Path(demo.base_path)
    action = "deltacommit" if demo.is_mor else "commit"
    metadata = CommitMetadata.from_bytes((base / ".hoodie" / f"{demo.completed_commits[-1]}.{action}")
                                         .read_bytes(), "last")
    logs = [s for s in metadata.write_stats if "/." in s.path]
    if not demo.is_mor:  # base files only: their ranges come from the footers, none in the stats
        assert not logs and all("recordsStats" not in s.fields for s in metadata.write_stats)
        return
    assert logs
    for stat in logs:
        recorded = stat.fields["recordsStats"]["val"]
        assert set(recorded) == set(META_FIELDS) | {"ts", "id", "rider", "driver", "fare", "dt"}
        assert recorded["_hoodie_commit_time"]["filePath"] == stat.path
        assert recorded["_hoodie_commit_time"]["minValue"] == demo.completed_commits[-1]
        assert recorded["fare"]["valueCount"] == stat.fields["numUpdateWrites"]


def test_the_data_table_is_the_one_written_without_a_metadata_table(demo, tmp_path):
    plain = generate_table(Storage(str(tmp_path / "plain")), **{**SPECS[demo.name], "metadata_table": False})
    assert [(i.timestamp, i.action, i.state) for i in plain.instants] == [
        (i.timestamp, i.action, i.state) for i in demo.instants]
    assert plain.latest_file_slices == demo.latest_file_slices
    rows = HudiTable(demo.base_path).read()
    assert {r["id"]: r["fare"] for r in pa.Table.from_batches(rows).to_pylist()} == {
        k: r["fare"] for k, r in demo.latest_rows.items()}


def test_demo_command_writes_both_tables_with_a_metadata_table(tmp_path, capsys):
    assert main(["demo", str(tmp_path), "--metadata-table"]) == 0
    for name in SPECS:
        assert main(["metadata", str(tmp_path / name), "--validate"]) == 0
    assert main(["demo", str(tmp_path / "default")]) == 0
    assert main(["metadata", str(tmp_path / "default" / "demo_mor"), "--validate"]) == 0
    capsys.readouterr()
    assert main(["metadata", str(tmp_path / "default" / "demo_cow")]) == 2


def test_fast_mode_refuses_a_metadata_table(tmp_path):
    with pytest.raises(HudiInputError, match="fast mode"):
        generate_table(Storage(str(tmp_path / "t")), fast=True, metadata_table=True)


# ------------------------------------------------------------------------- cleaning keeps it in step
POLICIES = {
    "KEEP_LATEST_COMMITS": ["hoodie.cleaner.commits.retained=3"],
    "KEEP_LATEST_FILE_VERSIONS": ["hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS",
                                  "hoodie.cleaner.fileversions.retained=1"],
    "KEEP_LATEST_BY_HOURS": ["hoodie.cleaner.policy=KEEP_LATEST_BY_HOURS", "hoodie.cleaner.hours.retained=5"],
}


def _files(base: Path) -> set[str]:
    return {p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file()}


def _rows(base: Path) -> dict[str, dict]:
    batches = HudiTable(str(base)).read()
    return {r["_hoodie_record_key"]: r for r in pa.Table.from_batches(batches).to_pylist()}


def _clean(base: Path, policy: str) -> int:
    args = ["clean", str(base), "--engine", "local"]
    for pair in POLICIES[policy]:
        args += ["--hoodie-conf", pair]
    return main(args)


@pytest.fixture(scope="module", params=list(SPECS))
def hourly(request, tmp_path_factory) -> DemoTable:
    """A demo table of the last hours, an hour between instants, so that every policy has files to
    clean (KEEP_LATEST_BY_HOURS counts back from now: 5 hours keep the last data commit)."""
    root = tmp_path_factory.mktemp("hourly")
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=17, minutes=30)
    spec = {**SPECS[request.param], "metadata_table": True, "interval": timedelta(hours=1),
            "start_time": start}
    return generate_table(Storage(str(root / request.param)), **spec)


@pytest.mark.parametrize("policy", list(POLICIES))
def test_each_clean_keeps_the_metadata_table_in_step(hourly, policy, tmp_path, capsys):
    demo = hourly
    base = tmp_path / demo.name
    shutil.copytree(demo.base_path, base)
    rows = _rows(base)
    before = _files(base)
    assert _clean(base, policy) == 0
    deleted = {p for p in before - _files(base) if not p.startswith(".hoodie/")}
    assert deleted, f"{policy} deletes nothing on the demo table"
    assert main(["metadata", str(base), "--validate"]) == 0
    capsys.readouterr()
    listed = {f"{p}/{n}" for p, names in _json(capsys, str(base))["files"].items() for n in names}
    assert not deleted & listed
    assert listed == {f"{p}/{n}" for p, names in _committed_files(demo).items() for n in names} - deleted
    assert _rows(base) == rows
    # A rerun finds nothing to clean: no file written or deleted, data or timeline.
    after = _files(base)
    assert _clean(base, policy) == 0
    assert _files(base) == after
    assert main(["metadata", str(base), "--validate"]) == 0


def test_on_s3_the_metadata_table_is_the_same_as_locally(tmp_path, capsys):
    from support.s3_server import moto_s3

    spec = {**SPECS["demo_mor"], "commits": 11, "metadata_table": True}
    local = generate_table(Storage(str(tmp_path / "demo_mor")), **spec)
    with moto_s3() as options:
        pafs.S3FileSystem(**options, allow_bucket_creation=True).create_dir("demo")
        storage = Storage("s3://demo/tables/demo_mor", options)
        generate_table(storage, **spec)
        listed = {s.path for s in storage.list(".hoodie/metadata", recursive=True) if not s.is_dir}
        base = Path(local.base_path)
        assert listed == {p.relative_to(base).as_posix() for p in (base / ".hoodie" / "metadata").rglob("*")
                          if p.is_file()}
        assert MetadataTable(storage).latest_compaction() is not None
        assert MetadataTable(storage).files_listing == MetadataTable(local.base_path).files_listing
