"""`TimelineArchiverV2`: the archiver of Hudi 1.x tables (table versions 8 and 9, timeline layout 2),
which archives into the LSM-tree history (`.hoodie/timeline/history`).

It shares `HoodieTimelineArchiver`'s run (the maintenance lock, the still-valid selection, the
deletes: pending state files first, then completed ones one by one in ascending requested time, as
Hudi 1.x's deleteArchivedActions) and differs where 1.x does: the selection (`selection_v2`), one
HoodieLSMTimelineInstant row per instant written as one layer-0 file (`lsm_writer`), left-over
marker directories deleted before the rows are made (1.x's pre-write callback), and the LSM
compaction and cleaning (1.x's compactAndClean) where 0.x merges small archive files: after the
deletes (apache/hudi TimelineArchiverV2 @00d66981).

One step beyond 1.x: an instant the history already holds (a run that crashed after its snapshot
and before its deletes, whose selection has since grown) is not written a second time, only
deleted; 1.x writes it again and its history then holds it twice.
"""

from __future__ import annotations

import logging

from hudi_assets.archive.archiver import ArchiveResult, HoodieTimelineArchiver
from hudi_assets.archive.config import ArchiveConfig
from hudi_assets.archive.lsm_instant import lsm_timeline_instant
from hudi_assets.archive.lsm_writer import Compaction, LSMTimelineWriter, layer_summaries
from hudi_assets.archive.selection import ArchiveSelection, state_files_of
from hudi_assets.archive.selection_v2 import select_instants_to_archive_v2
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.listener import QUIET, Listener, Step
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.history import LSMHistory
from hudi_assets.timeline.instant import Instant
from hudi_assets.timeline.timeline import ActiveTimeline
from hudi_assets.transaction import HeldLock

log = logging.getLogger(__name__)


class TimelineArchiverV2(HoodieTimelineArchiver):
    """Archives one Hudi 1.x table's timeline into its LSM history."""

    def __init__(self, table: HoodieTable, config: ArchiveConfig, listener: Listener = QUIET):
        super().__init__(table, config, listener)
        folder = table.timeline_layout.paths.history_path(table.config)
        self.history = LSMHistory(self.storage, folder)
        self.writer = LSMTimelineWriter(self.storage, folder, config.timeline_compaction_batch_size, listener)
        self.compaction: Compaction | None = None

    @property
    def should_merge(self) -> bool:
        """1.x has no merge of small archive files: the LSM compaction and cleaning take its place,
        and always run (no setting turns them off)."""
        return True

    def _recover(self, result: ArchiveResult) -> None:
        """Nothing to recover: a crashed compaction's file is unlisted, rewritten by the next
        compaction or deleted by the next cleaning."""

    def _merge(self, lock: HeldLock) -> str | None:
        """compactAndClean; the last file a compaction wrote, None when none was due. 1.x runs it
        after an archive that archived something; here it also runs when nothing was (and then only
        compacts what is due), as the separate step the Dagster graph makes of it."""
        lock.check_held()
        self.compaction = self.writer.compact_and_clean()
        return next(reversed(self.compaction.merged), None)

    def archive(self, merge: bool = True, selection: ArchiveSelection | None = None) -> ArchiveResult:
        """As `HoodieTimelineArchiver.archive`; with `merge` the LSM compaction and cleaning follow
        the deletes (`result.compaction`)."""
        self.compaction = None
        result = super().archive(merge, selection)
        result.compaction = self.compaction
        return result

    def readable_state_files(self, result: ArchiveResult) -> set[Instant]:
        """The selected state files whose instant the history now holds (its row read back)."""
        held = self._in_history(result.selection.instants)
        return {i for i in result.selection.state_files if i.comparable_key in held}

    def _select(self, timeline: ActiveTimeline) -> ArchiveSelection:
        """1.x's selection, plus the instants a crashed run archived but did not delete (whatever the
        keep range says now: they are archived, and their deletes are that run's unfinished part)."""
        selection = select_instants_to_archive_v2(self.table, self.config, timeline)
        chosen = {i.comparable_key for i in selection.instants}
        newest = max((f.max_instant for f in self.history.files()), default=None)
        older = [i for i in timeline.filter_completed() if newest is not None and i.timestamp <= newest
                 and i.comparable_key not in chosen]
        held = self._in_history(older)
        leftovers = [i for i in older if i.comparable_key in held]
        if leftovers:
            selection.notes.append(f"{len(leftovers)} instants are archived already but still active (a "
                                   "crashed run's): their state files are deleted")
            selection.instants = sorted(selection.instants + leftovers, key=lambda i: i.sort_key)
            selection.state_files = state_files_of(timeline, selection.instants)
        return selection

    def dry_run(self) -> ArchiveResult:
        result = super().dry_run()
        result.layers = layer_summaries(self.history, self.config.timeline_compaction_batch_size,
                                        self.writer.target_bytes)
        return result

    def _in_history(self, instants: list[Instant]) -> set[tuple[str, str]]:
        """(time, comparable action) of those of `instants` the history already holds."""
        if not instants:
            return set()
        rows = self.history.read(instants[0].timestamp, instants[-1].timestamp, ["instantTime", "action"])
        held = {Instant(t, a).comparable_key
                for t, a in zip(rows.column("instantTime").to_pylist(), rows.column("action").to_pylist(),
                                strict=True)}
        return {key for i in instants if (key := i.comparable_key) in held}

    def _archive(self, result: ArchiveResult) -> None:
        """One row per selected instant not yet in the history, written as one layer-0 file."""
        selection = result.selection
        timeline = self.table.active_timeline
        held = self._in_history(selection.instants)
        result.archived_before = len(held)
        states: dict[tuple[str, str], list[Instant]] = {}
        for raw in selection.state_files:
            states.setdefault(raw.comparable_key, []).append(raw)
        self._delete_markers(result)  # 1.x: before the rows are made (its pre-write callback)
        rows = []
        for instant in selection.instants:
            key = instant.comparable_key
            if key in held:
                continue
            try:
                rows.append(lsm_timeline_instant(timeline, states[key]))
            except CorruptFileError:
                if self.config.fail_on_timeline_archiving:
                    raise  # names the file; nothing has been written or deleted yet
                log.exception("Skipping unconvertible instant %s", instant)
                result.skipped.append(str(instant))
        if held:
            log.info("%d selected instants are in the history already (a crashed run's): only deleted",
                     len(held))
        if not rows:
            return
        self.listener.reached(Step.ARCHIVE_BEFORE_WRITE)
        name = self.writer.write(rows)
        if name is not None:
            result.archive_file = f"{self.history.folder}/{name}"
            result.records_written = len(rows)
            log.info("Wrote %d archived instants to %s", len(rows), self.storage.uri(result.archive_file))
        self.listener.reached(Step.ARCHIVE_AFTER_WRITE)

    def _after_delete(self, selection: ArchiveSelection, result: ArchiveResult) -> None:
        """Nothing: 1.x writers keep no copies of compaction plans in `.hoodie/.aux`."""


