"""The Dagster face of hudi-assets: one maintenance lineage graph per Hudi table.

timeline_snapshot -> clean_plan -> clean_result -> archive_batch -> merged_archive_files under
`hudi/<database>/<table>/` (or partitioned by table), built by `build_hudi_maintenance_assets`, guarded by
checks that stop a deleting step when an invariant does not hold. A thin layer over the core library.
"""
