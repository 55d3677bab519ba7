"""Progress of a clean's deletes: a report every `hoodie.assets.clean.progress.interval.ms` plus the
first and the last, however many rounds of deletes there are; the listener hears every round."""

from __future__ import annotations

import pytest

from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.demo import generate_table
from hudi_assets.engine import LocalEngine
from hudi_assets.listener import Listener, Step
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable


class Rounds(Listener):
    def __init__(self):
        self.rounds: list[int] = []
        self.reports: list[tuple[int, int]] = []

    def reached(self, step: Step, count: int = 0) -> None:
        if step is Step.CLEAN_DELETES:
            self.rounds.append(count)

    def progress(self, done: int, total: int) -> None:
        self.reports.append((done, total))


@pytest.mark.parametrize("interval_ms", [0, 3_600_000])
def test_progress_every_interval_and_at_the_ends_listener_every_round(tmp_path, interval_ms):
    generate_table(Storage(str(tmp_path)), "COPY_ON_WRITE", partitions=3, files_per_partition=3, commits=6,
                   fast=True)
    listener = Rounds()
    config = CleanConfig(commits_retained=2, delete_batch=2, progress_interval_ms=interval_ms)
    result = Cleaner(HoodieTable(str(tmp_path)), config, LocalEngine(processes=1), listener=listener).clean()
    total = result.files_deleted
    assert total > 4  # several rounds of two files
    assert listener.rounds == [min(n, total) for n in range(2, total + 2, 2)]
    if interval_ms:
        assert listener.reports == [(0, total), (total, total)]
    else:
        assert listener.reports == [(0, total), *((n, total) for n in listener.rounds)]


def test_delete_batch_and_progress_interval_are_settings(tmp_path):
    """The tunables are read from the option registry (hoodie.assets.*) and listed in `clean --help`."""
    from hudi_assets.config import WriteConfig
    from hudi_assets.config_options import CLEAN_OPTIONS, settings_epilog

    config = CleanConfig.from_write_config(WriteConfig.load({}, None, {
        "hoodie.assets.clean.delete.batch": "7", "hoodie.assets.clean.progress.interval.ms": "250"}))
    assert (config.delete_batch, config.progress_interval_ms) == (7, 250)
    assert CleanConfig().delete_batch == 1000 and CleanConfig().progress_interval_ms == 5000
    epilog = settings_epilog(CLEAN_OPTIONS)
    assert "hoodie.assets.clean.delete.batch=1000" in epilog
    assert "hoodie.assets.clean.progress.interval.ms=5000" in epilog
