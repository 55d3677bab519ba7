"""The demo generator writes tables an independent reader (hudi-rs) reads as we say, shaped like Hudi's.

hudi-rs (`hudi` on PyPI) is Apache Hudi's Rust reader: it reads the timeline, replaced file groups,
parquet base files and Avro log blocks itself, so agreeing with it on every time-travel snapshot is
evidence that the files are what Hudi writes. Byte-level shape is compared with real Hudi-written
tables from ../shared (those tests skip when it is absent).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from hudi import HudiReadOptions, HudiTable

from hudi_assets.avro import deserialize_any
from hudi_assets.bloom import serialize
from hudi_assets.demo import DemoTable, demo_table_specs, generate_table, write_demo_tables
from hudi_assets.demo.formats import avro_log_file
from hudi_assets.exceptions import HudiInputError
from hudi_assets.java_collections import java_hashmap_order
from hudi_assets.logformat import HeaderKey, decode_avro_data_block, read_blocks
from hudi_assets.properties import parse_properties
from hudi_assets.storage import Storage
from hudi_assets.table_config import load_table_config
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.instant import COMPACTION, REPLACE_COMMIT, SAVEPOINT, Instant, State
from hudi_assets.timeline.timeline import ActiveTimeline

QUICKSTART = "quickstart_trips_table__mor__avro__v6_trips_8i1u"
SMALL = {"partitions": 3, "commits": 10, "files_per_partition": 2, "records_per_file": 4,
         "update_fraction": 0.4, "bloom_entries": 1000}
KINDS = [("COPY_ON_WRITE", False), ("COPY_ON_WRITE", True), ("MERGE_ON_READ", False), ("MERGE_ON_READ", True)]


def _generate(root: Path, table_type: str, hive_style: bool, **overrides) -> DemoTable:
    args = {**SMALL, "seed": 7, **overrides}
    name = f"t_{table_type[:3].lower()}_{'hive' if hive_style else 'plain'}"
    return generate_table(Storage(str(root / name)), table_type, name=name, hive_style=hive_style, **args)


@pytest.fixture(scope="module", params=KINDS, ids=[f"{t}-{'hive' if h else 'plain'}" for t, h in KINDS])
def demo(request, tmp_path_factory) -> DemoTable:
    table_type, hive_style = request.param
    return _generate(tmp_path_factory.mktemp("demo"), table_type, hive_style)


@pytest.fixture(scope="module")
def quickstart(real_tables) -> Path:
    """A real MOR table written by Hudi 0.14/0.15 (Spark quickstart trips), or skip."""
    if QUICKSTART not in real_tables:
        pytest.skip("../shared is absent: no real Hudi-written table to compare with")
    return real_tables[QUICKSTART]


def _values(rows) -> dict[str, tuple[str, float]]:
    return {row["id"]: (row["_hoodie_commit_time"], row["fare"]) for row in rows}


def _read(table: HudiTable, as_of: str | None = None) -> dict[str, tuple[str, float]]:
    options = HudiReadOptions() if as_of is None else HudiReadOptions().with_as_of_timestamp(as_of)
    batches = table.read(options)
    return _values(pa.Table.from_batches(batches).to_pylist()) if batches else {}


def _all_files(root: str) -> dict[str, int]:
    base = Path(root)
    return {p.relative_to(base).as_posix(): p.stat().st_size for p in base.rglob("*") if p.is_file()}


# ------------------------------------------------------------------------------ hudi-rs agrees
def test_hudi_rs_time_travel_matches_every_completed_instant(demo):
    table = HudiTable(demo.base_path)
    assert len(demo.completed_commits) == SMALL["commits"]
    for ts in demo.completed_commits:
        expected = _values(demo.snapshots[ts].values())
        assert _read(table, ts) == expected, f"snapshot as of {ts} ({demo.operations[ts]})"
    assert _read(table) == _values(demo.latest_rows.values())
    # Reading as of an instant between two commits sees the earlier one (the savepoint shares a time).
    middle = demo.completed_commits[3]
    assert _read(table, middle[:-3] + "999") == _values(demo.rows_as_of(middle[:-3] + "999").values())


def test_hudi_rs_timeline_and_latest_file_slices_match(demo):
    table = HudiTable(demo.base_path)
    timeline = table.get_timeline()
    ours = {action: demo.completed(action) for action in ("commit", "deltacommit", "replacecommit")}
    assert [i.timestamp for i in timeline.get_completed_commits()] == ours["commit"]
    assert [i.timestamp for i in timeline.get_completed_deltacommits()] == ours["deltacommit"]
    assert [i.timestamp for i in timeline.get_completed_replacecommits()] == ours["replacecommit"]
    assert json.loads(timeline.get_latest_avro_schema())["fields"][-1]["name"] == demo.partition_field
    theirs = sorted((s.partition_path, s.file_id, s.base_file_name, sorted(s.log_file_names))
                    for s in table.get_file_slices())
    expected = sorted((s.partition, s.file_id, s.base_file, sorted(s.log_files))
                      for s in demo.latest_file_slices)
    assert theirs == expected
    assert table.is_mor == demo.is_mor


def test_history_has_every_kind_of_instant(demo):
    by_state = {(i.action, i.state) for i in demo.instants}
    assert (REPLACE_COMMIT, State.COMPLETED) in by_state
    assert demo.savepoint in demo.completed_commits
    assert (SAVEPOINT, State.COMPLETED) in by_state
    assert demo.failed_instant and demo.failed_instant > demo.completed_commits[-1]
    assert demo.is_mor == (demo.pending_compaction is not None)
    times = [i.timestamp for i in demo.instants if i.action != SAVEPOINT]
    assert times == sorted(set(times)) and all(len(t) == 17 for t in times)
    assert demo.replaced_file_ids and all(ids for m in demo.replaced_file_ids.values() for ids in m.values())
    assert len(demo.partitions) == 3
    # The failed write left its files behind (readers must not see them: see the hudi-rs tests).
    assert demo.failed_files and all(demo.storage.exists(path) for path in demo.failed_files)
    # Upserts really made several versions (COW) or log files (MOR) of file groups.
    storage = demo.storage
    names = [s.name for p in demo.partitions for s in storage.list(p)]
    if demo.is_mor:
        assert sum(".log." in n for n in names) >= 5
    else:
        ids = [n.partition("_")[0] for n in names if n.endswith(".parquet")]
        assert max(ids.count(i) for i in ids) >= 3


# ------------------------------------------------------------------------------ timeline files
def test_every_state_file_is_written_as_hudi_does(demo):
    storage = demo.storage
    timeline = ActiveTimeline.load(storage)
    assert sorted(timeline.instants, key=lambda i: i.sort_key) == demo.instants
    for instant in demo.instants:
        files = {i.state: storage.read(f".hoodie/{i.file_name}") for i in timeline.state_files
                 if i.comparable_key == instant.comparable_key}
        if instant.action == SAVEPOINT:
            assert set(files) == {State.INFLIGHT, State.COMPLETED} and files[State.INFLIGHT] == b""
            name, record = deserialize_any(files[State.COMPLETED], instant.file_name)
            assert name == "HoodieSavepointMetadata" and record["version"] == 1
            assert {p: m["savepointDataFile"] for p, m in record["partitionMetadata"].items()} == \
                demo.savepointed_files
            assert list(record["partitionMetadata"]) == java_hashmap_order(demo.savepointed_files)
        elif instant.action == COMPACTION:
            assert set(files) == {State.REQUESTED}
            name, plan = deserialize_any(files[State.REQUESTED], instant.file_name)
            assert name == "HoodieCompactionPlan" and plan["version"] == 2
            assert [op["fileId"] for op in plan["operations"]] == demo.compaction_file_ids
            for op in plan["operations"]:
                logs = [f"{op['partitionPath']}/{n}" for n in op["deltaFilePaths"]]
                assert all(storage.exists(p) for p in logs) and op["metrics"]["TOTAL_LOG_FILES"] == len(logs)
        elif instant.timestamp == demo.failed_instant:
            assert set(files) == {State.REQUESTED, State.INFLIGHT} and files[State.REQUESTED] == b""
            assert CommitMetadata.from_json(files[State.INFLIGHT], "inflight").operation_type == "UPSERT"
            assert storage.read(f".hoodie/.temp/{instant.timestamp}/MARKERS.type") == b"TIMELINE_SERVER_BASED"
            markers = storage.read(f".hoodie/.temp/{instant.timestamp}/MARKERS0").decode().splitlines()
            assert len(markers) == len(demo.failed_files) >= 1
        else:
            assert set(files) == {State.REQUESTED, State.INFLIGHT, State.COMPLETED}
            if instant.action == REPLACE_COMMIT:  # Spark's insert_overwrite: an all-null requested record
                name, record = deserialize_any(files[State.REQUESTED], instant.file_name)
                assert name == "HoodieRequestedReplaceMetadata" and set(record.values()) == {None}
            else:
                assert files[State.REQUESTED] == b""
            inflight = CommitMetadata.from_json(files[State.INFLIGHT], "inflight")
            assert inflight.operation_type == demo.operations[instant.timestamp]
            assert not inflight.extra_metadata
            assert all(s.path is None for s in inflight.write_stats)


def test_commit_metadata_describes_the_files_written(demo):
    storage = demo.storage
    schema = json.loads(HudiTable(demo.base_path).get_schema_in_avro_str())
    for ts in demo.completed_commits:
        action = next(i.action for i in demo.instants if i.timestamp == ts and i.is_completed)
        data = storage.read(f".hoodie/{Instant(ts, action).file_name}")
        metadata = CommitMetadata.from_json(data, ts)
        assert metadata.to_json() == data  # Jackson's layout, byte for byte
        assert metadata.operation_type == demo.operations[ts]
        assert json.loads(metadata.schema) == schema
        partitions = list(metadata.partition_to_write_stats)
        assert partitions == java_hashmap_order(partitions)
        for stat in metadata.write_stats:
            status = storage.status(stat.path)
            assert status is not None and status.size == stat.file_size == stat.total_write_bytes > 0
            assert stat.path.startswith(f"{stat.partition_path}/") and stat.file_id in stat.path
            if ".log." in stat.path:
                assert stat.fields["logFiles"][-1] == stat.path.rpartition("/")[2]
                assert stat.prev_commit and stat.prev_commit in stat.path
                assert stat.fields["baseFile"].endswith(f"_{stat.prev_commit}.parquet")
            else:
                assert stat.path.endswith(f"_{ts}.parquet")
        if action == REPLACE_COMMIT:
            assert metadata.replaced_file_ids == demo.replaced_file_ids[ts]


# ---------------------------------------------------------------------- compared with real Hudi
def test_table_config_and_partition_metadata_match_real_tables(demo, quickstart):
    config = load_table_config(demo.storage)
    config.check_supported("demo")
    real = parse_properties((quickstart / ".hoodie/hoodie.properties").read_text())
    ours = dict(config.props)
    expected_keys = set(real) if demo.is_mor else set(real) - {
        "hoodie.compaction.payload.class", "hoodie.compaction.record.merger.strategy"}
    assert set(ours) == expected_keys | {"hoodie.table.base.file.format"}
    assert ours["hoodie.table.type"] == demo.table_type
    assert ours["hoodie.datasource.write.hive_style_partitioning"] == str(demo.hive_style).lower()
    create_schema = json.loads(ours["hoodie.table.create.schema"])
    assert create_schema["fields"][0] == {"name": "ts", "type": ["long", "null"]}
    real_meta = (quickstart / "city=chennai/.hoodie_partition_metadata").read_text().splitlines()
    for partition in demo.partitions:
        lines = demo.storage.read(f"{partition}/.hoodie_partition_metadata").decode().splitlines()
        assert [line.split("=")[0] for line in lines[2:]] == [line.split("=")[0] for line in real_meta[2:]]
        assert lines[0] == real_meta[0] and lines[1].endswith(" UTC 2024")
        props = parse_properties("\n".join(lines))
        assert props["partitionDepth"] == str(partition.count("/") + 1)
        first = min(ts for ts in demo.completed_commits
                     if any(s.partition_path == partition for s in _stats(demo, ts)))
        assert props["commitTime"] == first
    for name in (".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids", ".schema", ".temp", "archived"):
        assert (Path(demo.base_path) / ".hoodie" / name).is_dir()


def _stats(demo: DemoTable, ts: str):
    action = next(i.action for i in demo.instants if i.timestamp == ts and i.is_completed)
    data = demo.storage.read(f".hoodie/{Instant(ts, action).file_name}")
    return CommitMetadata.from_json(data, ts).write_stats


def test_base_files_have_hudi_layout_and_footer(demo, quickstart):
    real = pq.ParquetFile(next(quickstart.glob("city=chennai/*.parquet")))
    base_files = [p for s in demo.latest_file_slices for p in s.paths if p.endswith(".parquet")]
    assert base_files
    for rel in base_files:
        parquet = pq.ParquetFile(Path(demo.base_path) / rel)
        names = parquet.schema_arrow.names
        assert names[:5] == real.schema_arrow.names[:5] == [
            "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
            "_hoodie_file_name"]
        footer = parquet.metadata.metadata
        assert set(footer) == set(real.metadata.metadata)
        rows = parquet.read().to_pylist()
        keys = [r["_hoodie_record_key"] for r in rows]
        assert footer[b"org.apache.hudi.bloomfilter"].decode() == serialize(keys, 1000)
        assert footer[b"hoodie_min_record_key"].decode() == min(keys)
        avro = json.loads(footer[b"parquet.avro.schema"])
        assert [f["name"] for f in avro["fields"]] == names
        real_avro = json.loads(real.metadata.metadata[b"parquet.avro.schema"])
        assert avro["fields"][0] == real_avro["fields"][0]
        assert parquet.metadata.row_group(0).column(0).compression == "GZIP"
        file_name = rel.rpartition("/")[2]
        instant = file_name.rpartition("_")[2].split(".")[0]
        for row in rows:
            assert row["_hoodie_file_name"] == file_name and row["_hoodie_record_key"] == row["id"]
            assert row["_hoodie_partition_path"] == rel.rpartition("/")[0]
            assert row["_hoodie_commit_seqno"].startswith(row["_hoodie_commit_time"] + "_")
            assert row["_hoodie_commit_time"] <= instant


def test_log_files_hold_avro_blocks_of_the_updating_instant(demo):
    logs = [p for s in demo.latest_file_slices for p in s.paths if ".log." in p]
    assert bool(logs) == demo.is_mor
    committed = set(demo.completed_commits)
    for rel in logs:
        blocks = list(read_blocks(demo.storage.read(rel), rel))
        assert len(blocks) == 1 and list(blocks[0].header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
        instant = blocks[0].header[HeaderKey.INSTANT_TIME]
        assert instant in committed or instant == demo.failed_instant
        for record in decode_avro_data_block(blocks[0]):
            assert record["_hoodie_commit_time"] == instant
            assert record["_hoodie_file_name"] == rel.rpartition("/")[2][1:].partition("_")[0]


def test_bloom_filter_and_log_block_are_byte_identical_to_hudi_written_files(quickstart):
    root = quickstart
    for path in root.glob("*/*.parquet"):
        parquet = pq.ParquetFile(path)
        keys = parquet.read().column("_hoodie_record_key").to_pylist()
        assert serialize(keys) == parquet.metadata.metadata[b"org.apache.hudi.bloomfilter"].decode()
    log = next(root.glob("city=san_francisco/.*.log.*"))
    data = log.read_bytes()
    (block,) = read_blocks(data, str(log))
    records = decode_avro_data_block(block)
    header = block.header
    assert avro_log_file(header[HeaderKey.SCHEMA], header[HeaderKey.INSTANT_TIME], records) == data


def test_java_hashmap_order_matches_hudi_written_json(quickstart):
    metadata = json.loads((quickstart / ".hoodie/20250331030642808.deltacommit").read_text())
    partitions = list(metadata["partitionToWriteStats"])
    assert java_hashmap_order(sorted(partitions)) == partitions
    assert java_hashmap_order(["10", "20", "30"]) == ["30", "20", "10"]  # the overwritetable sample


# ------------------------------------------------------------------------------- fast mode
def test_fast_mode_writes_the_same_names_and_timeline_with_empty_data_files(tmp_path):
    """Fast mode's speed is a bench's business (no timing in tests): here, that it writes the same."""
    args = {"partitions": 12, "files_per_partition": 15, "commits": 8, "update_fraction": 0.5}
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        normal = _generate(tmp_path / "normal", table_type, True, **args)
        fast = _generate(tmp_path / "fast", table_type, True, fast=True, **args)
        normal_files, fast_files = _all_files(normal.base_path), _all_files(fast.base_path)
        assert set(normal_files) == set(fast_files)
        assert fast.instants == normal.instants and fast.latest_file_slices == normal.latest_file_slices
        assert fast.snapshots == {ts: {} for ts in normal.completed_commits}
        for rel, size in fast_files.items():
            is_data = not rel.startswith(".hoodie/") and not rel.endswith(".hoodie_partition_metadata")
            assert (size == 0) if is_data else (size > 0 or normal_files[rel] == 0), rel
            if rel.startswith(".hoodie/") and rel.endswith(("commit", "deltacommit", ".inflight")):
                assert _sizes_zeroed(Path(normal.base_path, rel).read_bytes()) == \
                    _sizes_zeroed(Path(fast.base_path, rel).read_bytes()), rel


def _sizes_zeroed(data: bytes) -> dict:
    if not data:
        return {}
    obj = json.loads(data)
    for stats in obj["partitionToWriteStats"].values():
        for stat in stats:
            stat["totalWriteBytes"] = stat["fileSizeInBytes"] = 0
    return obj


def test_same_seed_same_table_other_seed_other_table(tmp_path):
    first = _generate(tmp_path / "a", "MERGE_ON_READ", False)
    again = _generate(tmp_path / "b", "MERGE_ON_READ", False)
    other = _generate(tmp_path / "c", "MERGE_ON_READ", False, seed=8)
    files_a, files_b = _all_files(first.base_path), _all_files(again.base_path)
    assert set(files_a) == set(files_b) and first.snapshots == again.snapshots
    for rel in files_a:
        if rel.startswith(".hoodie/") and rel.endswith(("commit", "inflight")):
            assert Path(first.base_path, rel).read_bytes() == Path(again.base_path, rel).read_bytes()
    assert set(_all_files(other.base_path)) != set(files_a)


def test_generator_refuses_bad_arguments_and_existing_tables(tmp_path):
    storage = Storage(str(tmp_path / "t"))
    with pytest.raises(HudiInputError):
        generate_table(storage, "MERGE_ON_WRITE")
    with pytest.raises(HudiInputError):
        generate_table(storage, commits=0)
    generate_table(storage, commits=1, bloom_entries=100)
    with pytest.raises(HudiInputError, match="already holds"):
        generate_table(storage, commits=1)


def test_minimal_histories_still_read_back(tmp_path):
    for commits in (1, 2, 3):
        demo = _generate(tmp_path / str(commits), "MERGE_ON_READ", False, commits=commits)
        table = HudiTable(demo.base_path)
        for ts in demo.completed_commits:
            assert _read(table, ts) == _values(demo.snapshots[ts].values())


def test_explicit_partition_values_and_start_time(tmp_path):
    demo = generate_table(Storage(str(tmp_path / "t")), "COPY_ON_WRITE", name="trips",
                          partitions=["us", "eu"], partition_field="region", hive_style=True, commits=4,
                          seed=1, bloom_entries=100, start_time=datetime(2023, 5, 6, 7, 8, tzinfo=UTC))
    assert demo.partitions == ["region=us", "region=eu"]
    assert demo.completed_commits[0].startswith("202305060708")
    assert _read(HudiTable(demo.base_path)) == _values(demo.latest_rows.values())


# ------------------------------------------------------------------------------ demo tables
def test_write_demo_tables(tmp_path):
    paths = write_demo_tables(str(tmp_path))
    assert paths == [str(tmp_path / name) for name in demo_table_specs()]
    for path in paths:
        table = HudiTable(path)
        timeline = table.get_timeline()
        completed = timeline.get_completed_commits() + timeline.get_completed_deltacommits()
        assert len(completed) + len(timeline.get_completed_replacecommits()) == 14
        assert _read(table)
    assert HudiTable(paths[1]).is_mor and not HudiTable(paths[0]).is_mor
    with pytest.raises(HudiInputError, match="already holds"):
        write_demo_tables(str(tmp_path))


@pytest.mark.s3
def test_generate_on_s3_writes_the_same_table(tmp_path):
    from support.s3_server import moto_s3

    local = _generate(tmp_path, "MERGE_ON_READ", True, commits=5)
    with moto_s3() as options:
        pafs.S3FileSystem(**options, allow_bucket_creation=True).create_dir("demo")
        storage = Storage("s3://demo/tables/mor", options)
        remote = generate_table(storage, "MERGE_ON_READ", name=Path(local.base_path).name, hive_style=True,
                                **{**SMALL, "seed": 7, "commits": 5})
        listed = {s.path for s in storage.list("", recursive=True) if not s.is_dir}
        assert listed == {p for p in _all_files(local.base_path)}
        assert remote.snapshots == local.snapshots
        reader = HudiTable("s3://demo/tables/mor", {
            "aws_endpoint": f"http://{options['endpoint_override']}", "aws_allow_http": "true",
            "aws_access_key_id": "test", "aws_secret_access_key": "test", "aws_region": "us-east-1"})
        assert _read(reader) == _values(remote.latest_rows.values())
