"""Run one rollback that kills itself (SIGKILL) at a `listener.Step`: the crash tests' fault.

Usage: python kill_rollback.py BASE_PATH INSTANT STEP[:N] (N: die at the Nth time the step is reached).
"""

from __future__ import annotations

import os
import signal
import sys

from hudi_assets.listener import Listener, Step
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.rollback import Rollbacker
from hudi_assets.table import HoodieTable


class KillAt(Listener):
    def __init__(self, wanted: str):
        name, _, count = wanted.partition(":")
        self.step = Step[name]
        self.left = int(count) if count else 1

    def reached(self, step: Step, count: int = 0) -> None:
        if step is self.step:
            self.left -= 1
            if not self.left:
                os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    base, instant, wanted = sys.argv[1:4]
    table = HoodieTable(base)
    Rollbacker(table, listener=KillAt(wanted), metadata=MetadataTableSink(table)).rollback(instant)
