"""Savepoints (table versions 6 and, as Hudi 1.x, 8 and 9): create, delete and list them as hudi-cli does.

A savepoint keeps one version of the table readable: the cleaner keeps every file it lists and the
archiver stops at it (both already read savepoints; this package only writes and removes them).
`Savepointer(table)` is the service: `create()`, `delete()`, `list()`.
"""

from hudi_assets.savepoint.service import Savepointer, SavepointUsage
from hudi_assets.timeline.savepoint import Savepoint

__all__ = ["Savepoint", "SavepointUsage", "Savepointer"]
