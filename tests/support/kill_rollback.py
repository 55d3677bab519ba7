"""Run one rollback that kills itself (SIGKILL) at a `listener.Step`: the crash tests' fault.

Usage: python kill_rollback.py BASE_PATH INSTANT STEP[:N] [1x] (N: die at the Nth time the step is
reached; `1x`: keep a Hudi 1.x metadata table in step through `DeltacommitRollbackSink`).
"""

from __future__ import annotations

import sys

from kill_at import KillAt  # a sibling module: run as a script, this folder is on sys.path

from hudi_assets.metadata.deltacommit_rollback import DeltacommitRollbackSink
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.rollback import Rollbacker
from hudi_assets.table import HoodieTable

if __name__ == "__main__":
    base, instant, wanted = sys.argv[1:4]
    table = HoodieTable(base)
    sink = DeltacommitRollbackSink(table) if sys.argv[4:] == ["1x"] else MetadataTableSink(table)
    Rollbacker(table, listener=KillAt(wanted), metadata=sink).rollback(instant)
