#!/usr/bin/env bash
# Build the demo tables (COW and MOR) under ./demo-tables and show their timelines.
source "$(dirname "$0")/bootstrap.sh"
OUT="${1:-$ROOT/demo-tables}"
hudi-assets demo "$OUT"
