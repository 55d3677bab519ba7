"""`Savepointer`: create, delete and list a table's savepoints, as Hudi's SavepointActionExecutor,
`BaseHoodieWriteClient.deleteSavepoint` and hudi-cli's `savepoints show` do, under the table lock, on
table versions 5/6 (Hudi 0.15) and 8/9 (Hudi 1.x: apache/hudi SavepointActionExecutor @028e1bb5,
SavepointHelpers, ActiveTimelineV2 @01af83ca, InstantFileNameGeneratorV2 @3b0f3309).

Create: the instant must be a completed commit (deltacommit on MOR, replacecommit) on the active
timeline and not before the earliest commit the last clean retained (a completed clean's metadata, a
pending clean's plan); then `<t>.savepoint.inflight` (empty) and the completed file: `<t>.savepoint`
on 0.x, `<t>_<completion>.savepoint` on 1.x, whose completion time is taken under the lock. Both
versions write the same Avro HoodieSavepointMetadata (1.x did not change the record) and nothing into
the metadata table (neither does Hudi). A run killed between the two files leaves the inflight file,
which protects nothing: the next create of that instant completes it, the next delete removes it.
Delete removes the inflight file before the completed one, so a run killed between the two leaves a
savepoint still in force, never a half-removed one (Hudi reverts the completed file to inflight
first); a delete of an instant that is no savepoint is refused (hudi-cli refuses it too; the write
client only warns).
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from datetime import datetime

from hudi_assets import config_options as opt
from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.clean.config import CleanConfig
from hudi_assets.engine import Engine
from hudi_assets.exceptions import HudiInputError
from hudi_assets.listener import QUIET, Listener, Step
from hudi_assets.savepoint.files import latest_files_as_of, listing_view
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import PROPERTIES_FILE
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import CLEAN, SAVEPOINT, Instant, State
from hudi_assets.timeline.instant_time import Clock, wall_clock
from hudi_assets.timeline.savepoint import Savepoint, completed_savepoints
from hudi_assets.timeline.timeline import ActiveTimeline
from hudi_assets.transaction import table_lock

log = logging.getLogger(__name__)

# hudi-cli's defaults for `savepoint create --user` and `--comments`.
DEFAULT_USER = "default"
DEFAULT_COMMENT = "default"


@dataclass(frozen=True)
class SavepointUsage:
    """A savepoint and what it keeps alive: the files (and their bytes) that the next clean would
    delete if this savepoint were deleted now, with the table's cleaner settings."""

    savepoint: Savepoint
    files_kept_alive: int
    bytes_kept_alive: int


class Savepointer:
    """The savepoint service of one table: built once from the table (its settings, its lock), an
    engine for the listing, a clock (`savepointedAt`) and a listener."""

    def __init__(self, table: HoodieTable, engine: Engine | None = None, clock: Clock = wall_clock,
                 listener: Listener = QUIET):
        self.table = table
        self.engine = engine
        self.clock = clock
        self.listener = listener

    # ------------------------------------------------------------------------------- create
    def create(self, instant: str | None = None, user: str = DEFAULT_USER,
               comment: str = DEFAULT_COMMENT) -> Savepoint:
        """Savepoint `instant` (None: the latest completed commit, as the write client's
        `savepoint(user, comment)`); returns what was written. Refused (`HudiInputError`, nothing
        written) when the instant cannot be savepointed or already is."""
        self._check_service()
        with table_lock(self.table, "savepoint"):
            timeline = self.table.reload_timeline()
            instant = instant or self._latest_commit(timeline)
            existing = timeline.get(instant, SAVEPOINT)
            if existing is not None and existing.is_completed:
                raise HudiInputError(f"{self.table.base_path}: {instant} is savepointed already")
            self._check_savepointable(timeline, instant)
            enabled = self.table.write_config.get(opt.METADATA_ENABLE)
            files = latest_files_as_of(listing_view(self.table, self.engine, enabled), instant)
            savepoint = Savepoint(instant, user, int(self.clock().timestamp() * 1000), comment, files)
            inflight = Instant(instant, SAVEPOINT, State.INFLIGHT)
            if existing is None:
                timeline.create_state_file(inflight, b"")
            else:
                log.info("completing savepoint %s, left inflight by an earlier run", instant)
            self.listener.reached(Step.SAVEPOINT_INFLIGHT)
            timeline.create_state_file(inflight.with_state(State.COMPLETED), savepoint.serialize())
            self.table.reload_timeline()
            log.info("savepoint %s created: %d files in %d partitions", instant, savepoint.file_count,
                     len(files))
            return savepoint

    def _check_service(self) -> None:
        self.table.config.check_service("savepoint", self.table.storage.uri(PROPERTIES_FILE))

    def _latest_commit(self, timeline: ActiveTimeline) -> str:
        last = timeline.completed_commits_timeline(self.table.is_mor).last()
        if last is None:
            raise HudiInputError(f"{self.table.base_path}: could not savepoint: the commit timeline is empty")
        return last.timestamp

    def _check_savepointable(self, timeline: ActiveTimeline, instant: str) -> None:
        commits = timeline.completed_commits_timeline(self.table.is_mor)
        if commits.get(instant) is None:
            found = [f"{i.action} ({i.state.name.lower()})" for i in timeline if i.timestamp == instant]
            raise HudiInputError(
                f"{self.table.base_path}: could not savepoint {instant}: it is "
                f"{', '.join(found) or 'not on the active timeline'}; only a completed "
                f"{'commit, deltacommit' if self.table.is_mor else 'commit'} or replacecommit of the active "
                "timeline is savepointed")
        retained, clean = self._last_commit_retained(timeline)
        if retained and instant < retained:
            raise HudiInputError(
                f"{self.table.base_path}: could not savepoint commit {instant}: it is before {retained}, the "
                f"earliest commit to retain of the last clean ({clean}), so files of its version may be "
                "cleaned already")

    def _last_commit_retained(self, timeline: ActiveTimeline) -> tuple[str | None, str | None]:
        """(earliest commit to retain, clean instant) of the latest clean on the timeline: from a
        completed clean's metadata, a pending clean's plan; (None, None) without a clean."""
        last = timeline.filter_actions({CLEAN}).last()
        if last is None:
            return None, None
        where = self.table.storage.uri(timeline.state_file_path(last))
        if last.is_completed:
            record = metadata.completed_metadata(timeline, last)
            if record is None:
                raise HudiInputError(f"{where}: the last clean's metadata is empty; the commits it "
                                     "retained are unknown, so no savepoint is made")
            return record.get("earliestCommitToRetain") or None, last.timestamp
        plan = metadata.requested_plan(timeline, last) or {}
        retained = plan.get("earliestInstantToRetain") or {}
        return retained.get("timestamp") or None, f"{last.timestamp}, {last.state.name.lower()}"

    # ------------------------------------------------------------------------------- delete
    def delete(self, instant: str) -> None:
        """Remove savepoint `instant`: its inflight file, then its completed file. An inflight
        savepoint left by a killed create is removed too. Refused for an instant that is no savepoint."""
        self._check_service()
        with table_lock(self.table, "delete a savepoint"):
            timeline = self.table.reload_timeline()
            found = timeline.get(instant, SAVEPOINT)
            if found is None:
                names = ", ".join(timeline.filter_actions({SAVEPOINT}).timestamps) or "none"
                raise HudiInputError(f"{self.table.base_path}: {instant} is not a savepoint "
                                     f"(savepoints: {names})")
            inflight = Instant(instant, SAVEPOINT, State.INFLIGHT)
            storage = self.table.storage
            if timeline.has_state_file(inflight):
                storage.delete_checked([timeline.state_file_path(inflight)])
            self.listener.reached(Step.SAVEPOINT_INFLIGHT_DELETED)
            completed = inflight.with_state(State.COMPLETED)
            if timeline.has_state_file(completed):
                storage.delete_checked([timeline.state_file_path(completed)])
            self.table.reload_timeline()
            log.info("savepoint %s deleted", instant)

    # --------------------------------------------------------------------------------- list
    def list(self) -> list[SavepointUsage]:
        """Every completed savepoint, oldest first, with what it keeps alive: the files a clean
        planned now without it would delete beyond those it plans with every savepoint (so the
        next clean after its deletion frees them), and their bytes."""
        self._check_service()
        timeline = self.table.reload_timeline()
        savepoints = completed_savepoints(timeline)
        if not savepoints:
            return []
        config = CleanConfig.from_write_config(self.table.write_config)
        now = self.clock()
        with_all = self._planned(self.table, config, now)
        usages = []
        for savepoint in savepoints:
            without = self._planned(_without_savepoint(self.table, timeline, savepoint.instant), config, now)
            freed = {path: size for path, size in without.items() if path not in with_all}
            usages.append(SavepointUsage(savepoint, len(freed), sum(freed.values())))
        return usages

    def _planned(self, table: HoodieTable, config: CleanConfig, now: datetime) -> dict[str, int]:
        """Path -> size of every file a clean planned now would delete."""
        cleaner = Cleaner(table, config, self.engine, lambda: now)
        plan = cleaner.plan(with_sizes=True)
        sizes = cleaner.file_sizes(plan)
        return {info.file_path: size for partition, files in plan.file_paths_to_delete.items()
                for info, size in zip(files, sizes[partition], strict=True)}


def _without_savepoint(table: HoodieTable, timeline: ActiveTimeline, instant: str) -> HoodieTable:
    """The table as a clean would see it with savepoint `instant` deleted (nothing is written)."""
    gone = [i for i in timeline.state_files if i.action == SAVEPOINT and i.timestamp == instant]
    hidden = copy.copy(table)
    hidden.__dict__["active_timeline"] = timeline.without(gone)
    return hidden
