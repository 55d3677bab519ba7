"""The sensor and schedule: tables register themselves, runs follow what the timeline says is due,
a table with a run in progress is left alone, and every tick says why it requested nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg
import pytest

from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.clean.config import CleanConfig
from hudi_assets.config import WriteConfig
from hudi_assets.demo import generate_table
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.factory import TABLES
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

pytestmark = pytest.mark.dagster

QUIET = {"hoodie.clean.max.commits": "100", "hoodie.keep.max.commits": "100"}


@pytest.fixture
def lake(tmp_path):
    for name, kind in (("cow", "COPY_ON_WRITE"), ("mor", "MERGE_ON_READ")):
        generate_table(Storage(str(tmp_path / name)), kind, name=name, partitions=2, commits=6, seed=3)
    return tmp_path


def _tick(registry: HudiTableRegistry, instance, cursor: str | None = None, partitioned: bool = False):
    defs = build_definitions(registry, partitioned=partitioned)
    sensor = defs.resolve_sensor_def("hudi_maintenance_sensor")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING  # registers tables with no manual step
    context = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"hudi": registry},
                                      definitions=defs)
    # A test instance cannot resolve new partitions the way the daemon does: look at the raw result.
    return sensor(context) if partitioned else sensor.evaluate_tick(context)


def _requested(result) -> list[tuple[str, str]]:
    return sorted((r.tags["hudi/table"], r.tags["hudi/reason"]) for r in result.run_requests)


def test_nothing_due_is_said_per_table(lake):
    with dg.instance_for_test() as instance:
        result = _tick(HudiTableRegistry(roots=[str(lake)], hoodie_conf=QUIET), instance)
    assert result.run_requests == []
    # In the words of `hudi-assets status` (`status.reasons`).
    assert ("cow: not due (clean not due: 6 commits since the last clean < hoodie.clean.max.commits=100; "
            "archive not due: 6 completed commits <= hoodie.keep.max.commits=100" in result.skip_message)
    assert "mor: not due" in result.skip_message


def test_due_tables_are_requested_once_per_timeline_and_settings(lake):
    registry = HudiTableRegistry(roots=[str(lake)], hoodie_conf=QUIET,
                                 table_hoodie_conf={"mor": {"hoodie.clean.max.commits": "3"}})
    with dg.instance_for_test() as instance:
        first = _tick(registry, instance)
        assert _requested(first) == [("mor", "clean")]
        request = first.run_requests[0]
        assert request.tags["hudi/dry_run"] == "true"  # the registry has not opted in to deleting
        assert {k.path[2] for k in request.asset_selection} == {"mor"}
        again = _tick(registry, instance, first.cursor)
        assert again.run_requests == [] and "mor: due, already requested" in again.skip_message

        # A clean requested by a running run is not a write: nothing new to request.
        table = HoodieTable(str(lake / "mor"))
        config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, overrides={
            "hoodie.cleaner.commits.retained": "2"}))
        cleaner = Cleaner(table, config)
        assert cleaner.request(cleaner.plan()) is not None
        assert _tick(registry, instance, first.cursor).run_requests == []

        # Lowering a retention setting is noticed.
        lowered = HudiTableRegistry(roots=[str(lake)], hoodie_conf={
            **QUIET, "hoodie.cleaner.commits.retained": "2", "hoodie.keep.min.commits": "3",
            "hoodie.keep.max.commits": "4"},
                                    table_hoodie_conf={"mor": {"hoodie.clean.max.commits": "3"}})
        assert _requested(_tick(lowered, instance, first.cursor)) == [("cow", "archive"), ("mor", "clean")]


def test_run_keys_stay_unique_when_settings_come_back(lake):
    """Settings back to a combination already seen, same latest commit: a new request, a new run key
    (Dagster silently drops a request whose run key it has seen)."""
    due = {"mor": {"hoodie.clean.max.commits": "3"}}
    first_settings = HudiTableRegistry(roots=[str(lake)], hoodie_conf=QUIET, table_hoodie_conf=due)
    other_settings = HudiTableRegistry(roots=[str(lake)], table_hoodie_conf=due,
                                       hoodie_conf={**QUIET, "hoodie.cleaner.commits.retained": "5"})
    with dg.instance_for_test() as instance:
        first = _tick(first_settings, instance)
        second = _tick(other_settings, instance, first.cursor)
        third = _tick(first_settings, instance, second.cursor)
    keys = [tick.run_requests[0].run_key for tick in (first, second, third)]
    assert len(set(keys)) == 3, keys


def test_a_table_with_a_run_in_progress_is_left_alone(lake):
    registry = HudiTableRegistry(roots=[str(lake)], hoodie_conf={"hoodie.clean.max.commits": "1"})
    defs = build_definitions(registry)
    with dg.instance_for_test() as instance:
        # A UI-style run of one of cow's assets (no hudi/table tag), not started yet.
        job = defs.resolve_implicit_global_asset_job_def()
        instance.create_run_for_job(job, asset_selection=frozenset({dg.AssetKey(
            ["hudi", "default", "cow", "archive_batch"])}), status=dg.DagsterRunStatus.NOT_STARTED)
        result = _tick(registry, instance)
    assert _requested(result) == [("mor", "clean")]


def test_partitioned_layout_registers_tables_as_partitions(lake):
    registry = HudiTableRegistry(roots=[str(lake)], hoodie_conf=QUIET,
                                 table_hoodie_conf={"cow": {"hoodie.clean.max.commits": "3"}})
    with dg.instance_for_test() as instance:
        result = _tick(registry, instance, partitioned=True)
        assert result.dynamic_partitions_requests[0].partition_keys == ["cow", "mor"]
        assert [(r.partition_key, r.tags["hudi/reason"]) for r in result.run_requests] == [("cow", "clean")]
        instance.add_dynamic_partitions(TABLES.name, ["cow", "mor", "gone"])
        later = _tick(registry, instance, result.cursor, partitioned=True)
        assert later.dynamic_partitions_requests[0].partition_keys == ["gone"]  # a deleted table


def test_daily_schedule_asks_for_every_table_without_a_run(lake):
    registry = HudiTableRegistry(roots=[str(lake)])
    defs = build_definitions(registry)
    schedule = defs.resolve_schedule_def("daily_hudi_maintenance")
    with dg.instance_for_test() as instance:
        context = dg.build_schedule_context(instance=instance, resources={"hudi": registry},
                                            scheduled_execution_time=datetime(2026, 1, 2, 3, tzinfo=UTC))
        requests = schedule.evaluate_tick(context).run_requests
    assert sorted(r.tags["hudi/table"] for r in requests) == ["cow", "mor"]
    assert requests[0].run_key.startswith(f"{requests[0].tags['hudi/table']}:daily:2026-01-02")
