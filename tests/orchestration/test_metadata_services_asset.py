"""The metadata_services asset (local engine, no JVM): it compacts, cleans and archives the metadata
table under the writers' lock provider, reports without changing anything when there is none, and
warns when a pending data write holds the compaction back; the sensor asks for a run when only the
metadata table's services are due."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from hudi_assets.demo import generate_table
from hudi_assets.metadata import MetadataTable
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.storage import Storage

pytestmark = pytest.mark.dagster

MAX_DELTA = {"hoodie.metadata.compact.max.delta.commits": "3"}
LOCK = {"hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"}
ASSET = dg.AssetKey(["hudi", "default", "t", "metadata_services"])


def _table(root: Path) -> Path:
    table = generate_table(Storage(str(root / "t")), "MERGE_ON_READ", commits=30, bloom_entries=100, seed=3,
                           metadata_table=True, pending_compaction=False, failed_write=False)
    return Path(table.base_path)


def _run(registry: HudiTableRegistry, instance):
    job = build_definitions(registry).resolve_implicit_global_asset_job_def().get_subset(
        asset_selection={ASSET})
    result = job.execute_in_process(instance=instance, raise_on_error=False)
    event = next(e for e in result.get_asset_materialization_events())
    checks = {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data
              for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}
    metadata = {k: v.value for k, v in event.step_materialization_data.materialization.metadata.items()}
    return result, metadata, checks


def test_under_the_lock_provider_the_metadata_table_is_compacted_cleaned_and_archived(tmp_path):
    base = _table(tmp_path)
    listing = MetadataTable(str(base)).files_listing.partitions
    registry = HudiTableRegistry(base_paths=[str(base)], hoodie_conf={**MAX_DELTA, **LOCK}, engine="local",
                                 dry_run=False)
    with dg.instance_for_test() as instance:
        result, metadata, checks = _run(registry, instance)
    assert result.success and metadata["ran"] is True and metadata["not_run_because"] == ""
    assert metadata["deltacommits_since_compaction_before"] >= 3
    assert metadata["deltacommits_since_compaction"] == 0 and metadata["log_files"] == 0
    assert metadata["log_files_before"] > 0 and metadata["log_bytes"] < metadata["log_bytes_before"]
    assert metadata["compacted"] and metadata["files_cleaned"] > 0 and metadata["instants_archived"] > 0
    assert checks["mdt_compaction_not_blocked"].passed
    assert MetadataTable(str(base)).files_listing.partitions == listing


def test_without_a_lock_provider_due_services_are_reported_not_run_and_no_check_fails(tmp_path):
    """The step's decision (issue 22): with no lock provider shared with the writers, services that
    are due and unblocked are reported and left alone; that is how the table is set up, not a
    failure, so the run succeeds and the check passes."""
    base = _table(tmp_path)
    files = sorted(p for p in (base / ".hoodie" / "metadata").rglob("*"))
    registry = HudiTableRegistry(base_paths=[str(base)], hoodie_conf=MAX_DELTA, engine="local", dry_run=False)
    with dg.instance_for_test() as instance:
        result, metadata, checks = _run(registry, instance)
    assert result.success and metadata["ran"] is False
    assert "hoodie.write.lock.provider" in metadata["not_run_because"]
    assert metadata["deltacommits_since_compaction"] == metadata["deltacommits_since_compaction_before"] >= 3
    assert (metadata["compacted"], metadata["files_cleaned"], metadata["instants_archived"]) == ("", 0, 0)
    assert checks["mdt_compaction_not_blocked"].passed
    assert sorted(p for p in (base / ".hoodie" / "metadata").rglob("*")) == files


def test_without_a_lock_provider_it_reports_and_warns_of_a_blocked_compaction(tmp_path):
    base = _table(tmp_path)
    # A data write left requested before the metadata table's latest deltacommit holds compaction back.
    blocker = f"{MetadataTable(str(base)).data_timeline.filter_completed().timestamps[-2][:-3]}999"
    (base / ".hoodie" / f"{blocker}.deltacommit.requested").write_bytes(b"")
    files = sorted(p for p in (base / ".hoodie" / "metadata").rglob("*"))
    registry = HudiTableRegistry(base_paths=[str(base)], engine="local", dry_run=False,
                                 hoodie_conf={"hoodie.metadata.compact.max.delta.commits": "2"})
    with dg.instance_for_test() as instance:
        result, metadata, checks = _run(registry, instance)
    assert result.success and metadata["ran"] is False
    assert "hoodie.write.lock.provider" in metadata["not_run_because"]
    assert sorted(p for p in (base / ".hoodie" / "metadata").rglob("*")) == files  # nothing changed
    blocked = checks["mdt_compaction_not_blocked"]
    assert not blocked.passed and blocked.severity == dg.AssetCheckSeverity.WARN
    assert f"hudi-assets rollback {base} {blocker}" in blocked.description
    assert "compaction" in metadata["blocked_by"].records[0].data["service"]


def test_the_sensor_requests_a_run_when_only_the_metadata_services_are_due(tmp_path):
    base = _table(tmp_path)
    quiet = {"hoodie.clean.max.commits": "1000", "hoodie.keep.min.commits": "100",
             "hoodie.keep.max.commits": "110", **MAX_DELTA}
    registry = HudiTableRegistry(base_paths=[str(base)], hoodie_conf=quiet, engine="local")
    with dg.instance_for_test() as instance:  # definitions resolve against a live instance
        sensor = build_definitions(registry).resolve_sensor_def("hudi_maintenance_sensor")
        context = dg.build_sensor_context(instance=instance, resources={"hudi": registry})
        result = sensor.evaluate_tick(context)
    assert [r.tags["hudi/reason"] for r in result.run_requests] == ["metadata services"]
