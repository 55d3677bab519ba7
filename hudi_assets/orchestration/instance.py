"""The embedded Dagster instance of the demo and tests: telemetry off, one run per table at a time."""

from __future__ import annotations

from pathlib import Path

from hudi_assets.orchestration.automation import TABLE_TAG

INSTANCE_YAML = f"""\
telemetry:
  enabled: false
concurrency:
  runs:
    tag_concurrency_limits:
      - key: "{TABLE_TAG}"
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
