"""Archive a table with an archiver that kills itself (SIGKILL) at a given step: the crash tests'
injected fault. Usage: python kill_archive.py BASE_PATH STEP [key=value ...] (hoodie.* overrides)."""

from __future__ import annotations

import os
import signal
import sys

from hudi_assets.archive.archiver import ArchiveHooks, HoodieTimelineArchiver
from hudi_assets.archive.config import ArchiveConfig
from hudi_assets.table import HoodieTable


class KillAt(ArchiveHooks):
    def __init__(self, step: str):
        self.step = step

    def reached(self, step: str) -> None:
        if step == self.step:
            os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    base, step, *pairs = sys.argv[1:]
    table = HoodieTable(base, hoodie_conf=dict(p.split("=", 1) for p in pairs))
    HoodieTimelineArchiver(table, ArchiveConfig.from_write_config(table.write_config),
                           KillAt(step)).archive_if_required()
