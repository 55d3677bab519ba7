"""Run one clean that kills itself (SIGKILL) at a given step: the crash tests' injected fault.

Usage: python kill_clean.py BASE_PATH STEP[:N] RETAINED, where STEP names a `listener.Step` and N, for
CLEAN_DELETES, the number of deletes after which to die (deletes then go one file per batch), for
MDT_BLOCK_WRITTEN the metadata log block after which to die.
"""

from __future__ import annotations

import sys

from kill_at import KillAt  # a sibling module: run as a script, this folder is on sys.path

from hudi_assets.clean import Cleaner
from hudi_assets.engine import LocalEngine
from hudi_assets.listener import Step
from hudi_assets.table import HoodieTable

if __name__ == "__main__":
    base, wanted, retained = sys.argv[1:4]
    listener = KillAt(wanted)
    overrides = {"hoodie.cleaner.commits.retained": retained}
    if listener.step is Step.CLEAN_DELETES:
        overrides["hoodie.assets.clean.delete.batch"] = "1"
    Cleaner.for_table(HoodieTable(base, hoodie_conf=overrides), LocalEngine(), listener=listener).clean()
