"""Sensor, schedule and job: tables are discovered, and maintenance runs when Hudi's thresholds are met.

Runs carry the tag `hudi/table=<key>`; the instance's run queue limits that tag to one run per
value (see `dagster.yaml` of the demo instance), so runs for one table never overlap.
"""

import json

import dagster as dg

from hudi_assets.maintenance import maintenance_status
from hudi_assets.orchestration.assets import GROUP, TABLES
from hudi_assets.orchestration.resources import HudiTableRegistry

TABLE_TAG = "hudi/table"

maintenance_job = dg.define_asset_job(
    "hudi_maintenance", selection=dg.AssetSelection.groups(GROUP),
    description="Timeline snapshot, clean and archive of one Hudi table (one partition per table).",
)


def run_request(key: str, reason: str, run_key: str | None = None) -> dg.RunRequest:
    return dg.RunRequest(partition_key=key, run_key=run_key, tags={TABLE_TAG: key, "hudi/reason": reason})


@dg.sensor(job=maintenance_job, minimum_interval_seconds=60,
           description="Registers tables as partitions and requests maintenance when commits since the "
                       "last clean reach hoodie.clean.max.commits or the timeline exceeds keep.max.commits.")
def hudi_maintenance_sensor(context: dg.SensorEvaluationContext, hudi: HudiTableRegistry) -> dg.SensorResult:
    tables = hudi.tables()
    known = set(context.instance.get_dynamic_partitions(TABLES.name))
    cursor: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    requests = []
    for key, base_path in tables.items():
        table = hudi.open_path(base_path)  # one discovery per evaluation, not one per table
        status = maintenance_status(table, hudi.write_config(key, table))
        if cursor.get(key) == status.latest_instant:
            continue  # nothing happened since the last look
        cursor[key] = status.latest_instant
        if status.due:
            reason = "clean" if status.clean_due else "archive"
            requests.append(run_request(key, reason, run_key=f"{key}:{status.latest_instant}"))
    removed = sorted(known - set(tables))
    partition_requests = [TABLES.build_add_request(sorted(set(tables) - known))]
    if removed:
        partition_requests.append(TABLES.build_delete_request(removed))
    kept = {k: cursor[k] for k in tables if k in cursor}
    return dg.SensorResult(run_requests=requests, cursor=json.dumps(kept),
                           dynamic_partitions_requests=partition_requests)


@dg.schedule(job=maintenance_job, cron_schedule="0 3 * * *",
             description="Daily safety net: maintenance of every registered table, due or not.")
def daily_hudi_maintenance(context: dg.ScheduleEvaluationContext, hudi: HudiTableRegistry):
    known = set(context.instance.get_dynamic_partitions(TABLES.name))
    return [run_request(key, "daily") for key in hudi.tables() if key in known]
