"""The Dagster instance settings the maintenance graph relies on (the demo and tests write them).

- Pools at run granularity, limit 1: a run claims every pool its steps name for as long as it runs.
  Per table, the steps and checks of a table name the table's pool, so runs of one table queue behind
  each other however launched (sensor, Materialize, backfill, CLI); with the Spark engine the Spark
  steps name `hudi_spark` instead: one local Spark at a time, whichever table.
- Run tag limits: one run per `hudi/table` (sensor, schedule and job runs) and, for the partitioned
  layout, one per `dagster/partition` (Dagster sets it on every run of one partition, backfills included).
"""

from __future__ import annotations

from pathlib import Path

from hudi_assets.orchestration.automation import PARTITION_TAG
from hudi_assets.orchestration.tables import TABLE_TAG

INSTANCE_YAML = f"""\
telemetry:
  enabled: false
concurrency:
  pools:
    granularity: run
    default_limit: 1
  runs:
    tag_concurrency_limits:
      - key: "{TABLE_TAG}"
        value:
          applyLimitPerUniqueValue: true
        limit: 1
      - key: "{PARTITION_TAG}"
        value:
          applyLimitPerUniqueValue: true
        limit: 1
"""


def prepare_dagster_home(home: str | Path) -> Path:
    """Create a DAGSTER_HOME whose `dagster.yaml` turns telemetry off and serialises runs per table."""
    path = Path(home)
    path.mkdir(parents=True, exist_ok=True)
    (path / "dagster.yaml").write_text(INSTANCE_YAML)
    return path
