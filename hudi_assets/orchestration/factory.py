"""`build_hudi_maintenance_assets`: the one place that names assets, checks, jobs, sensor and schedule.

Two layouts of the same five steps (timeline_snapshot -> clean_plan -> clean_result -> archive_batch ->
merged_archive_files):

- per table (default): every table has its own asset keys `hudi/<database>/<table>/<step>`, group per
  database, its own job, and a pool every step claims, so check status, plots and history are the
  table's own and no two runs of one table are ever in progress at once.
- partitioned: one set of assets with a dynamic partition per table (for roots holding many tables);
  the checks are partitioned too (a preview feature of Dagster 1.13), so their status is per table.
"""

import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import dagster as dg

from hudi_assets.orchestration.archive_assets import archive_batch, merged_archive_files
from hudi_assets.orchestration.assets import (
    no_stale_pending_write,
    timeline_is_well_formed,
    timeline_snapshot,
)
from hudi_assets.orchestration.automation import TableTarget, build_schedule, build_sensor
from hudi_assets.orchestration.checks import (
    RETENTION_CHECK,
    RETENTION_DESCRIPTION,
    retention_settings_are_safe,
    retention_spec,
)
from hudi_assets.orchestration.clean_assets import clean_plan, clean_result
from hudi_assets.orchestration.metadata_checks import (
    AGREES,
    AGREES_DESCRIPTION,
    AGREES_ELSEWHERE,
    AGREES_ELSEWHERE_DESCRIPTION,
    metadata_table_agrees_elsewhere,
)
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.orchestration.tables import (
    DRY_RUN_TAG,
    HudiTableSpec,
    HudiTranslator,
    asset_key,
    describe_tables,
)

TABLES = dg.DynamicPartitionsDefinition(name="hudi_tables")
PARTITIONED_GROUP = "hudi_maintenance"
PARTITIONED_JOB = "hudi_maintenance"
SPARK_POOL = "hudi_spark"


@dataclass(frozen=True)
class Step:
    """One asset of the graph: its body, what it follows, and the checks it reports as it runs."""

    name: str
    compute: Callable
    upstream: str | None = None
    spark: bool = False
    deletes: bool = False  # writes to the table: runs the retention guard first
    checks: tuple[tuple[str, bool, str], ...] = ()  # (name, blocking, description) reported by the body


STEPS = (
    Step("timeline_snapshot", timeline_snapshot),
    Step("clean_plan", clean_plan, "timeline_snapshot", spark=True, deletes=True, checks=(
        (AGREES, True, AGREES_DESCRIPTION),
        ("plan_is_safe", True, "Every pending plan, and a new one before it is requested, passes the core's "
                               "safety rule: data files of the table only, inside the base path; no latest "
                               "slice, savepointed file, file read by a pending compaction/clustering, or "
                               "slice a reader at the earliest commit to retain needs."),)),
    Step("clean_result", clean_result, "clean_plan", spark=True, deletes=True, checks=(
        ("retained_files_exist", True, "After the clean, every file of the latest slices and every file "
                                       "written at or after the earliest commit to retain still exists."),
        ("no_failed_deletes", False, "WARN when a file could not be deleted (the next clean retries it)."))),
    Step("archive_batch", archive_batch, "clean_result", deletes=True, checks=(
        ("archived_instants_readable", True, "Every state file removed from the active timeline reads back "
                                             "from the archive."),)),
    Step("merged_archive_files", merged_archive_files, "archive_batch", deletes=True),
)

@dataclass(frozen=True)
class StandaloneCheck:
    """A check that runs on its own (the UI's Execute button runs it alone); `per_run`: also in every
    maintenance run (jobs, sensor, schedule)."""

    name: str
    function: Callable
    blocking: bool
    description: str
    asset: str = "timeline_snapshot"
    per_run: bool = True


STANDALONE_CHECKS = (
    StandaloneCheck(RETENTION_CHECK, retention_settings_are_safe, True, RETENTION_DESCRIPTION),
    StandaloneCheck("timeline_is_well_formed", timeline_is_well_formed, True,
                    "Every instant time is well formed and no two instants share time and action."),
    StandaloneCheck("no_stale_pending_write", no_stale_pending_write, False,
                    "WARN when the oldest pending write, which fences archiving, is over a day old."),
    # A full listing of the table: not in every run (see orchestration.metadata_checks).
    StandaloneCheck(AGREES_ELSEWHERE, metadata_table_agrees_elsewhere, False, AGREES_ELSEWHERE_DESCRIPTION,
                    asset="clean_plan", per_run=False),
)


@dataclass
class HudiMaintenanceDefinitions:
    """What the factory returns: pass the lists to `dg.Definitions` (see `definitions.build_definitions`)."""

    assets: list[dg.AssetsDefinition] = field(default_factory=list)
    asset_checks: list[dg.AssetChecksDefinition] = field(default_factory=list)
    jobs: list = field(default_factory=list)
    sensors: list[dg.SensorDefinition] = field(default_factory=list)
    schedules: list[dg.ScheduleDefinition] = field(default_factory=list)


@dataclass(frozen=True)
class _Layout:
    """Where one set of steps lives: key prefix, group, partitions, how a run finds its table."""

    prefix: list[str]
    group: str
    table_of: Callable[[dg.OpExecutionContext], str]
    partitions_def: dg.DynamicPartitionsDefinition | None = None
    pool: str | None = None  # the table's pool (per table), claimed by every step but Spark ones
    spark_pool: str | None = None  # claimed by Spark steps when the engine is Spark
    owners: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, object] = field(default_factory=dict)


def _code_reference(function: Callable) -> dg.CodeReferencesMetadataValue:
    """Points the UI at the step's body, not at the factory's wrapper (a beta API: quietly)."""
    start = inspect.getsourcelines(function)[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.CodeReferencesMetadataValue(code_references=[
            dg.LocalFileCodeReference(file_path=inspect.getsourcefile(function), line_number=start)])


def _asset(step: Step, layout: _Layout) -> dg.AssetsDefinition:
    key = asset_key(layout.prefix, step.name)
    specs = [retention_spec(key, layout.partitions_def)] if step.deletes else []
    specs += [dg.AssetCheckSpec(name, asset=key, blocking=blocking, description=description,
                                partitions_def=layout.partitions_def)
              for name, blocking, description in step.checks]

    @dg.asset(
        key=key, deps=[asset_key(layout.prefix, step.upstream)] if step.upstream else [],
        group_name=layout.group, partitions_def=layout.partitions_def, check_specs=specs,
        kinds={"hudi", "spark"} if step.spark else {"hudi"},
        pool=layout.spark_pool if step.spark and layout.spark_pool else layout.pool,
        owners=layout.owners, tags=layout.tags, description=inspect.getdoc(step.compute),
        metadata={**layout.metadata, "dagster/code_references": _code_reference(step.compute)},
        required_resource_keys={"hudi", "spark"} if step.spark else {"hudi"},
    )
    def _compute(context: dg.AssetExecutionContext):
        if context.resources.hudi.dry_run:
            context.instance.add_run_tags(context.run.run_id, {DRY_RUN_TAG: "true"})
        yield from step.compute(context, layout.table_of(context))

    return _compute


def _standalone_check(layout: _Layout, check: StandaloneCheck) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=asset_key(layout.prefix, check.asset), name=check.name, blocking=check.blocking,
                    description=check.description, partitions_def=layout.partitions_def,
                    required_resource_keys={"hudi"}, pool=layout.pool)
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        return check.function(context, layout.table_of(context.op_execution_context))

    return _check


def _standalone_checks(layout: _Layout) -> list[dg.AssetChecksDefinition]:
    return [_standalone_check(layout, check) for check in STANDALONE_CHECKS]


def _on_demand(layout: _Layout) -> frozenset[dg.AssetCheckKey]:
    """The standalone checks left out of maintenance runs."""
    return frozenset(dg.AssetCheckKey(asset_key(layout.prefix, c.asset), c.name)
                     for c in STANDALONE_CHECKS if not c.per_run)


def _per_table(spec: HudiTableSpec, translator: HudiTranslator, spark_pool: str | None) -> _Layout:
    return _Layout(translator.key_prefix(spec), translator.group_name(spec), lambda _context: spec.key,
                   pool=translator.pool(spec), spark_pool=spark_pool, owners=translator.owners,
                   tags=translator.asset_tags(spec), metadata=translator.metadata(spec))


def _run_checks(definitions: list, keys: frozenset[dg.AssetKey], on_demand: frozenset[dg.AssetCheckKey]
                ) -> frozenset[dg.AssetCheckKey]:
    """The checks a maintenance run of `keys` evaluates: every check on them but the on-demand ones."""
    return frozenset(check for d in definitions for check in d.check_keys
                     if check.asset_key in keys and check not in on_demand)


def _run_selection(keys: frozenset[dg.AssetKey], checks: frozenset[dg.AssetCheckKey]) -> dg.AssetSelection:
    return dg.AssetSelection.assets(*keys).without_checks() | dg.AssetSelection.checks(*checks)


def build_hudi_maintenance_assets(registry: HudiTableRegistry, *, partitioned: bool = False,
                                  translator: HudiTranslator | None = None) -> HudiMaintenanceDefinitions:
    """Assets, checks, jobs, sensor and schedule maintaining every table of `registry`.

    Per table (default), the tables are read when the definitions load (reload the code location to
    pick up new ones; the sensor logs when it finds one). `partitioned=True` registers tables as
    partitions from the sensor instead, for roots holding more tables than a graph should show."""
    translator = translator or HudiTranslator()
    built = HudiMaintenanceDefinitions()
    # One local Spark at a time: a run holding the Spark pool keeps every other Spark run queued.
    spark_pool = SPARK_POOL if registry.engine == "spark" else None
    if partitioned:
        layout = _Layout(["hudi"], PARTITIONED_GROUP, lambda context: context.partition_key, TABLES,
                         spark_pool=spark_pool, owners=translator.owners, tags=translator.tags)
        built.assets = [_asset(step, layout) for step in STEPS]
        built.asset_checks = _standalone_checks(layout)
        keys = frozenset(a.key for a in built.assets)
        checks = _run_checks([*built.assets, *built.asset_checks], keys, _on_demand(layout))
        built.jobs = [dg.define_asset_job(PARTITIONED_JOB, selection=_run_selection(keys, checks),
                                          partitions_def=TABLES, executor_def=dg.in_process_executor,
                                          description="Maintenance of one Hudi table (a partition each).")]

        def target(key: str) -> TableTarget:
            return TableTarget(key, keys, PARTITIONED_JOB, partition_key=key, check_keys=checks)

        targets = None
    else:
        targets = {}
        for spec in describe_tables(registry):
            layout = _per_table(spec, translator, spark_pool)
            assets = [_asset(step, layout) for step in STEPS]
            keys = frozenset(a.key for a in assets)
            built.assets += assets
            standalone = _standalone_checks(layout)
            built.asset_checks += standalone
            checks = _run_checks(assets + standalone, keys, _on_demand(layout))
            built.jobs.append(dg.define_asset_job(
                translator.job_name(spec), selection=_run_selection(keys, checks),
                tags=translator.run_tags(spec, registry), executor_def=dg.in_process_executor,
                description=f"Maintenance of {spec.database}.{spec.key} ({spec.base_path})."))
            targets[spec.key] = TableTarget(spec.key, keys, translator.job_name(spec), check_keys=checks)
        target = targets.get
    selection = dg.AssetSelection.assets(*[a.key for a in built.assets])
    built.sensors = [build_sensor(selection, target, TABLES if partitioned else None)]
    built.schedules = [build_schedule(selection, target, TABLES if partitioned else None)]
    return built
