"""Build the `Definitions` of the maintenance graph for a set of tables."""

from __future__ import annotations

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from hudi_assets.orchestration.alerts import build_failure_alert
from hudi_assets.orchestration.factory import build_hudi_maintenance_assets
from hudi_assets.orchestration.resources import HudiTableRegistry, spark_resource
from hudi_assets.orchestration.tables import HudiTranslator


def build_definitions(registry: HudiTableRegistry, spark: LazyPySparkResource | None = None, *,
                      partitioned: bool = False, translator: HudiTranslator | None = None,
                      alert_url: str | None = None) -> dg.Definitions:
    """The maintenance graph of every table with its checks, jobs, sensors and schedule; failed runs
    are posted to `alert_url` (Slack-compatible JSON) or logged.

    Every run executes in one process (`in_process_executor`, UI materializations included), so the
    steps share one Spark session, started only by the first step that needs it."""
    built = build_hudi_maintenance_assets(registry, partitioned=partitioned, translator=translator)
    return dg.Definitions(
        assets=built.assets, asset_checks=built.asset_checks, jobs=built.jobs,
        sensors=[*built.sensors, build_failure_alert(alert_url)],
        schedules=built.schedules, executor=dg.in_process_executor,
        resources={"hudi": registry, "spark": spark or spark_resource()},
    )
