"""The Dagster face: materializing the graph on generated tables, blocking checks, the sensor."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from hudi_assets.demo import generate_table
from hudi_assets.orchestration.assets import TABLES
from hudi_assets.orchestration.automation import hudi_maintenance_sensor
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.storage import Storage

pytestmark = pytest.mark.dagster


@pytest.fixture
def lake(tmp_path):
    for name, kind in (("cow", "COPY_ON_WRITE"), ("mor", "MERGE_ON_READ")):
        generate_table(Storage(str(tmp_path / name)), kind, name=name, partitions=2, commits=6, seed=3)
    return tmp_path


def _materialize(registry: HudiTableRegistry, key: str, instance: dg.DagsterInstance):
    defs = build_definitions(registry)
    instance.add_dynamic_partitions(TABLES.name, [key])
    job = defs.resolve_implicit_global_asset_job_def()
    return job.execute_in_process(partition_key=key, instance=instance, raise_on_error=False)


def _checks(result) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data
            for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}


def test_timeline_snapshot_and_checks_pass_on_generated_tables(lake):
    registry = HudiTableRegistry(roots=[str(lake)])
    assert set(registry.tables()) == {"cow", "mor"}
    with dg.instance_for_test() as instance:
        for key in ("cow", "mor"):
            result = _materialize(registry, key, instance)
            assert result.success
            frame = result.output_for_node("timeline_snapshot")
            assert set(frame["action"]) >= {"deltacommit" if key == "mor" else "commit", "replacecommit"}
            checks = _checks(result)
            assert checks["retention_settings_are_safe"].passed and checks["timeline_is_well_formed"].passed
            metadata = next(e for e in result.all_events if e.event_type_value == "ASSET_MATERIALIZATION")
            values = metadata.event_specific_data.materialization.metadata
            assert values["active_instants"].value == len(frame) and values["pending_instants"].value >= 1


def test_unsafe_retention_stops_the_run_naming_both_values(lake):
    registry = HudiTableRegistry(roots=[str(lake)], table_hoodie_conf={
        "cow": {"hoodie.cleaner.commits.retained": "25", "hoodie.keep.min.commits": "20"}})
    with dg.instance_for_test() as instance:
        result = _materialize(registry, "cow", instance)
        assert not result.success
        check = _checks(result)["retention_settings_are_safe"]
        assert not check.passed
        assert ("hoodie.cleaner.commits.retained=25, hoodie.keep.min.commits=20"
                in check.description)
        assert _materialize(registry, "mor", instance).success  # the other table is unaffected


def test_sensor_adds_tables_and_requests_runs_only_past_thresholds(lake):
    registry = HudiTableRegistry(roots=[str(lake)], hoodie_conf={"hoodie.clean.max.commits": "100",
                                                                 "hoodie.keep.max.commits": "100"})
    with dg.instance_for_test() as instance:
        context = dg.build_sensor_context(instance=instance, resources={"hudi": registry})
        result = hudi_maintenance_sensor(context)
        assert result.run_requests == []  # below every threshold
        assert result.dynamic_partitions_requests[0].partition_keys == ["cow", "mor"]
        cursor = json.loads(result.cursor)
        assert set(cursor) == {"cow", "mor"}

        eager = HudiTableRegistry(roots=[str(lake)], hoodie_conf={"hoodie.clean.max.commits": "100"},
                                  table_hoodie_conf={"mor": {"hoodie.clean.max.commits": "3"}})
        instance.add_dynamic_partitions(TABLES.name, ["cow", "mor"])
        context = dg.build_sensor_context(instance=instance, resources={"hudi": eager})
        result = hudi_maintenance_sensor(context)  # no cursor: looks at both tables again
        requested = [(r.partition_key, r.tags["hudi/table"], r.tags["hudi/reason"])
                     for r in result.run_requests]
        assert requested == [("mor", "mor", "clean")]
        context = dg.build_sensor_context(instance=instance, resources={"hudi": eager}, cursor=result.cursor)
        assert hudi_maintenance_sensor(context).run_requests == []  # nothing new since the cursor


def test_sensor_requests_archival_past_keep_max(lake):
    registry = HudiTableRegistry(roots=[str(lake)], hoodie_conf={
        "hoodie.clean.max.commits": "100", "hoodie.cleaner.commits.retained": "2",
        "hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4"})
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(TABLES.name, ["cow", "mor"])
        context = dg.build_sensor_context(instance=instance, resources={"hudi": registry})
        result = hudi_maintenance_sensor(context)
        # Six commits (plus an insert_overwrite) exceed keep.max=4 on both tables; no clean is due.
        assert sorted((r.partition_key, r.tags["hudi/reason"]) for r in result.run_requests) == [
            ("cow", "archive"), ("mor", "archive")]
        assert all(r.run_key.startswith(f"{r.partition_key}:") for r in result.run_requests)
