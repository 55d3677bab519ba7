"""Run the metadata table's services (as `--run-services --no-active-writer`) and SIGKILL the
process at a step: the crash tests' injected fault.

Usage: python kill_metadata_services.py BASE_PATH STEP[:N] [key=value ...], where STEP is a compaction step
("compaction_requested", "compaction_inflight", "compaction_base_file_written", "compaction_completed"),
"clean:<CleanHooks step>" or "archive:<ArchiveHooks step>"; N: the count (base files written, files
deleted) after which to die.
"""

from __future__ import annotations

import os
import signal
import sys

from hudi_assets.archive.archiver import ArchiveHooks
from hudi_assets.clean import CleanHooks
from hudi_assets.metadata_services.services import MetadataServices
from hudi_assets.table import HoodieTable


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class KillClean(CleanHooks):
    delete_batch = 1

    def __init__(self, step: str, count: int):
        self.step, self.count = step, count

    def reached(self, step: str, deleted: int = 0) -> None:
        if step == self.step and deleted >= self.count:
            _die()


class KillArchive(ArchiveHooks):
    def __init__(self, step: str):
        self.step = step

    def reached(self, step: str) -> None:
        if step == self.step:
            _die()


if __name__ == "__main__":
    base, wanted, *pairs = sys.argv[1:]
    where, _, step = wanted.rpartition(":") if wanted.startswith(("clean:", "archive:")) else ("", "", wanted)
    step, _, count = step.partition("@")
    count = int(count or 0)
    table = HoodieTable(base, hoodie_conf=dict(p.split("=", 1) for p in pairs))

    def compaction(at: str, n: int) -> None:
        if not where and at == step and n >= count:
            _die()

    services = MetadataServices(table, compaction, KillClean(step, count) if where == "clean" else None,
                                KillArchive(step) if where == "archive" else None)
    services.run(no_active_writer=True)
