"""The whole graph on generated tables with real Spark: cleaned and archived, read the same by hudi-rs;
an unsafe plan is stopped by its blocking check with nothing deleted."""

from __future__ import annotations

import dagster as dg
import pytest
from hudi import HudiTable

from hudi_assets.clean.plan import CleanerPlan, CleanFileInfo
from hudi_assets.demo import generate_table
from hudi_assets.fsview import FileSystemView
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.resources import HudiTableRegistry, spark_resource
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import Instant, State
from hudi_assets.timeline.instant_time import new_instant_time

pytestmark = [pytest.mark.spark, pytest.mark.dagster]
SMALL_RETENTION = {"hoodie.cleaner.commits.retained": "3", "hoodie.keep.min.commits": "5",
                   "hoodie.keep.max.commits": "7"}
SPARK = spark_resource("local[2]")


def _rows(base: str) -> dict:
    return {r["_hoodie_record_key"]: (r["_hoodie_commit_time"], r["fare"])
            for batch in HudiTable(base).read() for r in batch.to_pylist()}


def _files(base) -> set[str]:
    return {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()}


def _run(registry: HudiTableRegistry, key: str, instance: dg.DagsterInstance):
    job = build_definitions(registry, SPARK).resolve_job_def(f"hudi_maintenance__default__{key}")
    return job.execute_in_process(instance=instance, raise_on_error=False)


def _metadata(result, asset: str) -> dict:
    event = next(e for e in result.get_asset_materialization_events()
                 if e.step_materialization_data.materialization.asset_key.path[-1] == asset)
    return {k: v.value for k, v in event.step_materialization_data.materialization.metadata.items()}


def _checks(result) -> dict:
    evaluations = [e.asset_check_evaluation_data for e in result.all_events
                   if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    return {f"{e.asset_key.path[-1]}.{e.check_name}": e for e in evaluations}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_whole_graph_cleans_and_archives_and_tables_read_the_same(tmp_path, table_type):
    base = tmp_path / "t"
    generate_table(Storage(str(base)), table_type, partitions=2, commits=12, seed=21)
    rows_before = _rows(str(base))
    registry = HudiTableRegistry(base_paths=[str(base)], hoodie_conf=SMALL_RETENTION, dry_run=False)
    with dg.instance_for_test() as instance:
        result = _run(registry, "t", instance)
        assert result.success
        errors = [c for c in _checks(result).values() if c.severity == dg.AssetCheckSeverity.ERROR]
        assert all(c.passed for c in errors) and len(errors) == 11
        plan, cleaned = _metadata(result, "clean_plan"), _metadata(result, "clean_result")
        archived = _metadata(result, "archive_batch")
    assert plan["files_to_delete"] > 0 and cleaned["files_deleted"] == plan["files_to_delete"]
    assert cleaned["bytes_reclaimed"] == plan["bytes_to_delete"] and cleaned["files_failed"] == 0
    assert archived["instants_archived"] > 0
    assert archived["active_instants_after"] < archived["active_instants_before"]
    # HoodieMetrics' names (prefix: the table name), metrics on or off
    assert cleaned["demo.clean.numFilesDeleted"] == cleaned["files_deleted"]
    assert archived["demo.archive.numInstantsArchived"] == archived["instants_archived"]
    assert _rows(str(base)) == rows_before


def test_unsafe_pending_plan_is_blocked_and_nothing_is_deleted(tmp_path):
    base = tmp_path / "t"
    generate_table(Storage(str(base)), "COPY_ON_WRITE", partitions=2, commits=8, seed=22)
    table = HoodieTable(str(base))
    view = FileSystemView(table)
    partition = view.partitions[0]
    latest = view.latest_file_slices(partition)[0]
    # Another tool left a pending clean that would delete a latest slice.
    bad = CleanerPlan(Instant("20240101000100000", "commit", State.COMPLETED), "", "KEEP_LATEST_COMMITS",
                      {partition: [CleanFileInfo(table.storage.uri(latest.paths[0]), False)]})
    t = new_instant_time(i.timestamp for i in table.active_timeline.raw_instants)  # not in the future
    table.storage.create_if_absent(f".hoodie/{t}.clean.requested", bad.serialize())
    before = _files(base)
    registry = HudiTableRegistry(base_paths=[str(base)], hoodie_conf=SMALL_RETENTION, engine="local",
                                 dry_run=False)
    with dg.instance_for_test() as instance:
        result = _run(registry, "t", instance)
        # Refused: no clean_plan materialization, the later steps skipped (not failed).
        plan_key = dg.AssetKey(["hudi", "default", "t", "clean_plan"])
        assert instance.get_latest_materialization_event(plan_key) is None
    assert result.success and not result.get_failed_step_keys()
    check = _checks(result)["clean_plan.plan_is_safe"]
    assert not check.passed and latest.paths[0] in check.description
    assert "latest file slice" in check.description
    # The way out names the table's real path and the Dagster job.
    assert f"hudi-assets clean {base} --discard-pending {t}" in check.description
    assert "hudi_discard_pending_clean" in check.description
    assert _files(base) == before  # nothing deleted, nothing archived, no new instant


def test_a_malformed_timeline_stops_the_clean_and_what_follows(tmp_path):
    base = tmp_path / "t"
    generate_table(Storage(str(base)), "COPY_ON_WRITE", partitions=2, commits=8, seed=22)
    first = sorted((base / ".hoodie").glob("*.commit"))[0]
    (base / ".hoodie" / "2024.commit").write_bytes(first.read_bytes())  # not an instant time
    before = _files(base)
    registry = HudiTableRegistry(base_paths=[str(base)], hoodie_conf=SMALL_RETENTION, engine="local",
                                 dry_run=False)
    with dg.instance_for_test() as instance:
        result = _run(registry, "t", instance)
        materialized = {e.step_materialization_data.materialization.asset_key.path[-1]
                        for e in result.get_asset_materialization_events()}
    assert result.success and materialized == {"timeline_snapshot"}
    assert not _checks(result)["timeline_snapshot.timeline_is_well_formed"].passed
    assert _files(base) == before


def test_dry_run_writes_nothing(tmp_path):
    base = tmp_path / "t"
    generate_table(Storage(str(base)), "MERGE_ON_READ", partitions=2, commits=10, seed=23)
    before = _files(base)
    registry = HudiTableRegistry(base_paths=[str(base)], hoodie_conf=SMALL_RETENTION, dry_run=True,
                                 engine="local")
    with dg.instance_for_test() as instance:
        result = _run(registry, "t", instance)
        assert result.success and _metadata(result, "clean_plan")["dry_run/files_to_delete"] > 0
        assert _metadata(result, "archive_batch")["dry_run/instants_selected"] > 0
    assert _files(base) == before
