"""Run one clean that kills itself (SIGKILL) at a given step: the crash tests' injected fault.

Usage: python kill_clean.py BASE_PATH STEP[:N] RETAINED, where STEP is a `CleanHooks` step and N, for
"deletes", the number of deletes after which to die (deletes then go one file per batch), for
"mdt_block_written" the metadata log block after which to die.
"""

from __future__ import annotations

import os
import signal
import sys

from hudi_assets.clean import CleanConfig, CleanHooks, clean_table
from hudi_assets.config import WriteConfig
from hudi_assets.engine import LocalEngine
from hudi_assets.table import HoodieTable


class KillAt(CleanHooks):
    def __init__(self, wanted: str):
        self.step, _, count = wanted.partition(":")
        self.count = int(count) if count else 0
        if self.step == "deletes":
            self.delete_batch = 1

    def reached(self, step: str, deleted: int = 0) -> None:
        if step == self.step and deleted >= self.count:
            os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    base, wanted, retained = sys.argv[1:4]
    table = HoodieTable(base)
    config = CleanConfig.from_write_config(WriteConfig.load(
        table.config.props, None, {"hoodie.cleaner.commits.retained": retained}))
    clean_table(table, config, LocalEngine(), hooks=KillAt(wanted))
