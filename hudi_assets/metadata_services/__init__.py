"""The metadata table's services without a data write (compaction, clean, archive, and what blocks
them): above `metadata` (which writes the metadata table) and the cleaner and archiver it applies to
the metadata table as a table of its own."""

from hudi_assets.metadata_services.services import ActiveWriterError, MetadataServices, ServicesResult
from hudi_assets.metadata_services.status import MetadataServicesStatus, services_status

__all__ = ["ActiveWriterError", "MetadataServices", "MetadataServicesStatus", "ServicesResult",
           "services_status"]
