"""What a table's services are doing and why: `hudi-assets status`, `table.maintenance.status()`
and the Dagster face's health rule read one report (`table_status`)."""

from hudi_assets.status.report import TableStatus, table_status
from hudi_assets.status.services import ServiceHealth

__all__ = ["ServiceHealth", "TableStatus", "table_status"]
