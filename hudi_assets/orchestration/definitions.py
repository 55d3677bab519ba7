"""Build the `Definitions` of the maintenance graph for a set of tables."""

from __future__ import annotations

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from hudi_assets.orchestration.archive_assets import ARCHIVE_ASSETS
from hudi_assets.orchestration.assets import ASSETS, CHECKS
from hudi_assets.orchestration.automation import (
    daily_hudi_maintenance,
    hudi_maintenance_sensor,
    maintenance_job,
)
from hudi_assets.orchestration.clean_assets import CLEAN_ASSETS
from hudi_assets.orchestration.resources import HudiTableRegistry, spark_resource


def build_definitions(registry: HudiTableRegistry,
                      spark: LazyPySparkResource | None = None) -> dg.Definitions:
    """The five assets and their checks, partitioned by table, with the sensor, schedule and job."""
    return dg.Definitions(
        assets=[*ASSETS, *CLEAN_ASSETS, *ARCHIVE_ASSETS],
        asset_checks=CHECKS,
        jobs=[maintenance_job],
        sensors=[hudi_maintenance_sensor],
        schedules=[daily_hudi_maintenance],
        resources={"hudi": registry, "spark": spark or spark_resource()},
    )
