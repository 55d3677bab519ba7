#!/usr/bin/env bash
# Build the demo tables (COW and MOR, table version 6) afresh under ./demo-tables, materialize the
# whole maintenance graph (timeline -> clean plan -> clean -> archive -> merge) for both on an
# embedded Dagster instance (./demo-tables/.dagster_home) with local Spark, then show the timelines.
source "$(dirname "$0")/bootstrap.sh"
OUT="$ROOT/demo-tables"
python -m hudi_assets.orchestration.demo "$OUT"
for table in "$OUT"/demo_cow "$OUT"/demo_mor; do
  echo
  hudi-assets timeline "$table"
done
