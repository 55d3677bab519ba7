#!/usr/bin/env bash
# Run the tests (sets up .venv from uv.lock first). A first argument picks a lane:
#   full  everything (the default, and what CI runs)
#   fast  no Spark JVM, no Dagster, no soaks, no ~100,000-file tables
# Every other argument goes to pytest (a later `-m` replaces the lane's).
FAST_LANE="not spark and not dagster and not soak and not large"
lane=full
case "${1:-}" in
  fast | full) lane="$1"; shift ;;
esac
source "$(dirname "$0")/bootstrap.sh"
if [ "$lane" = fast ]; then
  exec pytest -m "$FAST_LANE" "$@"
fi
exec pytest "$@"
