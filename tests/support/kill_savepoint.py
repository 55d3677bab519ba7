"""Run one savepoint create or delete that kills itself (SIGKILL) at a `SavepointHooks` step.

Usage: python kill_savepoint.py BASE_PATH create|delete INSTANT STEP
"""

from __future__ import annotations

import os
import signal
import sys

from hudi_assets.savepoint import Savepointer, SavepointHooks
from hudi_assets.table import HoodieTable


class KillAt(SavepointHooks):
    def __init__(self, wanted: str):
        self.wanted = wanted

    def reached(self, step: str) -> None:
        if step == self.wanted:
            os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    base, operation, instant, step = sys.argv[1:5]
    service = Savepointer(HoodieTable(base), hooks=KillAt(step))
    service.create(instant) if operation == "create" else service.delete(instant)
