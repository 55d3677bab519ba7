#!/usr/bin/env bash
# The Dagster UI of the maintenance graph: prepares DAGSTER_HOME (run limits and pools), runs
# `dagster dev` in the foreground, and stops everything it started on Ctrl-C or SIGTERM (within 10 s).
# Tables: HUDI_ASSETS_TABLES / HUDI_ASSETS_ROOTS (see definitions.py; default ./demo-tables).
# Unless HUDI_ASSETS_ENGINE=local (or HUDI_ASSETS_SPARK_REMOTE names a server), a Spark Connect server is
# started first and every run uses it (no JVM per run); it is stopped with the UI.
# Options: --home DIR (default $DAGSTER_HOME, else ./.dagster_home), --host, --port (default 3000),
# --no-warm-spark.
source "$(dirname "$0")/bootstrap.sh"
exec python -m hudi_assets.orchestration.ui --definitions "$ROOT/definitions.py" "$@"
