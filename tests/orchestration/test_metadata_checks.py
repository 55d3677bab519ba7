"""The metadata table in the Dagster graph: clean_plan's guard check that it agrees with storage in
the partitions about to be cleaned, the on-demand audit job for the others, its facts in
timeline_snapshot, and tables without one (local engine, no JVM)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from support.builders import TableBuilder, base_file, pending_clean

from hudi_assets.clean import CleanConfig
from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.config import WriteConfig
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.metadata_checks import AGREES
from hudi_assets.orchestration.operations import AUDIT_JOB
from hudi_assets.orchestration.orphan_assets import ORPHAN_CHECK
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.table import HoodieTable

pytestmark = pytest.mark.dagster

COMMITS = [f"2024010100000{n}000" for n in range(1, 6)]
PARTITIONS = ("p1", "p2", "p3")
RETENTION = {"hoodie.cleaner.commits.retained": "2"}
STEPS = ("timeline_snapshot", "clean_plan", "clean_result", "archive_batch", "merged_archive_files",
         "metadata_services")


def _rewrites(root: Path) -> TableBuilder:
    """Five copy-on-write rewrites of one file group per partition."""
    b = TableBuilder(root)
    for t in COMMITS:
        b.commit(t, {p: [base_file(f"a{p}", t)] for p in PARTITIONS})
    return b


def _files(base: Path) -> set[str]:
    return {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()}


def _key(step: str) -> dg.AssetKey:
    return dg.AssetKey(["hudi", "default", "t", step])


def _defs(base: Path) -> dg.Definitions:
    return build_definitions(HudiTableRegistry(base_paths=[str(base)], hoodie_conf=RETENTION, engine="local",
                                               dry_run=False))


def _run(defs: dg.Definitions, instance, assets=None, checks=None):
    job = defs.resolve_job_def("hudi_maintenance__default__t")
    if assets is not None or checks is not None:
        job = defs.resolve_implicit_global_asset_job_def().get_subset(
            asset_selection=set(assets or ()), asset_check_selection=None if checks is None else set(checks))
    return job.execute_in_process(instance=instance, raise_on_error=False)


def _checks(result) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data for e in result.all_events
            if e.event_type_value == "ASSET_CHECK_EVALUATION"}


def _metadata(result, step: str) -> dict:
    event = next(e for e in result.get_asset_materialization_events()
                 if e.step_materialization_data.materialization.asset_key == _key(step))
    return {k: v.value for k, v in event.step_materialization_data.materialization.metadata.items()}


def _audit(defs: dg.Definitions, instance) -> dg.ExecuteInProcessResult:
    return defs.resolve_job_def(AUDIT_JOB).execute_in_process(
        {"ops": {"audit_metadata_table": {"config": {"table": "t"}}}}, instance=instance,
        raise_on_error=False)


def _logged(instance, result) -> str:
    return "\n".join(entry.user_message for entry in instance.all_logs(result.run_id))


def _pending_plan_of(base: Path, partition: str) -> None:
    """A pending clean (requested by another tool) of one partition only: the next clean's candidates."""
    table = HoodieTable(str(base))
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, overrides=RETENTION))
    plan = Cleaner(table, config).plan()
    plan.file_paths_to_delete = {partition: plan.file_paths_to_delete[partition]}
    plan.partitions_to_delete = []
    pending_clean(table, plan)


def test_a_table_with_a_metadata_table_is_checked_cleaned_and_described(tmp_path):
    base = _rewrites(tmp_path / "t").metadata_table_from_storage().root
    with dg.instance_for_test() as instance:
        result = _run(_defs(base), instance)
        graph = _defs(base).resolve_asset_graph()
    assert result.success
    checks = _checks(result)
    assert checks[AGREES].passed and checks[AGREES].metadata["partitions_checked"].value == 3
    # No check sits on a step that a maintenance run leaves out (the full listing is the audit job's;
    # orphan_files, a full listing too, has its own job).
    assert {k.name for k in graph.asset_check_keys} - {ORPHAN_CHECK} == set(checks)
    assert _metadata(result, "clean_result")["files_deleted"] > 0
    snapshot = _metadata(result, "timeline_snapshot")
    assert snapshot["metadata_table"] is True and snapshot["metadata_file_groups"] == 1
    partitions = [r.data for r in snapshot["metadata_partitions"].records]
    assert partitions == [{"partition": "files", "file_groups": 1}]
    assert snapshot["metadata_deltacommits_since_compaction"] == 1  # the initialization; no compaction yet
    with dg.instance_for_test() as instance:  # the clean's deltacommit shows in the next snapshot
        again = _run(_defs(base), instance, [_key("timeline_snapshot")])
    assert _metadata(again, "timeline_snapshot")["metadata_deltacommits_since_compaction"] == 2


def test_drift_in_a_partition_about_to_be_cleaned_stops_the_plan(tmp_path):
    base = _rewrites(tmp_path / "t").metadata_table_from_storage().root
    _pending_plan_of(base, "p1")
    victim = base / "p1" / base_file("ap1", COMMITS[-1])  # listed by the metadata table
    victim.unlink()
    before = _files(base)
    with dg.instance_for_test() as instance:
        result = _run(_defs(base), instance)
        logged = _logged(instance, result)
    check = _checks(result)[AGREES]
    assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
    assert f"p1/{victim.name}: listed (1 bytes) but not on storage" in check.description
    assert "nothing was planned or deleted" in logged
    # A refusal: no materialization of clean_plan, the later steps skipped, not failed.
    assert {e.step_materialization_data.materialization.asset_key.path[-1]
            for e in result.get_asset_materialization_events()} == {"timeline_snapshot"}
    assert not result.get_failed_step_keys()
    assert _files(base) == before


def test_drift_elsewhere_fails_the_on_demand_audit_job(tmp_path):
    base = _rewrites(tmp_path / "t").metadata_table_from_storage().root
    _pending_plan_of(base, "p1")
    victim = base / "p3" / base_file("ap3", COMMITS[0])
    victim.unlink()
    defs = _defs(base)
    with dg.instance_for_test() as instance:
        audit = _audit(defs, instance)
        failure = next(e for e in audit.all_events if e.event_type_value == "STEP_FAILURE")
        assert f"p3/{victim.name}" in failure.step_failure_data.user_failure_data.description
        assert failure.step_failure_data.user_failure_data.metadata["partitions_left_out"].value == 1
        assert instance.get_run_by_id(audit.run_id).tags["hudi/table"] == "t"
        result = _run(defs, instance, [_key("clean_plan")])  # p1 agrees: the plan goes ahead
    assert result.success and _checks(result)[AGREES].passed


def test_without_a_metadata_table_the_checks_pass_saying_so(tmp_path):
    base = _rewrites(tmp_path / "t").root
    defs = _defs(base)
    with dg.instance_for_test() as instance:
        result = _run(defs, instance)
        audit = _audit(defs, instance)
    assert result.success and audit.success
    assert _checks(result)[AGREES].passed and _checks(result)[AGREES].description == "no metadata table"
    snapshot = _metadata(result, "timeline_snapshot")
    assert snapshot["metadata_table"] is False and snapshot["metadata_file_groups"] == 0
