"""The savepoint jobs of the Dagster face (issue 28 item 4): create (default: the latest completed
commit) and delete, per table, behind dry_run; on table versions 6 and 9."""

from __future__ import annotations

import dagster as dg
import pytest

from hudi_assets.demo import generate_table
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.operations import DELETE_SAVEPOINT_JOB, SAVEPOINT_JOB
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

pytestmark = pytest.mark.dagster


def _run(defs, instance, job: str, op: str, **config) -> dg.ExecuteInProcessResult:
    return defs.resolve_job_def(job).execute_in_process({"ops": {op: {"config": config}}}, instance=instance,
                                                        raise_on_error=False)


def _savepoints(base) -> list[str]:
    return HoodieTable(str(base)).active_timeline.savepoint_timeline().timestamps


@pytest.mark.parametrize("version", [6, 9])
def test_savepoint_jobs_create_the_latest_and_delete_it(tmp_path, version):
    made = generate_table(Storage(str(tmp_path / "t")), "COPY_ON_WRITE", name="t", partitions=2, commits=6,
                          seed=4, savepoint=False, table_version=version)
    base = tmp_path / "t"
    with dg.instance_for_test() as instance:
        dry = build_definitions(HudiTableRegistry(base_paths=[str(base)], engine="local"))
        assert _run(dry, instance, SAVEPOINT_JOB, "create_savepoint", table="t").success
        assert _savepoints(base) == []
        defs = build_definitions(HudiTableRegistry(base_paths=[str(base)], engine="local", dry_run=False))
        result = _run(defs, instance, SAVEPOINT_JOB, "create_savepoint", table="t", comment="audit")
        assert result.success and _savepoints(base) == [made.completed_commits[-1]]
        assert instance.get_run_by_id(result.run_id).tags["hudi/table"] == "t"
        refused = _run(defs, instance, DELETE_SAVEPOINT_JOB, "delete_savepoint", table="t",
                       instant=made.completed_commits[0])
        assert not refused.success and _savepoints(base) == [made.completed_commits[-1]]
        result = _run(defs, instance, DELETE_SAVEPOINT_JOB, "delete_savepoint", table="t",
                      instant=made.completed_commits[-1])
        assert result.success and _savepoints(base) == []


@pytest.mark.parametrize("version", [6, 9])
def test_timeline_snapshot_lists_the_savepoints(tmp_path, version):
    made = generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", name="t", partitions=2, commits=6,
                          seed=4, table_version=version)
    registry = HudiTableRegistry(base_paths=[str(tmp_path / "t")], engine="local")
    key = dg.AssetKey(["hudi", "default", "t", "timeline_snapshot"])
    with dg.instance_for_test() as instance:  # definitions resolve against the live instance
        defs = build_definitions(registry)
        job = defs.resolve_implicit_global_asset_job_def().get_subset(asset_selection={key})
        result = job.execute_in_process(instance=instance, raise_on_error=False)
    [event] = [e for e in result.get_asset_materialization_events()
               if e.step_materialization_data.materialization.asset_key == key]
    savepoints = event.step_materialization_data.materialization.metadata["savepoints"]
    assert isinstance(savepoints, dg.TableMetadataValue)
    [row] = [r.data for r in savepoints.records]
    assert row["instant"] == made.savepoint and row["savepointed_by"] == "hudi-assets-demo"
    assert row["files"] == sum(len(names) for names in made.savepointed_files.values())
