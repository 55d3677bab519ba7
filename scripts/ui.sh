#!/usr/bin/env bash
# The Dagster UI of the maintenance graph: prepares DAGSTER_HOME (run limits and pools), runs
# `dagster dev` in the foreground, and stops everything it started on Ctrl-C or SIGTERM (within 10 s).
# Tables: HUDI_ASSETS_TABLES / HUDI_ASSETS_ROOTS (see definitions.py; default ./demo-tables).
# Options: --home DIR (default $DAGSTER_HOME, else ./.dagster_home), --host, --port (default 3000).
source "$(dirname "$0")/bootstrap.sh"
# Engine services go here: a long-lived engine the runs share (the warm Spark) is started before the UI
# and its address exported for definitions.py; stop it in the same trap as the UI.
exec python -m hudi_assets.orchestration.ui --definitions "$ROOT/definitions.py" "$@"
