"""The clean command end to end: Spark engine, CLI, safety refusals, and crashes (kill -9) at every
stage followed by a run that finishes the pending clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hudi import HudiTable
from support.builders import pending_clean

from hudi_assets.avro import deserialize_metadata, serialize_metadata
from hudi_assets.clean import CleanConfig, Cleaner, CleanPlanner
from hudi_assets.cli import main
from hudi_assets.config import WriteConfig
from hudi_assets.demo import generate_table
from hudi_assets.engine import LocalEngine, SparkEngine
from hudi_assets.exceptions import CleanAbortedError, UnsupportedTableError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_assets.timeline.instant import Instant
from hudi_assets.timeline.instant_time import new_instant_time

ARGS = {"partitions": 3, "commits": 12, "files_per_partition": 2, "records_per_file": 3,
        "update_fraction": 0.5, "bloom_entries": 1000, "seed": 5}
RETAIN = ["--hoodie-conf", "hoodie.cleaner.commits.retained=3"]


def _demo(path, table_type="COPY_ON_WRITE"):
    return generate_table(Storage(str(path)), table_type, name="t", **ARGS)


def _config(table, **conf):
    return CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, conf))


def _rows(path):
    import pyarrow as pa

    batches = HudiTable(str(path)).read()
    return sorted(r["id"] + r["_hoodie_commit_time"] for r in pa.Table.from_batches(batches).to_pylist())


def _cleans(path):
    return sorted(p.name for p in (path / ".hoodie").iterdir() if ".clean" in p.name)


# ------------------------------------------------------------------------------------ Spark
@pytest.mark.spark
def test_spark_engine_plans_and_cleans_like_local(tmp_path):
    _demo(tmp_path / "a", "MERGE_ON_READ")
    _demo(tmp_path / "b", "MERGE_ON_READ")
    a, b = HoodieTable(str(tmp_path / "a")), HoodieTable(str(tmp_path / "b"))
    config = _config(a, **{"hoodie.cleaner.commits.retained": "3"})
    engine = SparkEngine(master="local[2]")
    try:
        local_plan = CleanPlanner(a, config, LocalEngine()).plan()
        spark_plan = CleanPlanner(b, config, engine).plan()
        rel = lambda plan, t: {t.storage.relativize(f.file_path)  # noqa: E731
                               for fs in plan.file_paths_to_delete.values() for f in fs}
        assert rel(spark_plan, b) == rel(local_plan, a) and spark_plan.total_files > 0
        result = Cleaner(b, config, engine).clean()
        assert result.files_deleted == spark_plan.total_files
    finally:
        engine.session.stop()


# -------------------------------------------------------------------------------------- CLI
def test_cli_dry_run_writes_nothing_then_real_run(tmp_path, capsys):
    path = tmp_path / "t"
    _demo(path)
    before = sorted(p.relative_to(path) for p in path.rglob("*"))
    assert main(["clean", str(path), "--engine", "local", "--dry-run", *RETAIN]) == 0
    out = capsys.readouterr().out
    assert "policy: KEEP_LATEST_COMMITS" in out and "earliest commit to retain: 2024" in out
    assert "bytes" in out and "would be deleted" in out
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == before
    rows = _rows(path)
    assert main(["clean", str(path), "--engine", "local", *RETAIN]) == 0
    captured = capsys.readouterr()
    assert "files deleted" in captured.out and "deleted" in captured.err
    assert _rows(path) == rows
    assert main(["clean", str(path), "--engine", "local", *RETAIN]) == 0
    assert "nothing to clean" in capsys.readouterr().out


def test_cli_bad_input_exit_2(tmp_path, capsys):
    path = tmp_path / "t"
    _demo(path)
    props = tmp_path / "c.properties"
    props.write_text("hoodie.cleaner.commits.retained=many\n")
    assert main(["clean", str(path), "--engine", "local", "--props", str(props)]) == 2
    assert "hoodie.cleaner.commits.retained='many'" in capsys.readouterr().err
    assert main(["clean", str(tmp_path / "missing"), "--engine", "local"]) == 2


def test_config_precedence_inference_and_aliases(tmp_path):
    path = tmp_path / "t"
    _demo(path)
    table = HoodieTable(str(path))
    props = tmp_path / "c.properties"
    props.write_text("hoodie.clean.commits.retained=7\nhoodie.cleaner.parallelism=4\n")
    config = CleanConfig.from_write_config(
        WriteConfig.load(table.config.props, str(props), ["hoodie.cleaner.parallelism=9"]))
    assert (config.policy, config.commits_retained, config.parallelism) == ("KEEP_LATEST_COMMITS", 7, 9)
    hours = _config(table, **{"hoodie.clean.hours.retained": "5"})
    assert hours.policy == "KEEP_LATEST_BY_HOURS" and hours.hours_retained == 5
    both = _config(table, **{"hoodie.cleaner.hours.retained": "5",
                             "hoodie.cleaner.fileversions.retained": "2"})
    assert both.policy == "KEEP_LATEST_COMMITS"
    assert not _config(table).allow_multiple  # 0.15 default
    from hudi_assets.exceptions import InvalidConfigError
    with pytest.raises(InvalidConfigError, match=r"hoodie\.keep\.max\.commits"):
        _config(table, **{"hoodie.keep.min.commits": "30", "hoodie.keep.max.commits": "30"})
    with pytest.raises(InvalidConfigError, match="trigger"):
        _config(table, **{"hoodie.clean.trigger.strategy": "NUM_HOURS"})


# ----------------------------------------------------------------------------------- safety
def test_refuses_a_listed_metadata_table_that_is_missing(tmp_path, capsys):
    path = tmp_path / "t"
    _demo(path)
    storage = Storage(str(path))
    props = dict(HoodieTable(str(path)).config.props)
    write_table_config(storage, {**props, "hoodie.table.metadata.partitions": "files"})
    listing = sorted(p.relative_to(path) for p in path.rglob("*"))
    assert main(["clean", str(path), "--engine", "local", *RETAIN]) == 2
    err = capsys.readouterr().err
    assert "lists metadata partitions but" in err
    assert ".hoodie/metadata/.hoodie/hoodie.properties is missing" in err
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == listing
    with pytest.raises(UnsupportedTableError):
        Cleaner(HoodieTable(str(path)), _config(HoodieTable(str(path)))).clean()


def test_stops_when_a_later_commit_references_a_planned_file(tmp_path):
    path = tmp_path / "t"
    _demo(path)
    table = HoodieTable(str(path))
    config = _config(table, **{"hoodie.cleaner.commits.retained": "3"})
    plan = CleanPlanner(table, config).plan()
    victim = table.storage.relativize(next(iter(plan.file_paths_to_delete.values()))[0].file_path)
    pending_clean(table, plan)
    # A commit completing after the plan (before execution) references a planned file.
    t = new_instant_time(i.timestamp for i in table.reload_timeline().raw_instants)
    stat = WriteStat.new(fileId="x", path=victim, partitionPath=victim.rpartition("/")[0])
    meta = CommitMetadata({victim.rpartition("/")[0]: [stat]}, operation_type="UPSERT")
    table.storage.write(f".hoodie/{t}.commit", meta.to_json())
    files = sorted(p.relative_to(path) for p in path.rglob("*") if ".hoodie" not in p.parts)
    with pytest.raises(CleanAbortedError, match="references"):
        Cleaner(table, config).run_pending()
    assert sorted(p.relative_to(path) for p in path.rglob("*") if ".hoodie" not in p.parts) == files
    assert not list((path / ".hoodie").glob("*.clean.inflight"))


def test_stops_on_plan_path_outside_base(tmp_path):
    path = tmp_path / "t"
    _demo(path)
    outside = tmp_path / "precious.parquet"
    outside.write_bytes(b"keep me")
    table = HoodieTable(str(path))
    config = _config(table, **{"hoodie.cleaner.commits.retained": "3"})
    plan = CleanPlanner(table, config).plan()
    from hudi_assets.clean.plan import CleanFileInfo
    first = next(iter(plan.file_paths_to_delete))
    plan.file_paths_to_delete[first].append(CleanFileInfo(f"file:{outside}"))
    pending_clean(table, plan)
    files = sorted(p.relative_to(path) for p in path.rglob("*"))
    assert main(["clean", str(path), "--engine", "local", *RETAIN]) == 2
    assert outside.exists()
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == files


def test_pending_cleans_finished_in_order_and_empty_state_file_removed(tmp_path):
    path = tmp_path / "t"
    _demo(path)
    table = HoodieTable(str(path))
    config = _config(table, **{"hoodie.cleaner.commits.retained": "3"})
    empty = pending_clean(table, None)
    table.reload_timeline()
    cleaner = Cleaner(table, _config(table, **{"hoodie.clean.allow.multiple": "true",
                                                "hoodie.cleaner.commits.retained": "3"}))
    plan = cleaner.plan()
    scheduled = cleaner.request(plan)
    assert scheduled > empty.timestamp
    result = Cleaner(table, config).clean()
    assert result.scheduled is None  # allow.multiple=false: a clean was pending, none scheduled
    assert list(result.completed) == [scheduled]
    assert not table.storage.exists(f".hoodie/{empty.file_name}")
    assert result.files_deleted == plan.total_files



def _count_timeline_reads(table: HoodieTable) -> list[int]:
    """Counts `table.reload_timeline()` calls (each one a listing of `.hoodie/`); the reload still runs."""
    reads = []
    reload = table.reload_timeline

    def counted():
        reads.append(1)
        return reload()

    table.reload_timeline = counted
    return reads


@pytest.mark.parametrize("scheduled", [True, False])
def test_one_clean_reads_the_timeline_once_per_step(tmp_path, scheduled):
    """A clean reads the timeline for the pending cleans; when it schedules, for the new instant time
    and for the pending cleans again; before its deletes (a newer commit must not name a planned file)
    and after executing. Validating the pending cleans it has just read does not read it again."""
    path = tmp_path / "t"
    _demo(path)
    table = HoodieTable(str(path))
    config = _config(table, **{"hoodie.cleaner.commits.retained": "3"})
    if not scheduled:
        cleaner = Cleaner(table, config)
        cleaner.request(cleaner.plan())
    reads = _count_timeline_reads(table)
    result = Cleaner(table, config).clean()
    assert (result.scheduled is not None) == scheduled and len(result.executed) == 1
    assert len(reads) == (5 if scheduled else 3)


# ------------------------------------------------------------------------------------ crashes
@pytest.mark.parametrize("point", ["CLEAN_INFLIGHT", "CLEAN_DELETES:1", "CLEAN_DELETES:5", "CLEAN_PARTITIONS",
                                   "CLEAN_COMPLETE"])
def test_kill_9_then_rerun_finishes(tmp_path, point):
    path = tmp_path / "t"
    demo = _demo(path, "MERGE_ON_READ" if point == "CLEAN_DELETES:5" else "COPY_ON_WRITE")
    rows = _rows(path)
    reader = HudiTable(str(path))
    commits = demo.completed_commits
    import pyarrow as pa
    from hudi import HudiReadOptions

    def as_of(t):
        batches = HudiTable(str(path)).read(HudiReadOptions().with_as_of_timestamp(t))
        return sorted(r["id"] + r["_hoodie_commit_time"] for r in pa.Table.from_batches(batches).to_pylist())

    del reader
    retained = commits[-3:]
    before = {t: as_of(t) for t in retained}
    kill = [sys.executable, str(Path(__file__).parents[1] / "support/kill_clean.py"), str(path), point, "3"]
    proc = subprocess.run(kill, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    pending = [n for n in _cleans(path) if n.endswith(".requested") or n.endswith(".inflight")]
    assert pending and not [n for n in _cleans(path) if n.endswith(".clean")]
    # Readable, with every retained instant intact, while the clean is pending.
    assert _rows(path) == rows
    assert {t: as_of(t) for t in retained} == before
    cmd = [sys.executable, "-m", "hudi_assets.cli", "clean", str(path), "--engine", "local", *RETAIN]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    completed = [n for n in _cleans(path) if n.endswith(".clean")]
    assert len(completed) == 1
    assert _rows(path) == rows and {t: as_of(t) for t in retained} == before
    table = HoodieTable(str(path))
    from hudi_assets.timeline.metadata import completed_metadata
    meta = completed_metadata(table.active_timeline, Instant(completed[0].split(".")[0], "clean"))
    assert meta["totalFilesDeleted"] > 0
    assert all(not pm["failedDeleteFiles"] for pm in meta["partitionMetadata"].values())


def test_serialized_plan_roundtrip(tmp_path):
    path = tmp_path / "t"
    _demo(path)
    table = HoodieTable(str(path))
    plan = CleanPlanner(table, _config(table, **{"hoodie.cleaner.commits.retained": "3"})).plan()
    data = plan.serialize()
    again = type(plan).deserialize(data, "x")
    assert again.file_paths_to_delete == plan.file_paths_to_delete
    assert again.earliest_instant_to_retain == plan.earliest_instant_to_retain
    # Same record (container bytes differ only by the random sync marker).
    rewritten = serialize_metadata("HoodieCleanerPlan", again.to_record())
    reread = deserialize_metadata(rewritten, "HoodieCleanerPlan", "x")
    assert reread == deserialize_metadata(data, "HoodieCleanerPlan", "x")
    assert reread["version"] == 2 and reread["filesToBeDeletedPerPartition"] == {}
