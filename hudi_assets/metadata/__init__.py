"""The metadata table (`.hoodie/metadata`) of a data table, read-only, on table versions 6, 8 and 9."""

from hudi_assets.metadata.records import FileInfo, FilesRecord
from hudi_assets.metadata.table import FilesListing, MetadataTable, MetadataTableNotFoundError

__all__ = ["FileInfo", "FilesListing", "FilesRecord", "MetadataTable", "MetadataTableNotFoundError"]
