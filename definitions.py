"""Dagster entry point: `dagster dev -f definitions.py` shows the maintenance graph of every table.

Which tables: `HUDI_ASSETS_TABLES` (comma-separated base paths) and/or `HUDI_ASSETS_ROOTS`
(comma-separated folders or bucket prefixes to scan); with neither set, the demo tables written by
`bash scripts/demo.sh` into ./demo-tables. `HUDI_ASSETS_HOODIE_CONF` adds `key=value,...` settings
for every table. Storage options (for S3 and the like) go in `HUDI_ASSETS_STORAGE_OPTIONS` likewise.
`HUDI_ASSETS_ENGINE=local` runs the per-file work in a thread pool instead of Spark;
`HUDI_ASSETS_SPARK_REMOTE=sc://HOST:PORT` runs it on a warm Spark Connect server (`scripts/ui.sh` starts one).
Nothing is deleted until `HUDI_ASSETS_DRY_RUN=false`. Failed runs are posted to `HUDI_ASSETS_ALERT_URL`
(Slack-compatible JSON) when set, else logged. `HUDI_ASSETS_OWNERS` (comma-separated) and
`HUDI_ASSETS_RUNBOOK_URL` ({database} and {table} filled in) are shown on every asset and check.
`HUDI_ASSETS_LAYOUT=partitioned` maintains the tables as partitions of one set of assets instead of
giving each table its own assets.
"""

from __future__ import annotations

import os
from pathlib import Path

from hudi_assets.config import parse_overrides
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.orchestration.definitions import build_definitions
from hudi_assets.orchestration.resources import HudiTableRegistry


def _list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def _choice(name: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, choices[0]).strip().lower()
    if value not in choices:
        raise InvalidConfigError(f"{name}={value!r}: expected one of {', '.join(choices)}")
    return value


_tables, _roots = _list("HUDI_ASSETS_TABLES"), _list("HUDI_ASSETS_ROOTS")
if not _tables and not _roots:
    _roots = [str(Path(__file__).resolve().parent / "demo-tables")]

defs = build_definitions(
    HudiTableRegistry(
        base_paths=_tables,
        roots=_roots,
        hoodie_conf=parse_overrides(_list("HUDI_ASSETS_HOODIE_CONF")),
        storage_options=parse_overrides(_list("HUDI_ASSETS_STORAGE_OPTIONS")),
        engine=_choice("HUDI_ASSETS_ENGINE", ("spark", "local")),
        spark_remote=os.environ.get("HUDI_ASSETS_SPARK_REMOTE", ""),
        dry_run=_choice("HUDI_ASSETS_DRY_RUN", ("true", "false")) == "true",
        owners=_list("HUDI_ASSETS_OWNERS"),
        runbook_url=os.environ.get("HUDI_ASSETS_RUNBOOK_URL", ""),
    ),
    partitioned=_choice("HUDI_ASSETS_LAYOUT", ("per_table", "partitioned")) == "partitioned",
    alert_url=os.environ.get("HUDI_ASSETS_ALERT_URL") or None,
)
