"""Run one savepoint create or delete that kills itself (SIGKILL) at a `listener.Step`.

Usage: python kill_savepoint.py BASE_PATH create|delete INSTANT STEP
"""

from __future__ import annotations

import sys

from kill_at import KillAt  # a sibling module: run as a script, this folder is on sys.path

from hudi_assets.savepoint import Savepointer
from hudi_assets.table import HoodieTable

if __name__ == "__main__":
    base, operation, instant, step = sys.argv[1:5]
    service = Savepointer(HoodieTable(base), listener=KillAt(step))
    service.create(instant) if operation == "create" else service.delete(instant)
