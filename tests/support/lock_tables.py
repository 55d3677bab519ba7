"""Lock settings that give up within a second, and table helpers for the lock provider tests."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from hudi_assets.table import HoodieTable
from hudi_assets.transaction.lock_manager import ONE_TRY, holding
from hudi_assets.transaction.lock_provider import LockProvider
from hudi_assets.transaction.maintenance_lock import MaintenanceLockProvider

FAST_RETRIES = {"hoodie.write.lock.wait_time_ms": "200", "hoodie.write.lock.client.num_retries": "2",
                "hoodie.write.lock.client.wait_time_ms_between_retry": "100"}


def open_table(base: Path, **conf: str) -> HoodieTable:
    """The table with fast lock retries and `conf` as --hoodie-conf overrides."""
    return HoodieTable(str(base), hoodie_conf={**FAST_RETRIES, **conf})


def tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def hold_maintenance_lock(table: HoodieTable, operation: str) -> AbstractContextManager[LockProvider]:
    """Hold hudi-assets' own lock as another run would: unlike `table_lock`, a run started in this
    context does not re-enter it."""
    return holding(MaintenanceLockProvider.from_config(table, operation), ONE_TRY)
