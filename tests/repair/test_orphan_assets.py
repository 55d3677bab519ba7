"""The orphan_files asset per table: a dry run by default with a typed table of instants and bytes, a
WARN check above its bounds, a quarantine when the registry's dry_run is off; outside the maintenance
job."""

from __future__ import annotations

import os
import shutil
import time

import dagster as dg
import pytest

from hudi_assets.demo import generate_table
from hudi_assets.orchestration import orphan_assets
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.repair.quarantine import runs
from hudi_assets.storage import Storage

pytestmark = pytest.mark.dagster
KEY = dg.AssetKey(["hudi", "default", "cow", "orphan_files"])


@pytest.fixture
def lake(tmp_path):
    storage = Storage(str(tmp_path / "cow"))
    generate_table(storage, "COPY_ON_WRITE", name="cow", partitions=2, commits=4, seed=5)
    source = next(p for p in sorted((tmp_path / "cow").rglob("*.parquet")) if ".hoodie" not in p.parts)
    orphan = source.with_name("orphan-1_0-0-0_29991231000000000.parquet")
    shutil.copyfile(source, orphan)
    month_ago = time.time() - 30 * 86400
    os.utime(orphan, (month_ago, month_ago))
    return tmp_path, orphan


def _materialize(lake_root, **registry):
    defs = build_definitions(HudiTableRegistry(roots=[str(lake_root)], engine="local", **registry))
    with dg.instance_for_test() as instance:
        job = defs.resolve_job_def("hudi_maintenance__default__cow__orphan_files")
        result = job.execute_in_process(instance=instance, raise_on_error=False)
        assert result.success
        event = next(e for e in result.get_asset_materialization_events()
                     if e.step_materialization_data.materialization.asset_key == KEY)
        checks = [e.asset_check_evaluation_data for e in result.all_events
                  if e.event_type_value == "ASSET_CHECK_EVALUATION"]
        return event.step_materialization_data.materialization.metadata, checks, defs


def test_orphan_files_is_a_dry_run_by_default_outside_the_maintenance_job(lake, monkeypatch):
    root, orphan = lake
    metadata, checks, defs = _materialize(root)
    assert metadata["dry_run"].value is True and metadata["orphan_files"].value == 1
    table = metadata["by_partition_instant"].value
    assert [r.data["instant"] for r in table.records] == ["29991231000000000"]
    assert [c.passed for c in checks] == [True] and orphan.exists()
    maintenance = defs.resolve_job_def("hudi_maintenance__default__cow")
    selected = maintenance.asset_layer.selected_asset_keys
    assert KEY not in selected and dg.AssetKey(["hudi", "default", "cow", "clean_plan"]) in selected
    monkeypatch.setattr(orphan_assets, "WARN_FILES", 0)
    _, checks, _ = _materialize(root)
    assert [(c.passed, c.severity) for c in checks] == [(False, dg.AssetCheckSeverity.WARN)]


def test_orphan_files_quarantines_when_dry_run_is_off(lake):
    root, orphan = lake
    metadata, _, _ = _materialize(root, dry_run=False)
    assert metadata["quarantine_run"].value in runs(Storage(str(root / "cow")))
    assert not orphan.exists()
