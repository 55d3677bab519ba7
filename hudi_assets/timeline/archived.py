"""The archived timeline of layout 1: instants moved out of `.hoodie/` into
`<archive folder>/.commits_.archive.N_*`.

Files are read newest version first, as Hudi's readers do; torn tails are skipped by the log reader.
The merged file named by a pending `mergeArchivePlan` may be half written and is tolerated.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hudi_assets.avro import deserialize_metadata, java_schema_json
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.logformat.archived import ARCHIVE_FILE_PREFIX, read_archived_records
from hudi_assets.storage import FileStatus, Storage
from hudi_assets.timeline.instant import Instant, State, highest_states
from hudi_assets.timeline.timeline import Timeline

if TYPE_CHECKING:
    from hudi_assets.table import HoodieTable

MERGE_PLAN_FILE = "mergeArchivePlan"
ARCHIVED_META_ENTRY = "HoodieArchivedMetaEntry"
# Which field of HoodieArchivedMetaEntry carries each action's metadata, by state.
_PAYLOAD_FIELD = {
    ("clean", State.COMPLETED): "hoodieCleanMetadata",
    ("clean", State.REQUESTED): "hoodieCleanerPlan",
    ("clean", State.INFLIGHT): "hoodieCleanerPlan",
    ("rollback", State.COMPLETED): "hoodieRollbackMetadata",
    ("savepoint", State.COMPLETED): "hoodieSavePointMetadata",
    ("compaction", State.REQUESTED): "hoodieCompactionPlan",
    ("logcompaction", State.REQUESTED): "hoodieCompactionPlan",
    ("replacecommit", State.REQUESTED): "hoodieRequestedReplaceMetadata",
    ("replacecommit", State.INFLIGHT): "HoodieInflightReplaceMetadata",
    ("replacecommit", State.COMPLETED): "hoodieReplaceCommitMetadata",
}


@dataclass(frozen=True, slots=True)
class ArchivedEntry:
    """One archived state file: its instant and the `HoodieArchivedMetaEntry` record."""

    instant: Instant
    record: dict[str, Any]

    @property
    def payload(self) -> dict[str, Any] | None:
        """The action's metadata (commit metadata, clean plan/metadata, ...), None when not archived."""
        if self.instant.action in ("commit", "deltacommit"):
            return self.record.get("hoodieCommitMetadata")
        return self.record.get(_PAYLOAD_FIELD.get((self.instant.action, self.instant.state), ""))


def entry_instant(record: dict[str, Any]) -> Instant:
    state = record.get("actionState") or "COMPLETED"
    return Instant(record["commitTime"], record["actionType"], State[state])


class ArchivedTimeline:
    """Reads the archive files of one table."""

    def __init__(self, storage: Storage, folder: str):
        self.storage = storage
        self.folder = folder

    @classmethod
    def load(cls, table: HoodieTable) -> ArchivedTimeline:
        return cls(table.storage, table.config.archive_folder)

    def archive_files(self) -> list[FileStatus]:
        return [s for s in self.storage.list(self.folder)
                if not s.is_dir and s.name.startswith(ARCHIVE_FILE_PREFIX)]

    def pending_merge_plan(self) -> dict[str, Any] | None:
        """The merge plan left by an unfinished merge of small archive files, if readable."""
        path = f"{self.folder}/{MERGE_PLAN_FILE}"
        if not self.storage.exists(path):
            return None
        try:
            return deserialize_metadata(self.storage.read(path), "HoodieMergeArchiveFilePlan",
                                        self.storage.uri(path))
        except CorruptFileError:
            return None

    def entries(self, only: Collection[str] | None = None) -> Iterator[ArchivedEntry]:
        """Every archived state file, newest archive file first; `only` limits the read to those
        archive files (paths relative to the base path)."""
        plan = self.pending_merge_plan()
        tolerated = {plan["mergedArchiveFileName"]} if plan and plan.get("mergedArchiveFileName") else set()
        read = self.storage.read
        files = [(self.storage.uri(s.path), lambda p=s.path: read(p)) for s in self.archive_files()
                 if only is None or s.path in only]
        for record in read_archived_records(files, java_schema_json(ARCHIVED_META_ENTRY),
                                            unreadable_ok=tolerated):
            yield ArchivedEntry(entry_instant(record), record)

    def instants(self) -> Timeline:
        """Archived instants in their highest archived state, in Hudi's order."""
        return Timeline(highest_states(entry.instant for entry in self.entries()))


class ArchivedTimelineLoaderV1:
    """Layout 1's archive files as `TimelineLayout.load_archived_instants` reads them."""

    def load_instants(self, storage: Storage, folder: str) -> Timeline:
        return ArchivedTimeline(storage, folder).instants()

    def count_instants(self, storage: Storage, folder: str) -> int:
        """The archive files are read whole: an instant's states are records of their own (often in
        different files), so only the records tell how many instants there are."""
        return len(self.load_instants(storage, folder))
