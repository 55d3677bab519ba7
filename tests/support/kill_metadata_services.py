"""Run the metadata table's services (as `--run-services --no-active-writer`) and SIGKILL the
process at a step: the crash tests' injected fault.

Usage: python kill_metadata_services.py BASE_PATH STEP[:N] [key=value ...], where STEP names a
`listener.Step` of the compaction, the metadata table's clean or its archive, and N the count (base
files written, files deleted) after which to die; for CLEAN_DELETES the deletes go one file per batch.
"""

from __future__ import annotations

import sys

from kill_at import KillAt  # a sibling module: run as a script, this folder is on sys.path

from hudi_assets.metadata_services.services import MetadataServices
from hudi_assets.table import HoodieTable

if __name__ == "__main__":
    base, wanted, *pairs = sys.argv[1:]
    listener = KillAt(wanted)
    conf = dict(p.split("=", 1) for p in pairs)
    if wanted.startswith("CLEAN_DELETES"):
        conf["hoodie.assets.clean.delete.batch"] = "1"
    MetadataServices(HoodieTable(base, hoodie_conf=conf), listener=listener).run(no_active_writer=True)
