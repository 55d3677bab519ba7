"""The status report on `timeline_snapshot`: typed metadata, and the per-table health rule as the check
`table_is_healthy` (services due and blocked for longer than `unhealthy_after_hours`)."""

from __future__ import annotations

import dagster as dg
import pytest
from support.builders import TableBuilder, base_file, ts

from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.resources import HudiTableRegistry, spark_resource
from hudi_assets.timeline.instant import State

pytestmark = [pytest.mark.dagster]
SMALL = {"hoodie.cleaner.commits.retained": "3", "hoodie.keep.min.commits": "5",
         "hoodie.keep.max.commits": "8"}
SNAPSHOT = dg.AssetKey(["hudi", "default", "t", "timeline_snapshot"])


def _snapshot(path, **registry):
    defs = build_definitions(HudiTableRegistry(base_paths=[str(path)], hoodie_conf=SMALL, engine="local",
                                               **registry), spark_resource("local[1]"))
    with dg.instance_for_test() as instance:  # definitions resolved and events read while it is open
        job = defs.resolve_job_def("hudi_maintenance__default__t")
        result = job.execute_in_process(instance=instance, raise_on_error=False,
                                        asset_selection=[SNAPSHOT])
        [event] = result.get_asset_materialization_events()
        metadata = {k: v.value for k, v in event.step_materialization_data.materialization.metadata.items()}
        [check] = [e.asset_check_evaluation_data for e in result.all_events
                   if e.event_type_value == "ASSET_CHECK_EVALUATION"
                   and e.asset_check_evaluation_data.check_name == "table_is_healthy"]
    return metadata, check


def _table(tmp_path, pending: bool) -> TableBuilder:
    b = TableBuilder(tmp_path / "t")
    for i in range(12):
        if not (pending and i == 2):
            b.commit(ts(i), {"p1": [base_file(f"f{i}", ts(i))]})
    if pending:
        b.commit(ts(2), state=State.INFLIGHT)
    return b


def test_a_table_blocked_for_longer_than_the_limit_is_unhealthy(tmp_path):
    metadata, check = _snapshot(_table(tmp_path, pending=True).root)
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
    assert check.description.startswith("clean due and blocked for ")
    assert ("archive waits for the oldest pending write: oldest pending instant is "
            f"[{ts(2)}__commit__INFLIGHT]") in check.description
    assert check.metadata["unhealthy_services"].value == "clean, archive"
    assert metadata["archive_blocked"] is True and metadata["clean_due"] is True
    assert "- archive due: 11 completed commits > hoodie.keep.max.commits=8" in metadata["archive_reasons"]
    assert metadata["status"]["archive"]["blocked_since"] == ts(2)
    assert metadata["small_files"] == 11


def test_a_limit_not_yet_passed_and_a_table_not_blocked_are_healthy(tmp_path):
    blocked_hours = _snapshot(_table(tmp_path, pending=True).root, unhealthy_after_hours=1e9)[1]
    assert blocked_hours.passed and blocked_hours.metadata["archive_blocked_hours"].value > 0
    metadata, check = _snapshot(_table(tmp_path / "free", pending=False).root)
    assert check.passed and metadata["archive_blocked"] is False
    assert metadata["archive_instants_to_archive"] == 7
