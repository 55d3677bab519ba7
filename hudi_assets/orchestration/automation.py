"""Sensor and schedule: maintenance runs when a table's timeline says it is due.

Why a sensor and not `AutomationCondition`: whether a table is due is written in its timeline
(commits since the last clean, completed commits past `hoodie.keep.max.commits`, the metadata table's
compaction, clean or archive due), which Hudi's
writers change outside Dagster; automation conditions react to Dagster's own events (materializations,
cron ticks, check results) and cannot read it. The sensor reads it, once per table per tick.

A table is requested when it is due and its fingerprint (latest completed write, settings in force)
changed since the sensor last requested or dismissed it: a `.clean.requested` written by a running
run is not a write, so it triggers nothing; lowering a retention setting changes the fingerprint, so
it is noticed. A table with a run queued or in progress is left alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg

from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.maintenance import MaintenanceStatus, maintenance_status
from hudi_assets.metadata_services import services_status
from hudi_assets.orchestration.checks import settings_in_force
from hudi_assets.orchestration.resources import HudiTableRegistry
from hudi_assets.orchestration.tables import TABLE_TAG, run_tags
from hudi_assets.status import reasons
from hudi_assets.table import HoodieTable

PARTITION_TAG = "dagster/partition"
ACTIVE_RUN_STATUSES = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED,
                       dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]


@dataclass(frozen=True)
class TableTarget:
    """What a run of one table's maintenance materializes."""

    key: str
    asset_keys: frozenset[dg.AssetKey]
    job_name: str
    partition_key: str | None = None

    def owns(self, run: dg.DagsterRun) -> bool:
        """Whether `run` works on this table, however it was launched (sensor, UI, backfill, CLI)."""
        if run.tags.get(TABLE_TAG) == self.key:
            return True
        if self.partition_key is not None:
            return run.tags.get(PARTITION_TAG) == self.partition_key
        return run.job_name == self.job_name or bool(set(run.asset_selection or ()) & self.asset_keys)

    def run_request(self, reason: str, registry: HudiTableRegistry,
                    run_key: str | None = None) -> dg.RunRequest:
        """A run of every asset of the table and their checks, tagged as every run of it is."""
        return dg.RunRequest(run_key=run_key, partition_key=self.partition_key,
                             asset_selection=sorted(self.asset_keys, key=lambda k: k.path),
                             tags={**run_tags(self.key, registry.dry_run), "hudi/reason": reason})


@dataclass
class SensorCursor:
    """The sensor's memory: each table's fingerprint when last requested or dismissed, and a sequence
    that makes every run key new (Dagster drops a request whose run key it has seen, so a fingerprint
    that comes back, e.g. settings returned to an earlier value, must not make a key seen before)."""

    marks: dict[str, str]
    sequence: int = 0

    @classmethod
    def parse(cls, text: str | None) -> SensorCursor:
        data = json.loads(text) if text else {}
        return cls(dict(data.get("marks", {})), int(data.get("sequence", 0)))

    def next_run_key(self, key: str) -> str:
        self.sequence += 1
        return f"{key}:{self.sequence}"

    def dump(self, tables: dict[str, str]) -> str:
        marks = {k: v for k, v in self.marks.items() if k in tables}
        return json.dumps({"marks": marks, "sequence": self.sequence}, sort_keys=True)


def fingerprint(table: HoodieTable) -> str:
    """Latest completed write and the settings in force: what makes a due table worth a new run."""
    last = table.active_timeline.completed_commits_timeline(table.is_mor).last()
    settings = json.dumps(settings_in_force(table.write_config), sort_keys=True)
    return f"{last.timestamp if last else '-'}:{hashlib.sha1(settings.encode()).hexdigest()[:12]}"


def why(status: MaintenanceStatus) -> str:
    """The triggers in the words of `hudi-assets status`."""
    return (f"{reasons.clean_trigger(status.commits_since_last_clean, status.clean_max_commits)}; "
            f"{reasons.archive_trigger(status.completed_commits, status.keep_max_commits)}")


def _busy(context, targets: list[TableTarget]) -> set[str]:
    runs = context.instance.get_runs(filters=dg.RunsFilter(statuses=ACTIVE_RUN_STATUSES))
    return {t.key for t in targets if any(t.owns(run) for run in runs)}


def _registered(context, tables: dict[str, str], partitions: dg.DynamicPartitionsDefinition | None,
                target: Callable[[str], TableTarget | None]) -> tuple[list[TableTarget], list]:
    """Targets of the tables found now; in the partitioned layout, partition add/delete requests."""
    if partitions is None:
        for key in [k for k in tables if target(k) is None]:
            context.log.warning(f"{key}: found at {tables[key]} but not in the definitions; reload the code "
                                "location to add its assets")
        return [t for t in map(target, tables) if t], []
    known = set(context.instance.get_dynamic_partitions(partitions.name))
    requests = []
    if set(tables) - known:
        context.log.info(f"registering tables as partitions: {', '.join(sorted(set(tables) - known))}")
        requests.append(partitions.build_add_request(sorted(set(tables) - known)))
    if known - set(tables):
        context.log.info(f"tables gone, partitions removed: {', '.join(sorted(known - set(tables)))}")
        requests.append(partitions.build_delete_request(sorted(known - set(tables))))
    return [target(k) for k in tables], requests


def build_sensor(selection: dg.AssetSelection, target: Callable[[str], TableTarget | None],
                 partitions: dg.DynamicPartitionsDefinition | None) -> dg.SensorDefinition:
    @dg.sensor(name="hudi_maintenance_sensor", target=selection, minimum_interval_seconds=60,
               default_status=dg.DefaultSensorStatus.RUNNING,
               description="Registers tables and requests maintenance when commits since the last clean "
                           "reach hoodie.clean.max.commits, completed commits exceed keep.max.commits or "
                           "the metadata table's services are due.")
    def hudi_maintenance_sensor(context: dg.SensorEvaluationContext,
                                hudi: HudiTableRegistry) -> dg.SensorResult:
        tables = hudi.tables()
        targets, partition_requests = _registered(context, tables, partitions, target)
        busy = _busy(context, targets)
        cursor = SensorCursor.parse(context.cursor)
        requests, reasons = [], []
        for t in targets:
            if t.key in busy:
                reasons.append(f"{t.key}: a run is queued or in progress")
                context.log.info(reasons[-1])
                continue
            try:
                table = hudi.open_path(tables[t.key])
                status = maintenance_status(table, table.write_config)
                mdt_due = not status.due and table.config.has_metadata_table and services_status(table).due
                mark = fingerprint(table)
            except HudiAssetsError as error:
                reasons.append(f"{t.key}: {error}")
                context.log.warning(reasons[-1])
                continue
            if not (status.due or mdt_due):
                note = f"{t.key}: not due ({why(status)}; metadata table services not due)"
            elif cursor.marks.get(t.key) == mark:
                note = f"{t.key}: due, already requested for this timeline and these settings"
            else:
                note = None
                reason = ("clean" if status.clean_due else "archive" if status.archive_due
                          else "metadata services")
                run_key = cursor.next_run_key(t.key)
                requests.append(t.run_request(reason, hudi, run_key=run_key))
                context.log.info(f"{t.key}: requested a run ({reason} due: {why(status)}; run key {run_key})")
            if note:
                reasons.append(note)
                context.log.info(note)
            cursor.marks[t.key] = mark
        return dg.SensorResult(
            run_requests=requests, dynamic_partitions_requests=partition_requests,
            cursor=cursor.dump(tables),
            skip_reason=None if requests else ("; ".join(reasons) or "no tables registered"))

    return hudi_maintenance_sensor


def build_schedule(selection: dg.AssetSelection, target: Callable[[str], TableTarget | None],
                   partitions: dg.DynamicPartitionsDefinition | None) -> dg.ScheduleDefinition:
    @dg.schedule(name="daily_hudi_maintenance", target=selection, cron_schedule="0 3 * * *",
                 description="Daily safety net: maintenance of every registered table, due or not.")
    def daily_hudi_maintenance(context: dg.ScheduleEvaluationContext, hudi: HudiTableRegistry):
        known = (set(context.instance.get_dynamic_partitions(partitions.name)) if partitions
                 else set(hudi.tables()))
        targets = [t for t in map(target, sorted(known & set(hudi.tables()))) if t]
        busy = _busy(context, targets)
        tick = context.scheduled_execution_time
        requests = [t.run_request("daily", hudi, run_key=f"{t.key}:daily:{tick}") for t in targets
                    if t.key not in busy]
        return requests or dg.SkipReason("no registered table without a run in progress")

    return daily_hudi_maintenance
