"""Run one rollback that kills itself (SIGKILL) at a `listener.Step`: the crash tests' fault.

Usage: python kill_rollback.py BASE_PATH INSTANT STEP[:N] (N: die at the Nth time the step is
reached). The metadata table is kept in step through the faces' `MetadataTableSink`.
"""

from __future__ import annotations

import sys

from kill_at import KillAt  # a sibling module: run as a script, this folder is on sys.path

from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.rollback import Rollbacker
from hudi_assets.table import HoodieTable

if __name__ == "__main__":
    base, instant, wanted = sys.argv[1:4]
    table = HoodieTable(base)
    Rollbacker(table, listener=KillAt(wanted), metadata=MetadataTableSink(table)).rollback(instant)
