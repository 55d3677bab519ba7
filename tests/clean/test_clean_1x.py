"""Clean on the Java-written Hudi 1.x tables (table versions 8 and 9, issue 24): each policy with
retained 1 completes; hudi-rs (an independent reader) reads the same rows in the latest snapshot and
as of every commit at or after the earliest commit to retain; the files deleted are exactly those
outside what the policy keeps (hudi-rs's file slices as of the commits a reader may still ask for);
the plan, the empty inflight and `<t>_<c>.clean` are written as Hudi 1.x writes them and decode with
Hudi's schemas; a second run deletes nothing."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import fastavro
import pytest
from support.failed_tables import clean_schemas
from support.refdata import more_table_zips, params_or_skip, table_zips, unzip_table

from hudi_assets.clean import Cleaner
from hudi_assets.clean.config import CleanConfig
from hudi_assets.clean.plan import (
    SAVEPOINTED_TIMESTAMPS,
    CleanerPlan,
    clean_metadata_record,
    serialize_clean_metadata,
)
from hudi_assets.clean.planner import CleanPlanner
from hudi_assets.cli import main
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import CLEAN, Instant, State
from hudi_assets.timeline.instant_time import new_instant_time, parse_instant_time
from hudi_assets.timeline.layout2 import parse_layout2_name

hudi = pytest.importorskip("hudi")

V8_V9 = [n for n in table_zips(8) + table_zips(9) + more_table_zips() if "lance" not in n]
POLICIES = {
    "commits": {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS", "hoodie.cleaner.commits.retained": 1},
    "file_versions": {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                      "hoodie.cleaner.fileversions.retained": 1},
    "hours": {"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS", "hoodie.cleaner.hours.retained": 1},
}


@pytest.fixture(scope="module")
def unzipped(tmp_path_factory):
    root = tmp_path_factory.mktemp("v8_v9")
    cache: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in cache:
            cache[name] = unzip_table(name, root / name.replace("/", "_"))
        return cache[name]
    return get


def _rows(base: Path, as_of: str | None = None) -> list[str]:
    table = hudi.HudiTableBuilder.from_base_uri(str(base)).build()
    batches = table.read(hudi.HudiReadOptions().with_as_of_timestamp(as_of) if as_of else None)
    return sorted(repr(sorted(r.items())) for batch in batches for r in batch.to_pylist())


def _slice_files(base: Path, as_of: str | None = None) -> set[str]:
    """The files of hudi-rs's file slices (as of `as_of`), relative to the base path."""
    table = hudi.HudiTableBuilder.from_base_uri(str(base)).build()
    options = hudi.HudiReadOptions().with_as_of_timestamp(as_of) if as_of else None
    files = set()
    for s in table.get_file_slices(options):
        if s.base_file_name:
            files.add(s.base_file_relative_path())
        files.update(s.log_files_relative_paths())
    return files


def _planned(plan) -> tuple:
    return (plan.ectr_timestamp, {p: sorted(f.file_path for f in files)
                                  for p, files in plan.file_paths_to_delete.items()},
            sorted(plan.partitions_to_delete))


def _data_files(base: Path) -> set[str]:
    return {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()
            and ".hoodie" not in p.relative_to(base).parts
            and (p.suffix == ".parquet" or ".log." in p.name)}


def _all_files(base: Path) -> dict[str, int]:
    return {str(p.relative_to(base)): p.stat().st_size for p in base.rglob("*") if p.is_file()}


def _clock(table: HoodieTable, policy: str):
    """BY_HOURS retaining 1 hour, an hour after the last commit was requested: the cutoff falls on
    the last commit, as KEEP_LATEST_COMMITS retaining 1 would (the tables are from 2025)."""
    last = table.active_timeline.commits_and_compaction_timeline().filter_completed().last()
    if policy != "hours" or last is None:
        return lambda: datetime.now(UTC)
    at = parse_instant_time(last.timestamp).astimezone() + timedelta(hours=1)
    return lambda: at


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("name", params_or_skip(V8_V9, "v8/v9 tables"))
def test_clean_1x_tables_under_each_policy(unzipped, tmp_path, name, policy):
    base = Path(shutil.copytree(unzipped(name), tmp_path / "t"))
    table = HoodieTable(str(base), hoodie_conf=POLICIES[policy])
    timeline = table.active_timeline
    retain_timeline = timeline.commits_and_compaction_timeline().filter_completed()
    commits = timeline.write_timeline().filter_completed().timestamps
    data_before = _data_files(base)
    rows_before = {t: _rows(base, t) for t in [None, *commits]}
    as_of_slices = {t: _slice_files(base, t) for t in [None, *retain_timeline.timestamps]}

    if table.config.has_metadata_table:  # planned from the metadata table, as from storage
        listing = {**POLICIES[policy], "hoodie.metadata.enable": "false"}
        from_storage = HoodieTable(str(base), hoodie_conf=listing)
        planned = Cleaner.for_table(from_storage, clock=_clock(table, policy)).dry_run().plan
        assert _planned(Cleaner.for_table(table, clock=_clock(table, policy)).dry_run().plan) == \
            _planned(planned)
    mdt_before = _all_files(base / ".hoodie" / "metadata") if table.config.has_metadata_table else {}
    result = Cleaner.for_table(table, clock=_clock(table, policy)).clean()

    deleted = data_before - _data_files(base)
    plan = result.plan
    ectr = plan.ectr_timestamp if plan is not None else None
    if policy == "file_versions":
        kept = as_of_slices[None]
    elif ectr is None:
        kept = data_before
    else:
        # What a reader as of the last commit before ECTR, and as of ECTR and every later commit, reads.
        before = [t for t in retain_timeline.timestamps if t < ectr]
        wanted = [*before[-1:], *(t for t in retain_timeline.timestamps if t >= ectr), None]
        kept = set().union(*(as_of_slices[t] for t in wanted))
    assert deleted == data_before - kept, (ectr, sorted(deleted), sorted(data_before - kept))
    assert _rows(base) == rows_before[None]
    for t in commits:
        if (ectr is None and policy != "file_versions") or (ectr is not None and t >= ectr):
            assert _rows(base, t) == rows_before[t], t
    if deleted:
        _check_written_as_1x(base, table, result.scheduled, deleted)
    else:
        assert result.scheduled is None
    if mdt_before:
        assert main(["metadata", str(base), "--validate"]) == 0
        _check_metadata_deltacommit(base, table, result.scheduled if deleted else None, mdt_before)
    after = _all_files(base)
    again = Cleaner.for_table(HoodieTable(str(base), hoodie_conf=POLICIES[policy]),
                              clock=_clock(table, policy)).clean()
    assert again.files_deleted == 0
    assert {k for k in _all_files(base) if ".hoodie" not in k} == {k for k in after if ".hoodie" not in k}


def _check_written_as_1x(base: Path, table: HoodieTable, instant_time: str, deleted: set[str]) -> None:
    """`.clean.requested` = the plan, an empty `.clean.inflight`, `<t>_<c>.clean` = the metadata, each
    decoded with Hudi's schemas; the completion time follows every other time on the timeline."""
    schemas = clean_schemas()
    folder = base / ".hoodie" / "timeline"
    assert (folder / f"{instant_time}.clean.inflight").read_bytes() == b""
    [plan] = fastavro.reader(io.BytesIO((folder / f"{instant_time}.clean.requested").read_bytes()),
                             reader_schema=schemas["HoodieCleanerPlan"])
    assert plan["version"] == 2
    planned = {p.partition(f"{base}/")[2]
               for files in plan["filePathsToBeDeletedPerPartition"].values() for p in
               (f["filePath"] for f in files)}
    assert planned == deleted
    [completed] = [p for p in folder.iterdir() if p.name.startswith(f"{instant_time}_")]
    done, completion = parse_layout2_name(completed.name)
    assert done.action == CLEAN and len(completion) == 17
    timeline = table.reload_timeline()
    assert completion == max(timeline.completion_times.values())
    assert timeline.get(instant_time, CLEAN).state is State.COMPLETED
    [metadata] = fastavro.reader(io.BytesIO(completed.read_bytes()),
                                 reader_schema=schemas["HoodieCleanMetadata"])
    assert metadata["version"] == 2 and metadata["totalFilesDeleted"] == len(deleted)
    assert metadata["startCleanTime"] == instant_time
    assert {f"{p}/{n}" if p else n for p, stat in metadata["partitionMetadata"].items()
            for n in stat["successDeleteFiles"]} == deleted


def _last_clean(table: HoodieTable, ectr: str, savepointed: str) -> None:
    """A completed clean (as 1.x writes it) whose earliest commit to retain is `ectr` and that
    recorded the savepoints `savepointed` (comma-separated) in its plan's extra metadata."""
    timeline = table.reload_timeline()
    instant_time = new_instant_time(timeline.timestamps)
    extra = {SAVEPOINTED_TIMESTAMPS: savepointed} if savepointed else {}
    plan = CleanerPlan(timeline.get(ectr), ectr, "KEEP_LATEST_COMMITS", extra_metadata=extra)
    requested = Instant(instant_time, CLEAN, State.REQUESTED)
    timeline.create_state_file(requested, plan.serialize())
    timeline.create_state_file(requested.with_state(State.INFLIGHT), b"")
    record = clean_metadata_record(instant_time, 0, plan, [])
    timeline.create_state_file(requested.with_state(State.COMPLETED), serialize_clean_metadata(record))


@pytest.mark.parametrize(("savepointed", "scans_all"), [("", False), ("20200101000000000", True)])
def test_incremental_planning_lists_every_partition_once_a_recorded_savepoint_is_gone(
        unzipped, tmp_path, savepointed, scans_all):
    """Hudi 1.x (CleanPlanner.isAnySavepointDeleted): a savepoint the last clean recorded that is gone
    now sends the planner to a full listing; otherwise it scans the partitions of the commits between
    the last clean's earliest commit to retain and the new one (none here: both are the last commit)."""
    name = next((n for n in V8_V9 if n.endswith("v9_txns_simple_nometa") and "cow" in n), None)
    if name is None:
        pytest.skip("../shared is absent: no partitioned v9 table without a metadata table")
    base = Path(shutil.copytree(unzipped(name), tmp_path / "t"))
    table = HoodieTable(str(base), hoodie_conf=POLICIES["commits"])
    last = table.active_timeline.commits_and_compaction_timeline().filter_completed().last().timestamp
    _last_clean(table, last, savepointed)
    table.reload_timeline()
    planner = CleanPlanner(table, CleanConfig.from_write_config(table.write_config))
    ectr = planner.earliest_commit_to_retain()
    assert ectr.timestamp == last
    partitions = planner.partitions_to_clean(ectr)
    assert sorted(partitions) == (sorted(planner.all_partitions()) if scans_all else [])
    assert len(planner.all_partitions()) > 1


def _check_metadata_deltacommit(base: Path, table: HoodieTable, instant_time: str | None,
                                before: dict[str, int]) -> None:
    """The clean's metadata deltacommit as 1.x writes it: `<t>_<c>.deltacommit` on the metadata
    table's layout-2 timeline, a new log file per file group it touches named by the clean's instant,
    no other file of the metadata table changed, nothing in partition_stats, record_index or the
    secondary indexes; column_stats stubs for every deleted file, with `valueType` on version 9."""
    mdt = base / ".hoodie" / "metadata"
    added = sorted(set(_all_files(mdt)) - set(before))
    assert all(before[k] == v for k, v in _all_files(mdt).items() if k in before)
    if instant_time is None:
        assert added == []
        return
    folder = Path(".hoodie") / "timeline"
    states = sorted(a for a in added if a.startswith(str(folder)))
    completed = [s for s in states if s.endswith(".deltacommit") and "_" in Path(s).name]
    assert [Path(s).name for s in states if s not in completed] == [
        f"{instant_time}.deltacommit.inflight", f"{instant_time}.deltacommit.requested"]
    assert len(completed) == 1 and Path(completed[0]).name.startswith(f"{instant_time}_")
    logs = [a for a in added if not a.startswith(".hoodie")]
    assert logs and all(Path(a).name.startswith(".") and f"_{instant_time}.log.1_" in a for a in logs)
    assert {a.split("/")[0] for a in logs} <= {"files", "column_stats", "bloom_filters"}
    if any(a.startswith("column_stats/") for a in logs):
        from hudi_assets.logformat import read_blocks
        from hudi_assets.logformat.hfile_block import decode_hfile_data_block

        stats = [v["ColumnStatsMetadata"] for a in logs if a.startswith("column_stats/")
                 for b in read_blocks((mdt / a).read_bytes(), a)
                 for _, v in decode_hfile_data_block(b, path=a)]
        assert stats and all(s["isDeleted"] for s in stats)
        expected = {"typeOrdinal": 1, "additionalInfo": None} if table.config.table_version == 9 else None
        assert all(s.get("valueType") == expected for s in stats)


V9_MOR = "sample_table__mor__avro__v9_txns_simple_meta"
KILL_POINTS = ["CLEAN_INFLIGHT", "CLEAN_DELETES:1", "CLEAN_DELETES:7", "CLEAN_PARTITIONS", "MDT_REQUESTED",
               "MDT_BLOCK_WRITTEN:1", "MDT_BLOCK_WRITTEN:2", "MDT_COMPLETED", "CLEAN_COMPLETE"]


@pytest.mark.parametrize("point", KILL_POINTS)
def test_sigkill_at_each_step_of_a_v9_clean_then_the_next_run_completes(unzipped, tmp_path, point):
    """A v9 merge-on-read table with a metadata table: SIGKILL at each step of its clean. Meanwhile
    hudi-rs reads the same rows now and as of the commits at or after the ECTR (the deleted files are
    of slices no such reader needs); the next run completes the pending clean, the metadata table
    validates, and the metadata deltacommit of the clean is there once."""
    if V9_MOR not in V8_V9:
        pytest.skip("../shared is absent: no v9 merge-on-read table")
    base = Path(shutil.copytree(unzipped(V9_MOR), tmp_path / "t"))
    timeline = HoodieTable(str(base)).active_timeline
    last = timeline.commits_and_compaction_timeline().filter_completed().last().timestamp
    retained = [t for t in timeline.write_timeline().filter_completed().timestamps if t >= last]
    before = {t: _rows(base, t) for t in [None, *retained]}
    script = Path(__file__).parents[1] / "support" / "kill_clean.py"
    proc = subprocess.run([sys.executable, str(script), str(base), point, "1"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == -9, proc.stderr
    folder = base / ".hoodie" / "timeline"
    assert not [p for p in folder.iterdir() if p.name.endswith(".clean") and "_" in p.name]
    assert {t: _rows(base, t) for t in before} == before
    again = ["clean", str(base), "--engine", "local", "--hoodie-conf", "hoodie.cleaner.commits.retained=1"]
    assert main(again) == 0
    [completed] = [p.name for p in folder.iterdir() if p.name.endswith(".clean")]
    instant_time = completed.partition("_")[0]
    assert {t: _rows(base, t) for t in before} == before
    assert main(["metadata", str(base), "--validate"]) == 0
    mdt_timeline = base / ".hoodie" / "metadata" / ".hoodie" / "timeline"
    assert sorted(p.name.partition("_")[0] if "_" in p.name else p.name for p in mdt_timeline.iterdir()
                  if p.name.startswith(instant_time)) == [
        instant_time, f"{instant_time}.deltacommit.inflight", f"{instant_time}.deltacommit.requested"]
    logs = [p for p in (base / ".hoodie" / "metadata").rglob(f"*_{instant_time}.log.*")]
    assert len(logs) == len({p.name.split("_")[0] for p in logs})  # one new log file per file group
    assert not (base / ".hoodie" / ".temp" / instant_time).exists()
    assert not (base / ".hoodie" / "metadata" / ".hoodie" / ".temp" / instant_time).exists()


def test_lazy_failed_writes_policy_cleans_a_1x_table_with_no_failed_write(unzipped, tmp_path):
    """Under LAZY a clean first rolls back failed writes; with none on the table, it needs no rollback
    (which table versions 8/9 do not have yet) and cleans."""
    name = next((n for n in V8_V9 if n.endswith("cow__v9_txns_simple_meta")), None)
    if name is None:
        pytest.skip("../shared is absent: no v9 table with a metadata table")
    base = Path(shutil.copytree(unzipped(name), tmp_path / "t"))
    conf = {**POLICIES["commits"], "hoodie.cleaner.policy.failed.writes": "LAZY"}
    result = Cleaner.for_table(HoodieTable(str(base), hoodie_conf=conf)).clean()
    assert result.files_deleted > 0


@pytest.mark.dagster
def test_the_dagster_graph_cleans_and_archives_a_v9_table(unzipped, tmp_path):
    """The Dagster face runs the whole graph on a 1.x table with nothing new to configure: the clean
    deletes, the archive steps run on the LSM history, the metadata-table services run; none refuses."""
    import dagster as dg

    from hudi_assets.orchestration.definitions import build_definitions
    from hudi_assets.orchestration.resources import HudiTableRegistry

    name = next((n for n in V8_V9 if n.endswith("cow__v9_txns_simple_meta")), None)
    if name is None:
        pytest.skip("../shared is absent: no v9 table with a metadata table")
    base = Path(shutil.copytree(unzipped(name), tmp_path / "t"))
    data_before = _data_files(base)
    registry = HudiTableRegistry(base_paths=[str(base)], engine="local", dry_run=False,
                                 hoodie_conf={"hoodie.cleaner.commits.retained": "1"})
    definitions = build_definitions(registry)
    with dg.instance_for_test() as instance:
        [job] = [j for j in definitions.resolve_all_job_defs()
                 if j.name.startswith("hudi_maintenance__") and j.name.endswith("__t")]
        result = job.execute_in_process(instance=instance, raise_on_error=False)
        logs = [e.message for e in instance.all_logs(result.run_id) if e.message]
    assert result.success and not result.get_failed_step_keys()
    materialized = {e.step_materialization_data.materialization.asset_key.path[-1]
                    for e in result.get_asset_materialization_events()}
    assert {"clean_result", "archive_batch", "merged_archive_files", "metadata_services"} <= materialized
    assert len(data_before - _data_files(base)) > 0
    assert not [m for m in logs if "refused" in m or "not supported" in m]
    assert main(["metadata", str(base), "--validate"]) == 0
