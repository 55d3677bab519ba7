"""Which instants the archiver moves out of `.hoodie/` (HoodieTimelineArchiver.getInstantsToArchive, 0.15).

Selecting decides and writes nothing. Every fence is reported with the instant it stands at and the
reason, so `--dry-run` can say why an instant stays active (savepoints, the oldest pending write,
the compaction and clustering fences, the metadata table; for a metadata table, its data table).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hudi_assets.archive.config import ArchiveConfig, KeepRange, keep_range
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.metadata.keys import FILES
from hudi_assets.storage import Storage
from hudi_assets.table import METADATA_TABLE_FOLDER, HoodieTable
from hudi_assets.timeline.instant import (
    CLEAN,
    COMMIT,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
)
from hudi_assets.timeline.metadata import requested_plan
from hudi_assets.timeline.timeline import METAFOLDER, ActiveTimeline, Timeline

METADATA_TABLE = "metadata table"  # the name of its fence
# Hudi groups clean and rollback instants in a HashMap keyed by action: this is its iteration order.
_CLEAN_ROLLBACK_ORDER = (ROLLBACK, CLEAN)


@dataclass(frozen=True)
class Fence:
    """One limit on what may be archived: instants at or after `instant` stay (None: no limit)."""

    name: str
    instant: str | None
    reason: str


@dataclass
class ArchiveSelection:
    """The decision: instants to archive and every state file that goes with them, in writing order."""

    keep: KeepRange
    fences: list[Fence] = field(default_factory=list)
    clean_rollback: list[Instant] = field(default_factory=list)
    commits: list[Instant] = field(default_factory=list)
    instants: list[Instant] = field(default_factory=list)
    state_files: list[Instant] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.state_files)


def _clean_and_rollback(timeline: Timeline, keep: KeepRange) -> list[Instant]:
    """Completed cleans and rollbacks, per action: over max -> the oldest (size - min)."""
    selected: list[Instant] = []
    for action in _CLEAN_ROLLBACK_ORDER:
        group = timeline.filter_actions({action}).filter_completed().instants
        if len(group) > keep.max_commits:
            selected.extend(group[:len(group) - keep.min_commits])
    return selected


def pending_fence(active: ActiveTimeline, table_commits: Timeline) -> Fence:
    pending = active.write_timeline().filter_pending().first()
    if pending is None:
        return Fence("oldest pending write", None, "no requested/inflight write, compaction or clustering")
    before = [i for i in table_commits if i.timestamp < pending.timestamp]
    if before:
        return Fence("oldest pending write", before[-1].timestamp,
                     f"oldest pending instant is {pending}; the completed commit before it, "
                     f"{before[-1].timestamp}, is retained")
    return Fence("oldest pending write", pending.timestamp,
                 f"oldest pending instant is {pending} and no completed commit precedes it")


def compaction_fence(active: ActiveTimeline, is_mor: bool, config: ArchiveConfig) -> Fence:
    """CompactionUtils.getOldestInstantToRetainForCompaction (0.15, HUDI-7532: last compaction = `commit`)."""
    name = "MOR compaction"
    if not is_mor:
        return Fence(name, None, "not a MERGE_ON_READ table")
    if config.compaction_trigger not in ("NUM_COMMITS", "NUM_AND_TIME"):
        return Fence(name, None, f"compaction trigger {config.compaction_trigger} is not count based")
    last = active.filter_actions({COMMIT}).filter_completed().last()
    deltas = active.filter_actions({DELTA_COMMIT})
    if last is not None:
        since = [i for i in deltas if i.timestamp > last.timestamp]
        anchor = last
    else:
        if not deltas:
            return Fence(name, None, "no completed compaction and no delta commits")
        anchor = deltas.first()
        since = [i for i in deltas if i.timestamp >= anchor.timestamp]
    limit = config.max_delta_commits
    if len(since) < limit:
        what = f"last compaction {anchor.timestamp}" if last else f"first delta commit {anchor.timestamp}"
        return Fence(name, anchor.timestamp,
                     f"{len(since)} delta commits since it < hoodie.compact.inline.max.delta.commits="
                     f"{limit}: keep from {what}")
    # Hudi keeps the last of the first (n - limit + 1) delta commits: with limit <= 0, the newest one,
    # and with none since the last compaction it fails (IndexOutOfBounds on an empty list).
    if not since:
        raise InvalidConfigError(
            f"hoodie.compact.inline.max.delta.commits={limit}: no delta commit follows the last "
            f"compaction {anchor.timestamp}, and Hudi 0.15's archiver fails on this value then; "
            "set it to 1 or more")
    fence = since[min(len(since) - 1, len(since) - limit)]
    return Fence(name, fence.timestamp,
                 f"keep the last {max(limit, 1)} delta commits (max.delta.commits={limit}) so compaction "
                 "can still be scheduled")


def cleaner_plan(active: ActiveTimeline, clean: Instant) -> dict:
    """The plan of a clean, as Hudi's CleanerUtils.getCleanerPlan reads it: an empty requested file
    fails the archive (Hudi's fails decoding it), where other readers take it as no plan."""
    return requested_plan(active, clean, allow_empty=False)


def plan_ectr(plan: dict) -> str | None:
    """The time of a clean plan's earliest instant to retain; None where it names none."""
    return (plan.get("earliestInstantToRetain") or {}).get("timestamp") or None


def _clustering_fence(active: ActiveTimeline) -> Fence:
    """ClusteringUtils.getOldestInstantToRetainForClustering (0.14/0.15, with the inflight part)."""
    name = "clustering"
    replaces = active.filter_actions({REPLACE_COMMIT})
    if not replaces:
        return Fence(name, None, "no replacecommit in the active timeline")
    last_clean = active.clean_timeline().filter_completed().last()
    if last_clean is not None:
        ectr = plan_ectr(cleaner_plan(active, last_clean))
        lower = ectr or last_clean.timestamp
        fence = next((i for i in replaces if i.timestamp >= lower), None)
        basis = (f"last clean {last_clean.timestamp} retains from {ectr}" if ectr
                 else f"last clean {last_clean.timestamp} has no earliest commit to retain")
        reason = (f"{basis}: first replacecommit at or after it is {fence.timestamp}" if fence
                  else f"{basis}: no replacecommit at or after it")
    else:
        fence = replaces.first()
        reason = f"no completed clean: first replacecommit {fence.timestamp} may still hide replaced files"
    inflight = replaces.filter_inflight().first()
    if inflight is not None:
        before = active.commits_timeline().filter_completed().before(inflight.timestamp).last()
        if before is not None and (fence is None or fence.sort_key > before.sort_key):
            fence = before
            reason = (f"inflight clustering {inflight.timestamp}: keep the completed commit before it, "
                      f"{before.timestamp}")
    return Fence(name, fence.timestamp if fence else None, reason)


def savepoint_fence(active: ActiveTimeline, config: ArchiveConfig) -> tuple[Fence, set[str]]:
    savepoints = active.savepoint_timeline()
    times = set(savepoints.timestamps)
    if not savepoints:
        return Fence("savepoint", None, "no completed savepoint"), times
    if config.archive_beyond_savepoint:
        return Fence("savepoint", None, "hoodie.archive.beyond.savepoint=true: only savepointed commits "
                                        f"{sorted(times)} stay"), times
    first = savepoints.first().timestamp
    return Fence("savepoint", first, f"first savepoint {first}: nothing at or after it is archived"), times


def metadata_table_fence(table: HoodieTable, fence_at: Callable[[str], Fence] | None = None,
                         load_timeline: Callable[[Storage], ActiveTimeline] = ActiveTimeline.load
                         ) -> Fence | None:
    """A data table with a metadata table: keep the instants at or after the metadata table's latest
    compaction (0.15). `fence_at` makes the fence of that compaction's time instead (1.x: by
    completion time); `load_timeline` reads the metadata table's timeline (0.15: its layout-1
    `.hoodie/` as it is)."""
    if FILES not in table.config.metadata_partitions:
        return None
    mdt = Storage(f"{table.storage.base_uri}/{METADATA_TABLE_FOLDER}", table.storage.options)
    if not mdt.exists(f"{METAFOLDER}/hoodie.properties"):
        return Fence(METADATA_TABLE, "", "hoodie.table.metadata.partitions lists 'files' but the metadata "
                                         f"table at {METADATA_TABLE_FOLDER} is missing: nothing is archived")
    # getLatestCompactionTime: its last completed commit or replacecommit (a dropped metadata partition's)
    compaction = load_timeline(mdt).filter_actions({COMMIT, REPLACE_COMMIT}).filter_completed().last()
    if compaction is None:
        return Fence(METADATA_TABLE, "", "metadata table has no completed compaction yet: nothing is "
                                         "archived")
    if fence_at is not None:
        return fence_at(compaction.timestamp)
    return Fence(METADATA_TABLE, compaction.timestamp,
                 f"latest metadata-table compaction {compaction.timestamp}: newer instants stay")


def data_table_fence(table: HoodieTable, config: ArchiveConfig) -> Fence:
    """A metadata table's archive: nothing at or after the data table's earliest commit (the first
    non-savepointed one beyond savepoints) or its earliest pending instant of any action
    (`TimelineUtils.getEarliestInstantForMetadataArchival`); the metadata table's rollback records
    need the data instants still active."""
    data = Storage(table.base_path[:-len(METADATA_TABLE_FOLDER) - 1], table.storage.options)
    timeline = HoodieTable(data).active_timeline
    commits = timeline.commits_timeline()
    if config.archive_beyond_savepoint:
        saved = set(timeline.filter_actions({SAVEPOINT}).timestamps)
        commits = commits.filter(lambda i: i.timestamp not in saved)
    earliest = ((timeline.filter_pending().first(), "earliest pending instant"),
                (commits.first(), "earliest commit"))
    candidates = [(i.timestamp, why) for i, why in earliest if i is not None]
    if not candidates:
        return Fence("data table", None, "the data table has no commit and no pending instant")
    instant, why = min(candidates, key=lambda candidate: candidate[0])  # a pending commit: named pending
    return Fence("data table", instant, f"the data table's {why} {instant}: newer instants stay")


def archivable_commits(table_commits: Timeline, keep: KeepRange, config: ArchiveConfig, fences: list[Fence],
                       *, savepoint: Fence, savepoint_times: set[str]) -> list[Instant]:
    """The completed commits the savepoints leave (`savepoint_fence`) that are before every one of
    `fences`, oldest first, at most all but keep.min of the table's commits."""
    limits = [f.instant for f in fences if f.instant is not None]
    earliest = min(limits) if limits else None
    candidates = []
    for instant in table_commits:
        ts = instant.timestamp
        if ts in savepoint_times if config.archive_beyond_savepoint else (
                savepoint.instant is not None and ts >= savepoint.instant):
            continue
        if earliest is None or ts < earliest:
            candidates.append(instant)
    return candidates[:max(len(table_commits) - keep.min_commits, 0)]


def select_instants_to_archive(table: HoodieTable, config: ArchiveConfig,
                               active: ActiveTimeline | None = None) -> ArchiveSelection:
    """Hudi 0.15's choice of instants to archive, with every fence and its reason."""
    active = active or table.active_timeline
    is_mor = table.config.is_mor
    table_commits = active.completed_commits_timeline(is_mor)
    keep = keep_range(config, active.commits_timeline(), table_commits)
    selection = ArchiveSelection(keep)
    selection.clean_rollback = _clean_and_rollback(active, keep)

    savepoint, savepoint_times = savepoint_fence(active, config)
    fences = [savepoint, pending_fence(active, table_commits)]
    if len(table_commits) > keep.max_commits:
        fences += [compaction_fence(active, is_mor, config), _clustering_fence(active)]
        selection.commits = archivable_commits(table_commits, keep, config, fences[1:], savepoint=savepoint,
                                               savepoint_times=savepoint_times)
    else:
        selection.notes.append(f"{len(table_commits)} completed commits <= max {keep.max_commits}: "
                               "no commit is archived")
    chosen = selection.clean_rollback + selection.commits
    mdt = data_table_fence(table, config) if table.is_metadata_table else metadata_table_fence(table)
    if mdt is not None:
        fences.append(mdt)
        chosen = ([i for i in chosen if i.timestamp < mdt.instant] if mdt.instant
                  else chosen if table.is_metadata_table else [])
    selection.fences = fences
    selection.instants = chosen
    selection.state_files = state_files_of(active, chosen)
    return selection


def state_files_of(active: ActiveTimeline, instants: list[Instant]) -> list[Instant]:
    """Every state file present of each instant (all its states), instant by instant."""
    by_key: dict[tuple[str, str], list[Instant]] = {}
    for raw in active.raw_instants:
        by_key.setdefault(raw.comparable_key, []).append(raw)
    return [raw for i in instants for raw in by_key.get(i.comparable_key, [])]
