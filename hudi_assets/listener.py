"""`Listener`: what every table service tells about its run, one protocol for all of them.

The services (`Cleaner`, `Rollbacker`, `HoodieTimelineArchiver`, the metadata table writer and its
`MetadataServices`) call
`reached(step, count)` at each `Step` of their runs, so a test can inject a fault (a crash, a pause)
there, `progress(done, total)` while a clean deletes, so a face can show how far it got, and
`finished(run)` when a clean, rollback, archive, metadata compaction or metadata deltacommit completed,
with what Hudi's write client hands to `HoodieMetrics` then (`hudi_assets.metrics` reports it).
Production passes none (`QUIET`); nothing a listener does changes what a service decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from hudi_assets.timeline.commit_metadata import CommitMetadata


class Step(Enum):
    """The points of a run a listener hears of, in the order each service reaches them."""

    # the clean (CleanActionExecutor)
    CLEAN_INFLIGHT = "clean inflight written"
    CLEAN_DELETES = "clean deletes round done"  # count: files deleted so far
    CLEAN_PARTITIONS = "clean partitions deleted"
    CLEAN_COMPLETE = "clean about to complete"  # just before `<t>.clean` is written
    # a deltacommit of the metadata table (MetadataTableWriter), within a clean or a rollback
    MDT_REQUESTED = "metadata deltacommit requested"
    MDT_BLOCK_WRITTEN = "metadata log block written"  # count: blocks written so far
    MDT_COMPLETED = "metadata deltacommit completed"
    MDT_ROLLED_BACK = "metadata instant of the failed write rolled back"
    # a metadata table's compaction (MetadataServices, metadata.compaction.execute_compaction)
    COMPACTION_REQUESTED = "metadata compaction plan written"
    COMPACTION_INFLIGHT = "metadata compaction inflight written"
    COMPACTION_BASE_FILE_WRITTEN = "metadata compaction base file written"  # count: base files so far
    COMPACTION_COMPLETED = "metadata compaction completed"
    # a rollback (Rollbacker, RollbackActionExecutor)
    ROLLBACK_REQUESTED = "rollback plan written"
    ROLLBACK_INFLIGHT = "rollback inflight written"
    ROLLBACK_REQUEST = "rollback request done"
    ROLLBACK_INSTANT_DELETED = "rolled-back instant's state files deleted"
    ROLLBACK_COMPLETE = "rollback completed"  # `<t>.rollback` written, markers not yet deleted
    # an archive run (HoodieTimelineArchiver) and its merge of small archive files
    ARCHIVE_BEFORE_WRITE = "archive file about to be written"
    ARCHIVE_AFTER_WRITE = "archive file written"
    ARCHIVE_BEFORE_DELETE = "archived state files about to be deleted"
    ARCHIVE_DELETING_COMPLETED = "first completed state file deleted"
    MERGE_PLAN_WRITTEN = "merge plan written"
    MERGE_FILE_WRITTEN = "merged archive file written"
    MERGE_CANDIDATES_DELETED = "merged archive files deleted"
    # the LSM-tree history of Hudi 1.x tables (LSMTimelineWriter)
    LSM_FILE_WRITTEN = "layer-0 history file written, no snapshot lists it yet"
    LSM_MANIFEST_WRITTEN = "manifest_N written, _version_ not yet"
    LSM_VERSION_DELETED = "_version_ deleted, not yet rewritten"
    LSM_COMPACTED_FILE_WRITTEN = "compacted history file written, no snapshot lists it yet"
    LSM_CLEANING = "old snapshots' files being deleted"  # count: files deleted so far
    # a savepoint's create and delete (Savepointer)
    SAVEPOINT_INFLIGHT = "savepoint inflight written"  # the completed file not yet
    SAVEPOINT_INFLIGHT_DELETED = "savepoint inflight deleted"  # a delete's first file gone, not its second
    # orphan-file repair (OrphanFileRepair): its quarantine, undo and purge
    ORPHANS_MANIFEST_WRITTEN = "quarantine manifest written"  # before the first move
    ORPHAN_MOVED = "orphan file moved"  # count: files moved so far (into or out of the quarantine)
    ORPHANS_UNDO_MARKED = "quarantine run marked for undo"
    ORPHANS_PURGED = "quarantined files of a run deleted"  # its folder not yet removed


@dataclass(frozen=True, slots=True)
class ServiceRun:
    """What one completed run did, in the service's words; `hudi_assets.metrics` names it as Hudi does."""

    action: str  # Hudi's action: clean, rollback, archive, compaction, deltacommit
    instant: str | None  # the instant it completed (None: archive)
    duration_ms: int
    metadata_table: bool = False  # the run was on a metadata table
    files_deleted: int | None = None  # clean, rollback: the metadata's totalFilesDeleted
    instants_archived: int | None = None  # archive
    commit: CommitMetadata | None = None  # compaction, deltacommit: the commit metadata written


class Listener(Protocol):
    """Hears a service's steps and a clean's progress; subclass it and override what you need."""

    def reached(self, step: Step, count: int = 0) -> None:
        """A step was reached (`count`: see `Step`)."""

    def progress(self, done: int, total: int) -> None:
        """`done` of `total` planned files are deleted: at the first and the last round of a clean's
        deletes, and every `hoodie.assets.clean.progress.interval.ms` between."""

    def finished(self, run: ServiceRun) -> None:
        """A service's run completed (its completed state file is written)."""


class _Quiet(Listener):
    """The listener of a run nobody listens to."""


QUIET: Listener = _Quiet()
