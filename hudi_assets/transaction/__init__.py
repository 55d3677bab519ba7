"""Table locks as Hudi's lock providers (`client/transaction/lock`), shared with a live writer.

`table_lock(table, operation)` is the one lock every clean, archive and rollback run takes: the
provider named by `hoodie.write.lock.provider` when one is configured, else hudi-assets' own
`MaintenanceLockProvider`.
"""

from hudi_assets.transaction.lock_manager import table_lock
from hudi_assets.transaction.lock_provider import HeldLock, LockProvider

__all__ = ["HeldLock", "LockProvider", "table_lock"]
