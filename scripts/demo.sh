#!/usr/bin/env bash
# Build the demo tables (COW and MOR, table version 6) afresh under ./demo-tables and run the
# maintenance job on them (today: the timeline; clean and archive join as they land).
source "$(dirname "$0")/bootstrap.sh"
OUT="$ROOT/demo-tables"
rm -rf "$OUT"   # our own output folder inside the project (gitignored), rebuilt on every run
for table in $(hudi-assets demo "$OUT" | sed -n 's/^wrote demo table //p'); do
  hudi-assets timeline "$table"
  echo
done
