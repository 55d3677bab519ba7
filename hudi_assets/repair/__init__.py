"""Repairs of a table's storage: orphan files (data files no commit owns), found as Hudi's
`HoodieRepairTool` finds them and moved to a quarantine that can be undone."""

from hudi_assets.repair.config import OrphanConfig, parse_duration
from hudi_assets.repair.quarantine import Orphan
from hudi_assets.repair.service import Kept, OrphanFileRepair, OrphanFilesResult, PurgeResult, UndoResult

__all__ = ["Kept", "Orphan", "OrphanConfig", "OrphanFileRepair", "OrphanFilesResult", "PurgeResult",
           "UndoResult", "parse_duration"]
