"""Progress of a clean's deletes: a report every `progress_interval` seconds plus the first and the
last, however many rounds of deletes there are; the crash hooks still see every round."""

from __future__ import annotations

import pytest

from hudi_assets.clean import CleanConfig, CleanHooks, clean_table
from hudi_assets.demo import generate_table
from hudi_assets.engine import LocalEngine
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable


class Rounds(CleanHooks):
    delete_batch = 2

    def __init__(self, interval: float):
        self.progress_interval = interval
        self.rounds: list[int] = []

    def reached(self, step: str, deleted: int = 0) -> None:
        if step == "deletes":
            self.rounds.append(deleted)


@pytest.mark.parametrize("interval", [0.0, 3600.0])
def test_progress_every_interval_and_at_the_ends_hooks_every_round(tmp_path, interval):
    generate_table(Storage(str(tmp_path)), "COPY_ON_WRITE", partitions=3, files_per_partition=3, commits=6,
                   fast=True)
    reports: list[tuple[int, int]] = []
    hooks = Rounds(interval)
    result = clean_table(HoodieTable(str(tmp_path)), CleanConfig(commits_retained=2),
                         LocalEngine(processes=1), progress=lambda done, total: reports.append((done, total)),
                         hooks=hooks)
    total = result.files_deleted
    assert total > 4  # several rounds of two files
    assert hooks.rounds == [min(n, total) for n in range(2, total + 2, 2)]
    if interval:
        assert reports == [(0, total), (total, total)]
    else:
        assert reports == [(0, total), *((n, total) for n in hooks.rounds)]
