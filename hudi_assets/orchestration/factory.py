"""`build_hudi_maintenance_assets`: the one place that names assets, checks, jobs, sensor and schedule.

Two layouts of the same six steps (timeline_snapshot -> clean_plan -> clean_result -> archive_batch ->
merged_archive_files, and clean_result -> metadata_services):

- per table (default): every table has its own asset keys `hudi/<database>/<table>/<step>`, its own
  group `<database>__<table>` (the global lineage names it), its own job, and a pool every step claims,
  so check status, plots and history are the table's own and no two runs of one table are ever in
  progress at once.
- partitioned (preview): one set of assets with a dynamic partition per table (for roots holding many
  tables); the checks are partitioned too, a preview feature of Dagster 1.13 whose UI does not agree
  with itself: the check list can show the latest partition's verdict while the detail shows another,
  and the Partitions tab colours partitions by materialization, not by check. Read a table's state from
  its partition's runs and check history.

Honest states: each step is a `multi_asset` with `can_subset=True` over one `AssetSpec(skippable=True)`.
That makes its output and its check outputs optional (Dagster 1.13's decorator builder marks check
outputs required unless `can_subset`), so a step refused by its guard yields its failed check and
ends without output; the run finishes without failure, later steps are skipped, and every planned
check not evaluated resolves to SKIPPED (`AssetCheckExecutionRecord.resolve_status`: PLANNED in a run
that finished without failure), where a failed run would show "Execution failed". No check is
`blocking=True` for the same reason: a failed blocking check fails its step and the run.
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
    retention_guard,
    retention_settings_are_safe,
    settings_in_force,
    version_guard,
)
from hudi_assets.orchestration.clean_assets import clean_plan, clean_result
from hudi_assets.orchestration.metadata_checks import AGREES, AGREES_DESCRIPTION
from hudi_assets.orchestration.metadata_services_assets import (
    BLOCKED_CHECK,
    BLOCKED_DESCRIPTION,
    metadata_services,
)
from hudi_assets.orchestration.operations import operation_jobs
from hudi_assets.orchestration.orphan_assets import ORPHAN_CHECK, ORPHAN_DESCRIPTION, orphan_files
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.orchestration.status_metadata import HEALTH_CHECK, HEALTH_DESCRIPTION
from hudi_assets.orchestration.tables import (
    RUNBOOK,
    HudiTableSpec,
    HudiTranslator,
    annotated,
    asset_key,
    describe_tables,
    tag_run,
)
from hudi_assets.table import HoodieTable

TABLES = dg.DynamicPartitionsDefinition(name="hudi_tables")
PARTITIONED_GROUP = "hudi_maintenance"
PARTITIONED_JOB = "hudi_maintenance"
SPARK_POOL = "hudi_spark"


@dataclass(frozen=True)
class Step:
    """One asset of the graph: its body `compute(context, key, table)` (the table opened once for the
    step), what it follows, and the checks it reports as it runs."""

    name: str
    compute: Callable
    upstream: str | None = None
    spark: bool = False
    service: str | None = None  # the core service it runs, writing to the table: guarded first (`_events`)
    checks: tuple[tuple[str, str], ...] = ()  # (name, description) reported by the body

    @property
    def deletes(self) -> bool:
        return self.service is not None


STEPS = (
    Step("timeline_snapshot", timeline_snapshot, checks=((HEALTH_CHECK, HEALTH_DESCRIPTION),)),
    Step("clean_plan", clean_plan, "timeline_snapshot", spark=True, service="clean", checks=(
        (AGREES, AGREES_DESCRIPTION),
        ("plan_is_safe", "Every pending plan, and a new one before it is requested, passes the core's "
                               "safety rule: data files of the table only, inside the base path; no latest "
                               "slice, savepointed file, file read by a pending compaction/clustering, or "
                               "slice a reader at the earliest commit to retain needs."),)),
    Step("clean_result", clean_result, "clean_plan", spark=True, service="clean", checks=(
        ("retained_files_exist", "After the clean, every file of the latest slices and every file "
                                       "written at or after the earliest commit to retain still exists."),
        ("no_failed_deletes", "WARN when a file could not be deleted (the next clean retries it)."))),
    Step("archive_batch", archive_batch, "clean_result", service="archive", checks=(
        ("archived_instants_readable", "Every state file removed from the active timeline reads back "
                                             "from the archive."),)),
    Step("merged_archive_files", merged_archive_files, "archive_batch", service="archive"),
    Step("metadata_services", metadata_services, "clean_result", service="metadata table services",
         checks=((BLOCKED_CHECK, BLOCKED_DESCRIPTION),)),
)
# Per table, beside the maintenance job (a full listing each time: its own job, no automation).
ORPHAN_STEP = Step("orphan_files", orphan_files, "timeline_snapshot", spark=True,
                   checks=((ORPHAN_CHECK, ORPHAN_DESCRIPTION),))

@dataclass(frozen=True)
class StandaloneCheck:
    """A check on timeline_snapshot that runs on its own too (the UI's Execute button) and in every
    maintenance run. ERROR checks show failed; the steps that delete guard themselves (see `checks`)."""

    name: str
    function: Callable
    description: str


STANDALONE_CHECKS = (
    StandaloneCheck(RETENTION_CHECK, retention_settings_are_safe, RETENTION_DESCRIPTION),
    StandaloneCheck("timeline_is_well_formed", timeline_is_well_formed,
                    "Every instant time is well formed and no two instants share time and action."),
    StandaloneCheck("no_stale_pending_write", no_stale_pending_write,
                    "WARN when the oldest pending write, which fences archiving, is over a day old."),
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
    runbook_url: str = ""
    tags: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, object] = field(default_factory=dict)

    def check_spec(self, asset: dg.AssetKey, name: str, description: str) -> dg.AssetCheckSpec:
        return dg.AssetCheckSpec(name, asset=asset, description=annotated(description, self.owners,
                                                                          self.runbook_url),
                                 metadata=self.check_metadata, partitions_def=self.partitions_def)

    @property
    def check_metadata(self) -> dict[str, object]:
        return {RUNBOOK: dg.MetadataValue.url(self.runbook_url)} if self.runbook_url else {}


def _code_reference(function: Callable) -> dg.CodeReferencesMetadataValue:
    """Points the UI at the step's body, not at the factory's wrapper (a beta API: quietly)."""
    start = inspect.getsourcelines(function)[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.CodeReferencesMetadataValue(code_references=[
            dg.LocalFileCodeReference(file_path=inspect.getsourcefile(function), line_number=start)])


def _plotted(value: object) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)) or isinstance(
        value, dg.IntMetadataValue | dg.FloatMetadataValue)


def run_materialization(result: dg.MaterializeResult, hudi: HudiTableRegistry, table: HoodieTable,
                        deletes: bool) -> dg.MaterializeResult:
    """The step's metadata with the settings this run used; a deleting step's plotted figures of a dry
    run under `dry_run/<name>`, so that planned figures never share a plot with done ones."""
    settings = {"dry_run": hudi.dry_run, "engine": hudi.engine, **settings_in_force(table.write_config)}
    dry = hudi.dry_run and deletes
    metadata = {f"dry_run/{name}" if dry and _plotted(value) else name: value
                for name, value in (result.metadata or {}).items()}
    return dg.MaterializeResult(metadata={**metadata, "run_settings": dg.MetadataValue.json(settings)})


def _asset(step: Step, layout: _Layout) -> dg.AssetsDefinition:
    key = asset_key(layout.prefix, step.name)
    checks = ((RETENTION_CHECK, RETENTION_DESCRIPTION),) * step.deletes + step.checks
    spec = dg.AssetSpec(
        key, deps=[asset_key(layout.prefix, step.upstream)] if step.upstream else [],
        group_name=layout.group, partitions_def=layout.partitions_def, skippable=True,
        kinds={"hudi", "spark"} if step.spark else {"hudi"}, owners=layout.owners, tags=layout.tags,
        description=inspect.getdoc(step.compute),
        metadata={**layout.metadata, "dagster/code_references": _code_reference(step.compute)})

    @dg.multi_asset(
        name="__".join(key.path), specs=[spec], can_subset=True, partitions_def=layout.partitions_def,
        check_specs=[layout.check_spec(key, name, description) for name, description in checks],
        pool=layout.spark_pool if step.spark and layout.spark_pool else layout.pool,
        required_resource_keys={"hudi", "spark"} if step.spark else {"hudi"},
    )
    def _compute(context: dg.AssetExecutionContext):
        hudi, name = context.resources.hudi, layout.table_of(context)
        if key not in context.selected_asset_keys:
            raise dg.Failure(description=f"the checks of {step.name} run with it: materialize "
                                         f"{key.to_user_string()}", allow_retries=False)
        tag_run(context, name, hudi.dry_run)
        table = hudi.open(name)
        for event in _events(step, context, name, table):
            if isinstance(event, dg.MaterializeResult):
                yield run_materialization(event, hudi, table, step.deletes)
            elif dg.AssetCheckKey(key, event.check_name) in context.selected_asset_check_keys:
                yield event

    return _compute


def _events(step: Step, context: dg.AssetExecutionContext, key: str, table: HoodieTable):
    """The step's events; a step that writes first yields the settings check and stops (a refusal) when
    it blocks or the table's version lacks the service."""
    if step.service is not None and not ((yield from retention_guard(context, table, key))
                                         and version_guard(context, table, key, step.service)):
        return
    yield from step.compute(context, key, table)


def _standalone_check(layout: _Layout, check: StandaloneCheck) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=asset_key(layout.prefix, "timeline_snapshot"), name=check.name,
                    description=annotated(check.description, layout.owners, layout.runbook_url),
                    metadata=layout.check_metadata, partitions_def=layout.partitions_def,
                    required_resource_keys={"hudi"}, pool=layout.pool)
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        table = layout.table_of(context.op_execution_context)
        tag_run(context.op_execution_context, table, context.resources.hudi.dry_run)
        return check.function(context, table)

    return _check


def _standalone_checks(layout: _Layout) -> list[dg.AssetChecksDefinition]:
    return [_standalone_check(layout, check) for check in STANDALONE_CHECKS]


def _per_table(spec: HudiTableSpec, translator: HudiTranslator, spark_pool: str | None) -> _Layout:
    return _Layout(translator.key_prefix(spec), translator.group_name(spec), lambda _context: spec.key,
                   pool=translator.pool(spec), spark_pool=spark_pool, owners=translator.owners_of(spec),
                   runbook_url=spec.runbook_url, tags=translator.asset_tags(spec),
                   metadata=translator.metadata(spec))


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
    orphan_assets: list[dg.AssetsDefinition] = []  # per table only; outside the automation's selection
    if partitioned:
        owners = list(dict.fromkeys([*translator.owners, *registry.owners]))
        layout = _Layout(["hudi"], PARTITIONED_GROUP, lambda context: context.partition_key, TABLES,
                         spark_pool=spark_pool, owners=owners, runbook_url=registry.runbook_url,
                         tags=translator.tags)
        built.assets = [_asset(step, layout) for step in STEPS]
        built.asset_checks = _standalone_checks(layout)
        keys = frozenset(a.key for a in built.assets)
        built.jobs = [dg.define_asset_job(PARTITIONED_JOB, selection=dg.AssetSelection.assets(*keys),
                                          partitions_def=TABLES, executor_def=dg.in_process_executor,
                                          description="Maintenance of one Hudi table (a partition each).")]

        def target(key: str) -> TableTarget:
            return TableTarget(key, keys, PARTITIONED_JOB, partition_key=key)

        targets = None
    else:
        targets = {}
        for spec in describe_tables(registry):
            layout = _per_table(spec, translator, spark_pool)
            assets = [_asset(step, layout) for step in STEPS]
            keys = frozenset(a.key for a in assets)
            built.assets += assets
            built.asset_checks += _standalone_checks(layout)
            built.jobs.append(dg.define_asset_job(
                translator.job_name(spec), selection=dg.AssetSelection.assets(*keys),
                tags=translator.run_tags(spec, registry), executor_def=dg.in_process_executor,
                description=f"Maintenance of {spec.database}.{spec.key} ({spec.base_path})."))
            targets[spec.key] = TableTarget(spec.key, keys, translator.job_name(spec))
            orphans = _asset(ORPHAN_STEP, layout)
            orphan_assets.append(orphans)
            built.jobs.append(dg.define_asset_job(
                f"{translator.job_name(spec)}__orphan_files", selection=dg.AssetSelection.assets(orphans.key),
                tags=translator.run_tags(spec, registry), executor_def=dg.in_process_executor,
                description=f"Orphan files of {spec.database}.{spec.key} ({spec.base_path})."))
        target = targets.get
    built.jobs += operation_jobs()
    selection = dg.AssetSelection.assets(*[a.key for a in built.assets])
    built.assets += orphan_assets
    built.sensors = [build_sensor(selection, target, TABLES if partitioned else None)]
    built.schedules = [build_schedule(selection, target, TABLES if partitioned else None)]
    return built
