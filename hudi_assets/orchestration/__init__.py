"""The Dagster face of hudi-assets: one maintenance lineage graph per Hudi table.

timeline_snapshot -> clean_plan -> clean_result -> archive_batch -> merged_archive_files, partitioned by
table (a dynamic partition per registered table), guarded by pandera checks that block a deleting
step when an invariant does not hold. Everything here is a thin layer over the core library.
"""
