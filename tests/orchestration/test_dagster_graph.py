"""The Dagster face on generated tables (local engine, no JVM): per-table identity, per-table checks,
guards no single-asset run skips, readable metadata, and a dry run by default."""

from __future__ import annotations

import dagster as dg
import pytest
from support.builders import TableBuilder, ts
from support.calls import record_first_arguments

from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.clean.config import CleanConfig
from hudi_assets.config import WriteConfig
from hudi_assets.demo import generate_table
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.factory import TABLES
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import load_table_config, write_table_config

pytestmark = pytest.mark.dagster

SMALL_RETENTION = {"hoodie.cleaner.commits.retained": "3", "hoodie.keep.min.commits": "5",
                   "hoodie.keep.max.commits": "7"}
UNSAFE = {"hoodie.cleaner.commits.retained": "25", "hoodie.keep.min.commits": "20"}
RETENTION = "retention_settings_are_safe"
STEPS = ("timeline_snapshot", "clean_plan", "clean_result", "archive_batch", "merged_archive_files",
         "metadata_services")


@pytest.fixture
def lake(tmp_path):
    for name, kind in (("cow", "COPY_ON_WRITE"), ("mor", "MERGE_ON_READ")):
        generate_table(Storage(str(tmp_path / name)), kind, name=name, partitions=2, commits=8, seed=3)
    storage = Storage(str(tmp_path / "mor"))  # one table names its database
    write_table_config(storage, {**load_table_config(storage).props, "hoodie.database.name": "sales"})
    return tmp_path


def _files(base) -> set[str]:
    return {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()}


def _key(database: str, table: str, step: str) -> dg.AssetKey:
    return dg.AssetKey(["hudi", database, table, step])


def _run(defs: dg.Definitions, instance, assets=None, checks=None, partition: str | None = None):
    job = defs.resolve_implicit_global_asset_job_def()
    if assets is not None or checks is not None:
        # As the UI launches it: the selected assets with their checks, or checks alone.
        job = job.get_subset(asset_selection=set(assets or ()),
                             asset_check_selection=None if checks is None else set(checks))
    return job.execute_in_process(instance=instance, partition_key=partition, raise_on_error=False)


def _checks(result) -> dict[tuple[str, str], dg.AssetCheckEvaluation]:
    evaluations = [e.asset_check_evaluation_data for e in result.all_events
                   if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    return {(e.asset_key.path[-1], e.check_name): e for e in evaluations}


def _logged(instance, result) -> str:
    return "\n".join(entry.user_message for entry in instance.all_logs(result.run_id))


def _metadata(result, key: dg.AssetKey) -> dict:
    event = next(e for e in result.get_asset_materialization_events()
                 if e.step_materialization_data.materialization.asset_key == key)
    return event.step_materialization_data.materialization.metadata


def test_every_table_has_its_own_keys_group_pool_and_identity(lake):
    # Dagster resolves definitions against a live instance (another test's may be gone by now).
    with dg.instance_for_test():
        _identity(lake)


def _identity(lake) -> None:
    registry = HudiTableRegistry(roots=[str(lake)], owners=["team:lake"], table_owners={"mor": ["a@b.org"]},
                                 runbook_url="https://runbooks.example/{database}/{table}")
    defs = build_definitions(registry)
    graph = defs.resolve_asset_graph()
    keys = set(graph.get_all_asset_keys())
    assert keys == {_key(db, t, s) for db, t in (("default", "cow"), ("sales", "mor"))
                    for s in (*STEPS, "orphan_files")}
    node = graph.get(_key("sales", "mor", "clean_plan"))
    assert node.group_name == "sales__mor"  # the global lineage names every table
    assert graph.get(_key("default", "cow", "clean_plan")).group_name == "default__cow"
    pools = {step: defs.resolve_assets_def(_key("sales", "mor", step)).op.pool for step in STEPS}
    assert pools == {**dict.fromkeys(STEPS, "hudi_table/sales.mor"), "clean_plan": "hudi_spark",
                     "clean_result": "hudi_spark"}
    local = build_definitions(HudiTableRegistry(roots=[str(lake)], engine="local"))
    assert local.resolve_assets_def(_key("sales", "mor", "clean_plan")).op.pool == "hudi_table/sales.mor"
    assert node.parent_keys == {_key("sales", "mor", "timeline_snapshot")}
    spec = defs.resolve_assets_def(_key("sales", "mor", "archive_batch")).specs_by_key[
        _key("sales", "mor", "archive_batch")]
    assert spec.metadata["dagster/table_name"] == "sales.mor"
    assert spec.metadata["dagster/uri"] == str(lake / "mor")
    assert not [k for k in spec.metadata if k.startswith("setting/")]  # settings go stale: runs show them
    assert spec.tags["hudi/table_type"] == "mor" and spec.tags["hudi/database"] == "sales"
    assert spec.owners == ["team:lake", "a@b.org"]
    assert spec.metadata["runbook"].url == "https://runbooks.example/sales/mor"
    reference = spec.metadata["dagster/code_references"].code_references[0]
    assert reference.file_path.endswith("archive_assets.py")
    # Every step of a deleting asset carries the retention guard as its own check (not blocking=True:
    # the step refuses by itself, see factory); every check names the owners and the runbook.
    for step in STEPS[1:]:
        check = dg.AssetCheckKey(_key("default", "cow", step), "retention_settings_are_safe")
        assert not graph.get_check_spec(check).blocking
    for check in graph.asset_check_keys:
        spec = graph.get_check_spec(check)
        table = check.asset_key.path[2]
        assert spec.metadata["runbook"].url.endswith(f"/{table}")
        assert spec.description.endswith(f"Runbook: {spec.metadata['runbook'].url}")
        assert "Owners: team:lake" in spec.description
    jobs = {j.name: j for j in defs.jobs}
    assert jobs["hudi_maintenance__sales__mor"].tags["hudi/table"] == "mor"
    assert defs.resolve_job_def("hudi_maintenance__sales__mor").executor_def.name == "in_process"


def test_unsafe_table_fails_its_own_check_and_the_safe_table_passes(lake):
    registry = HudiTableRegistry(roots=[str(lake)], engine="local", table_hoodie_conf={"cow": UNSAFE})
    defs = build_definitions(registry)
    retention_cow = dg.AssetCheckKey(_key("default", "cow", "timeline_snapshot"), RETENTION)
    retention_mor = dg.AssetCheckKey(_key("sales", "mor", "timeline_snapshot"), RETENTION)
    with dg.instance_for_test() as instance:
        unsafe = _run(defs, instance, [_key("default", "cow", s) for s in STEPS])
        safe = _run(defs, instance, [_key("sales", "mor", s) for s in STEPS])
        # A refusal is no failure of the run: the guard's check fails, the step records nothing.
        assert unsafe.success and safe.success
        check = _checks(unsafe)[("timeline_snapshot", "retention_settings_are_safe")]
        assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
        assert ("hoodie.cleaner.commits.retained=25 (from table_hoodie_conf[cow]), hoodie.keep.min.commits=20"
                in check.description)
        assert not _checks(unsafe)[("clean_plan", RETENTION)].passed
        assert instance.get_latest_materialization_event(_key("default", "cow", "clean_plan")) is None
        assert f"refused: cow ({lake / 'cow'}): " in _logged(instance, unsafe)
        # Checks of the steps that did not run stay PLANNED in a run that did not fail: the UI reads
        # them as skipped (a failed run would read "Execution failed").
        for step, name in (("clean_plan", "plan_is_safe"), ("clean_result", RETENTION),
                           ("archive_batch", "archived_instants_readable")):
            key = dg.AssetCheckKey(_key("default", "cow", step), name)
            (record,) = instance.event_log_storage.get_asset_check_execution_history(key, limit=1)
            assert record.status.value == "PLANNED" and record.run_id == unsafe.run_id
        # Status is the table's own: the later passing run of mor leaves cow failed.
        history = {key: instance.event_log_storage.get_asset_check_execution_history(key, limit=1)[0]
                   for key in (retention_cow, retention_mor)}
        assert history[retention_cow].status.value == "FAILED"
        assert history[retention_mor].status.value == "SUCCEEDED"
        # The check runs on its own, as the UI's Execute button does.
        alone = _run(defs, instance, checks=[retention_cow])
        assert not _checks(alone)[("timeline_snapshot", RETENTION)].passed
        assert _checks(_run(defs, instance, checks=[retention_mor]))[("timeline_snapshot", RETENTION)].passed


def test_archive_batch_alone_on_an_unsafe_table_archives_nothing(lake):
    registry = HudiTableRegistry(roots=[str(lake)], engine="local", dry_run=False,
                                 hoodie_conf={"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"})
    before = _files(lake / "cow")
    with dg.instance_for_test() as instance:
        result = _run(build_definitions(registry), instance, [_key("default", "cow", "archive_batch")])
        assert "nothing was planned, deleted or archived" in _logged(instance, result)
        assert instance.get_latest_materialization_event(_key("default", "cow", "archive_batch")) is None
    check = _checks(result)[("archive_batch", "retention_settings_are_safe")]
    assert not check.passed and "must be < hoodie.keep.min.commits" in check.description
    assert _files(lake / "cow") == before


def test_clean_result_alone_executes_the_plans_the_timeline_holds(lake):
    table = HoodieTable(str(lake / "cow"))
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, overrides=SMALL_RETENTION))
    cleaner = Cleaner(table, config)
    plan = cleaner.plan()  # requested by someone else, e.g. the CLI
    instant = cleaner.request(plan)
    assert instant is not None
    planned = {f.file_path for files in plan.file_paths_to_delete.values() for f in files}
    registry = HudiTableRegistry(base_paths=[str(lake / "cow")], hoodie_conf=SMALL_RETENTION, engine="local",
                                 dry_run=False)
    with dg.instance_for_test() as instance:
        result = _run(build_definitions(registry), instance, [_key("default", "cow", "clean_result")])
    assert result.success
    metadata = _metadata(result, _key("default", "cow", "clean_result"))
    assert metadata["files_deleted"].value == len(planned) > 0
    assert metadata["pending_plans"].value == 1
    assert metadata["bytes_reclaimed"].value > 0 and metadata["bytes_reclaimed_text"].value.endswith("B")
    assert Cleaner(HoodieTable(str(lake / "cow")), config).pending() == []
    assert all(c.passed for c in _checks(result).values())


def test_a_registry_is_a_dry_run_unless_told_otherwise_and_its_runs_say_so(lake):
    before = _files(lake)
    registry = HudiTableRegistry(roots=[str(lake)], hoodie_conf=SMALL_RETENTION, engine="local")
    assert registry.dry_run
    with dg.instance_for_test() as instance:
        result = _run(build_definitions(registry), instance, [_key("default", "cow", s) for s in STEPS])
        assert result.success
        tags = instance.get_run_by_id(result.run_id).tags
        assert tags["hudi/dry_run"] == "true" and tags["hudi/table"] == "cow"  # launched as the UI does
        plan = _metadata(result, _key("default", "cow", "clean_plan"))
        # Planned figures of a dry run have their own keys: they never share a plot with real ones.
        assert plan["dry_run/files_to_delete"].value > 0 and "files_to_delete" not in plan
        assert plan["dry_run"].value is True
        assert plan["run_settings"].value["hoodie.cleaner.commits.retained"] == "3"
        assert plan["run_settings"].value["dry_run"] is True
    assert _files(lake) == before



@pytest.mark.filterwarnings("error:AssetExecutionContext:DeprecationWarning")
def test_a_step_tags_its_run_through_dagsters_current_api(lake):
    """Tagging the run uses no deprecated context attribute (`AssetExecutionContext.run_id`, which
    the pinned Dagster warns about): a warning made an error fails the step."""
    registry = HudiTableRegistry(roots=[str(lake)], hoodie_conf=SMALL_RETENTION, engine="local")
    with dg.instance_for_test() as instance:
        result = _run(build_definitions(registry), instance, [_key("default", "cow", "timeline_snapshot")])
        assert result.success
        assert instance.get_run_by_id(result.run_id).tags["hudi/table"] == "cow"

def test_run_config_of_one_field_leaves_dry_run_and_engine_alone(lake):
    """Run config that sets only table_hoodie_conf keeps the registry's dry_run=False (Dagster would
    fill it with the class default, True) and engine; dry_run set in run config still wins."""
    registry = HudiTableRegistry(roots=[str(lake)], hoodie_conf=SMALL_RETENTION, engine="local",
                                 dry_run=False)
    conf = {"cow": {"hoodie.cleaner.commits.retained": "4"}}
    only_conf = {"resources": {"hudi": {"config": {"table_hoodie_conf": conf}}}}
    dry = {"resources": {"hudi": {"config": {"dry_run": True}}}}
    steps = {_key("default", "cow", "timeline_snapshot"), _key("default", "cow", "clean_plan")}
    with dg.instance_for_test() as instance:
        defs = build_definitions(registry)
        job = defs.resolve_job_def("hudi_maintenance__default__cow").get_subset(asset_selection=steps)
        real = job.execute_in_process(only_conf, instance=instance)
        assert instance.get_run_by_id(real.run_id).tags["hudi/dry_run"] == "false"
        settings = _metadata(real, _key("default", "cow", "clean_plan"))["run_settings"].value
        assert settings["dry_run"] is False and settings["engine"] == "local"
        assert settings["hoodie.cleaner.commits.retained"] == "4"  # the run's own settings
        asked = job.execute_in_process(dry, instance=instance)
        assert instance.get_run_by_id(asked.run_id).tags["hudi/dry_run"] == "true"


def test_metadata_is_typed_and_settings_are_never_plotted(lake):
    registry = HudiTableRegistry(roots=[str(lake)], hoodie_conf=SMALL_RETENTION, engine="local")
    with dg.instance_for_test() as instance:
        result = _run(build_definitions(registry), instance, [_key("default", "cow", s) for s in STEPS[:2]])
    snapshot = _metadata(result, _key("default", "cow", "timeline_snapshot"))
    plan = _metadata(result, _key("default", "cow", "clean_plan"))
    assert isinstance(snapshot["pending"], dg.TableMetadataValue)
    assert {c.name: c.type for c in snapshot["pending"].schema.columns}["age_hours"] == "float"
    assert isinstance(snapshot["latest_instant"], dg.TimestampMetadataValue)
    assert isinstance(snapshot["retention_settings"], dg.JsonMetadataValue)
    largest = plan["largest_20_files"]
    assert isinstance(largest, dg.TableMetadataValue)
    sizes = [r.data["size_bytes"] for r in largest.records]
    assert sizes == sorted(sizes, reverse=True)
    assert len(sizes) == min(20, plan["dry_run/files_to_delete"].value)
    assert isinstance(plan["earliest_commit_to_retain"], dg.TimestampMetadataValue)
    numeric = {k for k, v in {**snapshot, **plan}.items()
               if isinstance(v, dg.IntMetadataValue | dg.FloatMetadataValue)}
    assert not {k for k in numeric if "keep" in k or "max_commits" in k or "retained" in k}


def test_partitioned_layout_partitions_the_checks_too(lake):
    registry = HudiTableRegistry(roots=[str(lake)], engine="local", table_hoodie_conf={"cow": UNSAFE})
    defs = build_definitions(registry, partitioned=True)
    check = dg.AssetCheckKey(dg.AssetKey(["hudi", "timeline_snapshot"]), "retention_settings_are_safe")
    with dg.instance_for_test() as instance:
        assert defs.resolve_asset_graph().get_check_spec(check).partitions_def == TABLES
        instance.add_dynamic_partitions(TABLES.name, ["cow", "mor"])
        refused = _run(defs, instance, partition="cow")
        assert refused.success and not instance.get_latest_materialization_event(
            dg.AssetKey(["hudi", "clean_plan"]))
        assert instance.get_run_by_id(refused.run_id).tags["hudi/table"] == "cow"
        assert _run(defs, instance, partition="mor").success
        alone = _run(defs, instance, checks=[check], partition="cow")  # Execute on one partition
        assert not _checks(alone)[("timeline_snapshot", "retention_settings_are_safe")].passed
        history = instance.event_log_storage.get_asset_check_execution_history(check, limit=10)
        statuses = {r.partition: r.status.value for r in reversed(history)}
    assert statuses == {"cow": "FAILED", "mor": "SUCCEEDED"}


def test_a_step_opens_its_table_once(lake, monkeypatch):
    """A step reads its table (hoodie.properties, and the roots' scan) once, not again for each guard
    and for its metadata."""
    opened = record_first_arguments(monkeypatch, HudiTableRegistry, "open")
    registry = HudiTableRegistry(roots=[str(lake)], engine="local", hoodie_conf=SMALL_RETENTION)
    defs = build_definitions(registry)
    steps = {_key("default", "cow", step) for step in ("archive_batch", "merged_archive_files")}
    with dg.instance_for_test() as instance:
        result = _run(defs, instance, assets=steps)
    assert result.success and len(result.get_asset_materialization_events()) == 2
    assert opened == ["cow", "cow"]


def test_archive_steps_on_a_1x_table_archive_into_the_lsm_history_and_compact_it(tmp_path):
    """archive_batch and merged_archive_files run alone on a v9 table (its clean is not built yet):
    the batch reads back from the LSM history, the second step shows the compaction's layers."""
    b = TableBuilder(tmp_path / "v9", version=9)
    conf = {**SMALL_RETENTION, "hoodie.timeline.compaction.batch.size": "2"}
    registry = HudiTableRegistry(roots=[str(tmp_path)], engine="local", dry_run=False, hoodie_conf=conf)
    n = 0
    with dg.instance_for_test() as instance:
        defs = build_definitions(registry)
        for _ in range(2):
            for _ in range(8):
                b.commit(ts(n))
                n += 1
            batch = _run(defs, instance, [_key("default", "v9", "archive_batch")])
            assert batch.success
            assert _checks(batch)[("archive_batch", "archived_instants_readable")].passed
        merged = _run(defs, instance, [_key("default", "v9", "merged_archive_files")])
        assert merged.success
    archived = _metadata(batch, _key("default", "v9", "archive_batch"))
    assert archived["instants_archived"].value == 8 and archived["archive_file"].value.endswith("_0.parquet")
    meta = _metadata(merged, _key("default", "v9", "merged_archive_files"))
    assert meta["files_merged"].value == 2 and meta["merged_file"].value.endswith("_1.parquet")
    assert [r.data["layer"] for r in meta["layers_before"].value.records] == [0]
    assert [(r.data["layer"], r.data["instants"]) for r in meta["layers_after"].value.records] == [(1, 3 + 8)]
