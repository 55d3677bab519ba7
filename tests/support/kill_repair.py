"""Run one orphan-file repair that kills itself (SIGKILL) at a step its listener hears: the crash
tests' fault.

Usage: python kill_repair.py BASE_PATH CLOCK_OFFSET_S quarantine|undo:RUN|purge:DAYS STEP[:N]
(STEP: a `Step` name, e.g. ORPHAN_MOVED)
(N: die the Nth time the step is reached; the clock runs CLOCK_OFFSET_S seconds ahead).
"""

from __future__ import annotations

import sys
import time
from datetime import timedelta

from kill_at import KillAt  # a sibling module: run as a script, this folder is on sys.path

from hudi_assets.engine import LocalEngine
from hudi_assets.repair import OrphanConfig, OrphanFileRepair
from hudi_assets.table import HoodieTable

if __name__ == "__main__":
    base, offset, action, wanted = sys.argv[1:5]
    service = OrphanFileRepair(HoodieTable(base), OrphanConfig(), LocalEngine(),
                               lambda: time.time() + float(offset), KillAt(wanted))
    kind, _, arg = action.partition(":")
    if kind == "quarantine":
        service.quarantine()
    elif kind == "undo":
        service.undo(arg)
    else:
        service.purge(timedelta(days=int(arg)))
