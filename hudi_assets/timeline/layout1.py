"""Timeline layout 1 (table versions 5 and 6, Hudi 0.x): the pieces `TimelineLayout` bundles.

Every state file of an instant lives in `.hoodie/` under the name `Instant.file_name` gives it (no
completion time in the name; `Instant.parse_file_name` reads it back: Hudi's
InstantFileNameGeneratorV1), commit metadata is Jackson's JSON, and archived instants are
`HoodieArchivedMetaEntry` records in `hoodie.archivelog.folder`. Hudi: CommitMetadataSerDeV1,
TimelinePathProviderV1 (1.0.x).
"""

from __future__ import annotations

from hudi_assets.table_config import METAFOLDER, TableConfig
from hudi_assets.timeline.commit_metadata import CommitMetadata


class CommitMetadataSerDeV1:
    """Commit metadata as JSON in Jackson's pretty layout; an empty file is empty metadata."""

    def deserialize(self, data: bytes, path: str) -> CommitMetadata:
        return CommitMetadata.from_json(data, path)

    def serialize(self, metadata: CommitMetadata) -> bytes:
        return metadata.to_json()


class TimelinePathProviderV1:
    """The active timeline is `.hoodie/` itself; archive files go to `hoodie.archivelog.folder`."""

    def timeline_path(self, config: TableConfig) -> str:
        return METAFOLDER

    def history_path(self, config: TableConfig) -> str:
        return config.archive_folder


COMMIT_METADATA_SERDE_V1 = CommitMetadataSerDeV1()
