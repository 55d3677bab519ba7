"""The Dagster face of hudi-assets: one maintenance lineage graph per Hudi table.

timeline_snapshot -> clean_plan -> clean_result -> archive_batch -> merged_archive_files under
`hudi/<database>/<table>/` (or partitioned by table), built by `build_hudi_maintenance_assets`, guarded by
checks that stop a deleting step when an invariant does not hold. A thin layer over the core library,
installed with the `dagster` extra: without it, importing this package says so in one line.
"""

from hudi_assets.extras import require

for _module in ("dagster", "dagster_pyspark", "pandera", "pandas"):
    require(_module, "dagster", "hudi_assets.orchestration")
