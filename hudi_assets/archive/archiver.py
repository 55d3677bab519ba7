"""`HoodieTimelineArchiver`: writes selected instants to a new archive file, then removes them from
`.hoodie/`.

Order of a run (Hudi 0.15 `archiveIfRequired`), all under the table's maintenance lock: select ->
recover a half-done merge -> convert every state file (removing its marker directory) -> write one new
`.commits_.archive.<N>_1-0-1` file whole (never appending) -> read it back -> delete requested/inflight
files, then completed files one by one (HUDI-7207) in the selection's order: rollbacks, cleans,
commits, each ascending -> delete the copies in `.hoodie/.aux` of archived instants -> merge small
archive files if enabled. A crash leaves every instant active, archived, or both; never neither.
"""

from __future__ import annotations

import logging
import struct
import time
from dataclasses import dataclass, field

from hudi_assets.archive.config import ArchiveConfig
from hudi_assets.archive.conversion import to_archived_entry
from hudi_assets.archive.lsm_writer import Compaction, LayerSummary
from hudi_assets.archive.merge import (
    can_append,
    merge_small_archive_files,
    next_archive_version,
    recover_pending_merge,
)
from hudi_assets.archive.selection import ArchiveSelection, select_instants_to_archive
from hudi_assets.avro import java_schema_json
from hudi_assets.exceptions import ArchiveMergeError, CorruptFileError, HudiAssetsError
from hudi_assets.listener import QUIET, Listener, ServiceRun, Step
from hudi_assets.logformat.archived import archive_file_name, archive_file_of_encoded
from hudi_assets.logformat.avro_block import decode_avro_data_block, encode_avro_record
from hudi_assets.logformat.block import BlockType
from hudi_assets.logformat.reader import read_blocks
from hudi_assets.metrics.reporter import with_metrics
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.archived import ARCHIVED_META_ENTRY, ArchivedTimeline
from hudi_assets.timeline.instant import COMMIT, DELTA_COMMIT, Instant
from hudi_assets.timeline.instant_time import refuse_future_instants
from hudi_assets.timeline.timeline import METAFOLDER, ActiveTimeline
from hudi_assets.transaction import HeldLock, table_lock

log = logging.getLogger(__name__)
ARCHIVE = "archive"  # the action HoodieMetrics reports an archive run under
TEMP_FOLDER = f"{METAFOLDER}/.temp"
AUX_FOLDER = f"{METAFOLDER}/.aux"


@dataclass
class ArchiveResult:
    """What one archive run did, or with `dry_run` what it would archive (`selection`)."""

    selection: ArchiveSelection
    dry_run: bool = False
    archive_file: str | None = None
    records_written: int = 0
    skipped: list[str] = field(default_factory=list)
    deleted: int = 0
    markers_removed: int = 0
    aux_removed: int = 0
    merge_recovery: str | None = None
    merged_file: str | None = None
    seconds: float = 0.0
    # Layout 2 (TimelineArchiverV2): instants a crashed run had archived, only deleted now; what the
    # LSM compaction after the run merged and cleaned; the history's layers (a dry run's view).
    archived_before: int = 0
    compaction: Compaction | None = None
    layers: list[LayerSummary] = field(default_factory=list)


def _archived(result: ArchiveResult, storage: Storage) -> str:
    """What the archiving part of a run did, for an error raised after it."""
    recovered = f"{result.merge_recovery}; " if result.merge_recovery else ""
    deleted = f"deleted {result.deleted} state files"
    if not result.archive_file:
        return recovered + (f"wrote no archive file, {deleted}" if result.deleted else "nothing archived")
    instants = len(result.selection.instants)
    return f"{recovered}archived {instants} instants to {storage.uri(result.archive_file)}, {deleted}"


class HoodieTimelineArchiver:
    """Archives one table's timeline with Hudi 0.15's rules."""

    def __init__(self, table: HoodieTable, config: ArchiveConfig, listener: Listener = QUIET):
        self.table = table
        self.listener = with_metrics(table, listener)  # reports HoodieMetrics' metrics when on
        self.config = config
        self.storage = table.storage
        self.archived = ArchivedTimeline.load(table)

    @classmethod
    def for_table(cls, table: HoodieTable, listener: Listener = QUIET) -> HoodieTimelineArchiver:
        """The archiver of the table's timeline layout (Hudi 1.x's `TimelineArchiverV2` for layout 2)
        with the table's own merged settings (`table.write_config`): how every face gets one, so
        none assembles the settings itself."""
        from hudi_assets.archive.archiver_v2 import TimelineArchiverV2  # it builds on this class

        kind = TimelineArchiverV2 if table.timeline_layout.version >= 2 else HoodieTimelineArchiver
        return kind(table, ArchiveConfig.from_write_config(table.write_config), listener)

    @property
    def should_merge(self) -> bool:
        return self.config.merge_enable and not can_append(self.storage)

    def plan(self) -> ArchiveSelection:
        """What a run would archive now, and why each fence stands where it does."""
        return self._select(self._current_timeline())

    def _select(self, timeline: ActiveTimeline) -> ArchiveSelection:
        return select_instants_to_archive(self.table, self.config, timeline)

    def _current_timeline(self) -> ActiveTimeline:
        """The timeline read again, and refused (`_refuse_unsupported`) before anything is selected."""
        timeline = self.table.reload_timeline()
        self._refuse_unsupported()
        return timeline

    def _refuse_unsupported(self) -> None:
        """A table version without this archiver (Hudi 1.x's LSM timeline) or an instant beyond the clock:
        refused before anything is read or written."""
        self.table.config.check_service("archive", self.table.base_path)
        refuse_future_instants(self.table, "archive")

    def dry_run(self) -> ArchiveResult:
        """The result of a run that archives nothing: what `archive()` would select now."""
        return ArchiveResult(self.plan(), dry_run=True)

    def archive(self, merge: bool = True, selection: ArchiveSelection | None = None) -> ArchiveResult:
        """Archive what the selection allows; then, if `merge`, merge small archive files.

        Holds the table's maintenance lock throughout (`TableBusyError` when another run holds it).
        `selection` may be one just made by `plan()` (a dry run shown first); it is not redone
        unless another run archived some of it before the lock was taken. A half-done merge is always
        recovered first, so a new archive file never takes the version an unfinished merge planned
        for its merged file.
        """
        started = time.monotonic()
        self.table.config.check_service("archive", self.table.base_path)  # before the lock's folder
        with table_lock(self.table, "archive") as lock:
            result = ArchiveResult(self._still_valid(selection))
            selection = result.selection
            self._recover(result)
            if selection:
                log.info("Archiving %d instants (%d state files)", len(selection.instants),
                         len(selection.state_files))
                self._archive(result)
                self.listener.reached(Step.ARCHIVE_BEFORE_DELETE)
                lock.check_held()
                self._delete(selection.state_files, result)
                self._after_delete(selection, result)
            else:
                log.info("No instants to archive")
            if merge and self.should_merge:
                try:
                    result.merged_file = self._merge(lock)
                except ArchiveMergeError as exc:
                    raise ArchiveMergeError(f"{_archived(result, self.storage)}; {exc}") from exc
        result.seconds = time.monotonic() - started
        archived = len(selection.instants) if selection else 0
        self.listener.finished(ServiceRun(ARCHIVE, None, int(result.seconds * 1000),
                                          self.table.is_metadata_table, instants_archived=archived))
        return result

    def readable_state_files(self, result: ArchiveResult) -> set[Instant]:
        """The selected state files the archive file this run wrote reads back."""
        if not result.archive_file:
            return set()
        return {e.instant for e in self.archived.entries(only=[result.archive_file])}

    def _recover(self, result: ArchiveResult) -> None:
        """A half-done merge of small archive files, recovered when merging is on."""
        if self.should_merge:
            result.merge_recovery = recover_pending_merge(self.archived)

    def merge_small_files(self) -> str | None:
        """Merge small archive files when enabled and the store cannot append; the merged file's path.

        Holds the table's maintenance lock while merging, as `archive` does."""
        if not self.should_merge:
            return None
        with table_lock(self.table, "archive") as lock:
            return self._merge(lock)

    def _merge(self, lock: HeldLock) -> str | None:
        lock.check_held()
        return merge_small_archive_files(
            self.archived, self.config.merge_small_file_limit_bytes, self.config.merge_files_batch_size,
            self.config.archival_batch, self.listener)

    def _still_valid(self, selection: ArchiveSelection | None) -> ArchiveSelection:
        """`selection` if every state file it names is still active, else a new selection; either
        way the timeline is read again and refused first, as `plan()` does."""
        if selection is None:
            return self.plan()
        timeline = self._current_timeline()
        if all(timeline.has_state_file(i) for i in selection.state_files):
            return selection
        log.info("Another run archived part of the selection before the lock was taken; selecting again")
        return self._select(timeline)

    # ------------------------------------------------------------------------ writing
    def _archive(self, result: ArchiveResult) -> None:
        """Convert and encode every state file, one at a time (only the bytes are kept), then write
        one archive file of them. Forked workers were measured no faster here: the work per file is
        small beside forking and pickling."""
        timeline = self.table.active_timeline
        schema = java_schema_json(ARCHIVED_META_ENTRY)
        state_files = result.selection.state_files
        entries = [self._entry(timeline, instant, schema) for instant in state_files]
        result.skipped = [i.file_name for i, entry in zip(state_files, entries, strict=True) if entry is None]
        written = [entry for entry in entries if entry is not None]
        log.info("Converted %d state files (%d skipped)", len(written), len(result.skipped))
        if not written:
            return
        data = archive_file_of_encoded([encoded for _, encoded in written], schema,
                                       self.config.archival_batch)
        self.listener.reached(Step.ARCHIVE_BEFORE_WRITE)
        folder = self.archived.folder
        self.storage.mkdirs(folder)
        version = next_archive_version(self.archived)
        while not self.storage.create_if_absent(f"{folder}/{archive_file_name(version)}", data):
            version += 1  # another writer took that version; never append to an existing file
        path = f"{folder}/{archive_file_name(version)}"
        self._verify(path, data, [commit_time for commit_time, _ in written])
        result.archive_file = path
        result.records_written = len(written)
        # Leftover marker directories of archived instants go once the archive is safely written.
        self._delete_markers(result)
        log.info("Wrote %d archived entries to %s (%d bytes)", len(written), self.storage.uri(path),
                 len(data))
        self.listener.reached(Step.ARCHIVE_AFTER_WRITE)

    def _delete_markers(self, result: ArchiveResult) -> None:
        """Leftover marker directories of the selected instants; one listing of the marker folder
        finds them (most instants have none left)."""
        markers = set(self.storage.list_directory(TEMP_FOLDER).dirs)
        for ts in dict.fromkeys(i.timestamp for i in result.selection.state_files):
            if ts in markers and self.storage.delete_dir(f"{TEMP_FOLDER}/{ts}"):
                result.markers_removed += 1

    def _entry(self, timeline: ActiveTimeline, instant: Instant, schema: str) -> tuple[str, bytes] | None:
        """(commit time, encoded archived entry) of one state file; None when it is skipped."""
        try:
            record = to_archived_entry(timeline, instant)
        except CorruptFileError:
            if self.config.fail_on_timeline_archiving:
                raise  # bad input: names the file; nothing has been written or deleted yet
            log.exception("Skipping unconvertible state file %s", instant.file_name)
            return None
        return record["commitTime"], encode_avro_record(record, schema)

    def _verify(self, path: str, written: bytes, commit_times: list[str]) -> None:
        """Read the new file back before anything is deleted: the same bytes as encoded, intact block
        frames holding as many records as were written, and the first and last blocks decoding with
        the entry schema to the instants written there (the encoding itself is tested against
        fastavro's; decoding every block again would double the cost of a run)."""
        uri = self.storage.uri(path)
        back = self.storage.read(path)
        if back != written:
            problem = f"read back {len(back)} bytes that differ from the {len(written)} written"
        else:
            problem = self._block_problem(back, uri, commit_times)
        if problem:
            raise HudiAssetsError(f"{uri}: {problem}; nothing was deleted from the active timeline")

    @staticmethod
    def _block_problem(back: bytes, uri: str, commit_times: list[str]) -> str | None:
        """What is wrong with the blocks of the file read back, if anything. Blocks are walked one at
        a time and only the first and last are kept: holding all of them (the schema header of each
        decoded) was most of a run's memory, and fresh memory costs page faults."""
        counts: list[int] = []
        first_block = last_block = None
        for block in read_blocks(back, uri):
            counts.append(struct.unpack_from(">i", block.content, 4)[0]
                          if block.block_type == BlockType.AVRO_DATA else -1)
            if first_block is None:
                first_block = block
            last_block = block
        if sum(counts) != len(commit_times) or min(counts, default=0) < 0:
            return f"wrote {len(commit_times)} archived entries but the blocks read back hold {sum(counts)}"
        schema = java_schema_json(ARCHIVED_META_ENTRY)
        # block index -> (the block, the index of its first record)
        ends = {0: (first_block, 0), len(counts) - 1: (last_block, len(commit_times) - counts[-1])}
        for index, (block, first) in ends.items():
            decoded = [r["commitTime"] for r in decode_avro_data_block(block, schema, path=uri)]
            expected = commit_times[first:first + counts[index]]
            if decoded != expected:
                return f"block {index} reads back instants {decoded[:3]}..., not {expected[:3]}..."
        return None

    # ----------------------------------------------------------------------- deleting
    def _delete(self, state_files: list[Instant], result: ArchiveResult) -> None:
        pending = [i for i in state_files if not i.is_completed]
        # Hudi 0.15 keeps the selection's order (rollbacks, cleans, then commits), not one time order;
        # 1.x's selection is in requested-time order.
        completed = [i for i in state_files if i.is_completed]
        path = self.table.active_timeline.state_file_path
        self._delete_files([path(i) for i in pending], result)
        log.info("Deleted %d requested/inflight state files", len(pending))
        for n, instant in enumerate(completed, 1):
            self._delete_files([path(instant)], result)
            if n == 1:
                self.listener.reached(Step.ARCHIVE_DELETING_COMPLETED)
            if n % 1000 == 0:
                log.info("Deleted %d/%d completed instants", n, len(completed))
        log.info("Deleted %d completed instants", len(completed))

    def _after_delete(self, selection: ArchiveSelection, result: ArchiveResult) -> None:
        """deleteAllInstantsOlderOrEqualsInAuxMetaFolder (0.14/0.15): 0.x writers keep a copy of each
        compaction plan in `.hoodie/.aux`; the instant files directly there up to the latest commit
        or deltacommit archived go, as long as their instant is no longer active (so a copy a crash
        left is removed by a later run). Never a subfolder (ours, `.bootstrap`) nor a file whose name
        is not an instant's (a lock)."""
        commits = [i.timestamp for i in selection.state_files
                   if i.is_completed and i.action in (COMMIT, DELTA_COMMIT)]
        if not commits:
            return
        threshold = max(commits)
        candidates = []
        for name in self.storage.list_directory(AUX_FOLDER).files:
            try:
                instant = Instant.parse_file_name(name)
            except CorruptFileError:
                continue  # an action or state Hudi does not write: not a copy of ours to judge
            if instant is not None and instant.timestamp <= threshold:
                candidates.append((instant.timestamp, name))
        if not candidates:
            self.table.forget_timeline()  # read again only when used, not to judge copies there are none of
            return
        active = set(self.table.reload_timeline().timestamps)
        copies = [f"{AUX_FOLDER}/{name}" for timestamp, name in candidates if timestamp not in active]
        outcome = self.storage.delete_many(copies)
        result.aux_removed = len(outcome.deleted)
        for path, why in outcome.failed.items():  # a stale copy is read by no one; a later run retries
            log.warning("could not delete %s: %s", self.storage.uri(path), why)
        log.info("Deleted %d instant files of archived instants in %s", result.aux_removed, AUX_FOLDER)

    def _delete_files(self, paths: list[str], result: ArchiveResult) -> None:
        """Delete archived state files: one that stays stops the run naming it (`delete_checked`)."""
        if paths:
            result.deleted += len(self.storage.delete_checked(paths).deleted)
