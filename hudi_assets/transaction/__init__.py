"""Hudi's lock providers (`client/transaction/lock`), shared with a live writer of the same table.

`table_lock(table, operation)` is the one lock every clean and archive run takes: the provider named
by `hoodie.write.lock.provider` when one is configured, else the interim `TableLock` of
`hudi_assets.lock`.
"""

from hudi_assets.transaction.lock_manager import table_lock
from hudi_assets.transaction.lock_provider import HeldLock, LockProvider

__all__ = ["HeldLock", "LockProvider", "table_lock"]
