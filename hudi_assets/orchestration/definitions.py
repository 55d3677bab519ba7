"""Build the `Definitions` of the maintenance graph for a set of tables."""

from __future__ import annotations

import dagster as dg

from hudi_assets.orchestration.assets import ASSETS, CHECKS
from hudi_assets.orchestration.automation import (
    daily_hudi_maintenance,
    hudi_maintenance_sensor,
    maintenance_job,
)
from hudi_assets.orchestration.resources import HudiTableRegistry


def build_definitions(registry: HudiTableRegistry) -> dg.Definitions:
    return dg.Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=[maintenance_job],
        sensors=[hudi_maintenance_sensor],
        schedules=[daily_hudi_maintenance],
        resources={"hudi": registry},
    )
