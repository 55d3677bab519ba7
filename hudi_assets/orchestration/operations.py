"""What an operator does by hand, as Dagster jobs over the core's own functions.

- `hudi_discard_pending_clean`: remove a refused pending clean (`Cleaner.discard_pending`);
- `hudi_rollback_failed_write`: roll back a failed write (`Rollbacker.rollback`);
- `hudi_metadata_audit`: compare the metadata table with storage in every partition the next clean does
  not plan (a full listing: on demand, never part of a maintenance run, so it sits on no step);
- `hudi_savepoint` / `hudi_delete_savepoint`: create (default: the latest completed commit) or delete a
  savepoint (`savepoint.Savepointer`).

One job each for every table: the table key is run config. Each run carries the table and dry-run tags,
passes the settings guard, only says what it would do in a dry run, and the core function takes the
table lock. The bodies stay thin: they call the core and report.
"""

import dagster as dg
from pydantic import Field

from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.orchestration.checks import retention_check
from hudi_assets.orchestration.metadata_checks import agreement_check, has_files_partition
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.orchestration.tables import tag_run
from hudi_assets.rollback.rollbacker import Rollbacker
from hudi_assets.savepoint import Savepointer
from hudi_assets.table import HoodieTable

DISCARD_JOB = "hudi_discard_pending_clean"
ROLLBACK_JOB = "hudi_rollback_failed_write"
AUDIT_JOB = "hudi_metadata_audit"
SAVEPOINT_JOB = "hudi_savepoint"
DELETE_SAVEPOINT_JOB = "hudi_delete_savepoint"


class TableConfig(dg.Config):
    table: str = Field(description="The table's key in the registry (its base path's last folder).")


class PendingInstantConfig(TableConfig):
    instant: str = Field(description="Instant time of the pending clean or write.")


class RollbackConfig(PendingInstantConfig):
    force: bool = Field(default=False, description="Roll back even when the writer's heartbeat is live.")


def _writable(context: dg.OpExecutionContext, hudi: HudiTableRegistry, key: str, what: str
              ) -> HoodieTable | None:
    """The table, opened once, when the guards of every writing job let it be written: the settings
    check (refuses with the core's words) and dry_run (None)."""
    tag_run(context, key, hudi.dry_run)
    table = hudi.open(key)
    check = retention_check(context, table)
    if not check.passed and check.severity == dg.AssetCheckSeverity.ERROR:
        raise dg.Failure(description=f"{key} ({table.base_path}): {check.description}; did not {what}",
                         allow_retries=False)
    if hudi.dry_run:
        context.log.info(f"{key} ({table.base_path}): dry run, would {what}")
        return None
    return table


@dg.op(required_resource_keys={"hudi"})
def discard_pending_clean(context: dg.OpExecutionContext, config: PendingInstantConfig) -> None:
    """Removes a pending clean from the timeline, keeping copies of its state files."""
    hudi = context.resources.hudi
    if table := _writable(context, hudi, config.table, f"discard the pending clean {config.instant}"):
        copies = Cleaner.for_table(table).discard_pending(config.instant)
        context.log.info(f"{config.table}: discarded the pending clean {config.instant}; copies kept: "
                         + ", ".join(copies))


@dg.op(required_resource_keys={"hudi", "spark"})
def rollback_failed_write(context: dg.OpExecutionContext, config: RollbackConfig) -> None:
    """Rolls back one pending write whose writer is gone (finishing any pending rollback first)."""
    hudi = context.resources.hudi
    if table := _writable(context, hudi, config.table, f"roll back the write {config.instant}"):
        rollbacker = Rollbacker(table, hudi.engine_for(context.resources.spark),
                                metadata=MetadataTableSink(table))
        for rollback in rollbacker.rollback(config.instant, force=config.force).executed:
            context.log.info(f"{config.table}: rolled back {rollback.action} {rollback.instant_time} as "
                             f"{rollback.rollback_instant}: {rollback.files_deleted} files deleted")


@dg.op(required_resource_keys={"hudi"})
def audit_metadata_table(context: dg.OpExecutionContext, config: TableConfig) -> None:
    """Fails, with the differences, when the metadata table and storage disagree outside the partitions
    the next clean plans (those are compared by clean_plan itself before every plan)."""
    hudi = context.resources.hudi
    tag_run(context, config.table, hudi.dry_run)
    table = hudi.open(config.table)
    exclude = []
    if has_files_partition(table):
        exclude = Cleaner.for_table(table).partitions_to_clean()
    result = agreement_check(context, table, AUDIT_JOB, dg.AssetCheckSeverity.WARN, exclude=exclude)
    if not result.passed:
        raise dg.Failure(description=f"{config.table}: {result.description}", metadata=result.metadata)
    context.log.info(f"{config.table} ({table.base_path}): the metadata table agrees with storage outside "
                     f"the {len(exclude)} partitions clean_plan compares")


class SavepointConfig(TableConfig):
    instant: str = Field(default="", description="Completed commit to savepoint (empty: the latest).")
    comment: str = Field(default="default", description="Why the version is kept.")
    user: str = Field(default="default", description="Who keeps it.")


@dg.op(required_resource_keys={"hudi", "spark"})
def create_savepoint(context: dg.OpExecutionContext, config: SavepointConfig) -> None:
    """Savepoints a completed commit: the cleaner keeps its files and archival stops at it."""
    hudi = context.resources.hudi
    what = f"savepoint {config.instant or 'the latest completed commit'}"
    if table := _writable(context, hudi, config.table, what):
        service = Savepointer(table, engine=hudi.engine_for(context.resources.spark))
        savepoint = service.create(config.instant or None, user=config.user, comment=config.comment)
        context.log.info(f"{config.table}: savepoint {savepoint.instant} created, keeping "
                         f"{savepoint.file_count} files")


class SavepointInstantConfig(TableConfig):
    instant: str = Field(description="Instant time of the savepoint.")


@dg.op(required_resource_keys={"hudi"})
def delete_savepoint(context: dg.OpExecutionContext, config: SavepointInstantConfig) -> None:
    """Deletes a savepoint: the next clean may free the files only it kept."""
    hudi = context.resources.hudi
    if table := _writable(context, hudi, config.table, f"delete the savepoint {config.instant}"):
        Savepointer(table).delete(config.instant)
        context.log.info(f"{config.table}: savepoint {config.instant} deleted")


def operation_jobs() -> list[dg.JobDefinition]:
    """The jobs, for every table (the table is chosen in the run config)."""
    def job(name: str, op: dg.OpDefinition) -> dg.JobDefinition:
        @dg.job(name=name, description=op.description, executor_def=dg.in_process_executor)
        def _job():
            op()
        return _job
    return [job(DISCARD_JOB, discard_pending_clean), job(ROLLBACK_JOB, rollback_failed_write),
            job(AUDIT_JOB, audit_metadata_table), job(SAVEPOINT_JOB, create_savepoint),
            job(DELETE_SAVEPOINT_JOB, delete_savepoint)]
