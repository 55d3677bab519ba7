"""Run one savepoint create or delete that kills itself (SIGKILL) at a `listener.Step`.

Usage: python kill_savepoint.py BASE_PATH create|delete INSTANT STEP
"""

from __future__ import annotations

import os
import signal
import sys

from hudi_assets.listener import Listener, Step
from hudi_assets.savepoint import Savepointer
from hudi_assets.table import HoodieTable


class KillAt(Listener):
    def __init__(self, wanted: str):
        self.wanted = Step[wanted]

    def reached(self, step: Step, count: int = 0) -> None:
        if step is self.wanted:
            os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    base, operation, instant, step = sys.argv[1:5]
    service = Savepointer(HoodieTable(base), listener=KillAt(step))
    service.create(instant) if operation == "create" else service.delete(instant)
