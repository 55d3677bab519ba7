"""Archive a table with an archiver that kills itself (SIGKILL) at a given step: the crash tests'
injected fault. Usage: python kill_archive.py BASE_PATH STEP [key=value ...] (STEP names a
`listener.Step`; the pairs are hoodie.* overrides)."""

from __future__ import annotations

import sys

from kill_at import KillAt  # a sibling module: run as a script, this folder is on sys.path

from hudi_assets.archive.archiver import HoodieTimelineArchiver
from hudi_assets.table import HoodieTable

if __name__ == "__main__":
    base, step, *pairs = sys.argv[1:]
    table = HoodieTable(base, hoodie_conf=dict(p.split("=", 1) for p in pairs))
    HoodieTimelineArchiver.for_table(table, KillAt(step)).archive()
