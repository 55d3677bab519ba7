"""What a plan holds at its peak: the planned paths, not the paths and the listed names besides
(at 2M files the two together were half a dry run's peak memory; bench/README.md)."""

from __future__ import annotations

import tracemalloc

from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.demo import generate_table
from hudi_assets.engine import LocalEngine
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable


def test_the_plans_peak_is_its_paths_not_its_paths_and_names(tmp_path):
    generate_table(Storage(str(tmp_path)), "COPY_ON_WRITE", partitions=10, files_per_partition=50,
                   commits=8, update_fraction=1.0, fast=True, savepoint=False, insert_overwrite=False,
                   failed_write=False)
    cleaner = Cleaner(HoodieTable(str(tmp_path)), CleanConfig(commits_retained=2), LocalEngine(processes=1))
    cleaner.plan(with_sizes=True)  # imports and caches first: what is measured is the plan alone
    tracemalloc.start()
    try:
        plan = cleaner.plan(with_sizes=True)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(map(len, plan.file_paths_to_delete.values())) == 2452
    # Names and paths held together peaked at 1.45x what the plan holds; the paths alone at 1.05x.
    assert peak <= 1.2 * held
