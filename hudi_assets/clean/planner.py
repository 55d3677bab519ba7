"""`CleanPlanner`: Hudi 0.15's decisions of what a clean deletes. It decides; it deletes nothing.

Driver side: the earliest commit to retain (ECTR), the partitions to scan (full or incremental),
and the timeline-derived sets (replaced file groups, pending compaction operations, savepointed
files). Per partition, as one engine task each: list the partition, build its file groups and
decide its files and its deletion flag (`plan_partition`), so a table with many partitions plans
on a cluster. With a metadata table (`hoodie.metadata.enable`), partitions and files come from its
`files` partition instead of storage and the tasks list nothing: the driver reads a batch of
`cleaner.parallelism` partitions at a time, as Hudi's `loadPartitions` does before each batch, and
hands each task its partition's names and sizes; on the local engine with more batches than one,
each forked worker reads its own partitions' records instead (`_decide_from_metadata`).
Spec: table-services.md §3; Hudi: CleanPlanner, CleanPlanActionExecutor (CleanerUtils: `retention.py`).
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from itertools import repeat

from hudi_assets.clean.config import CleanConfig, CleaningPolicy
from hudi_assets.clean.plan import SAVEPOINTED_TIMESTAMPS, CleanerPlan, CleanFileInfo
from hudi_assets.clean.reader_window import HeldBack, ReaderWindow
from hudi_assets.engine import Engine, LocalEngine, gc_paused, store_map
from hudi_assets.fsview import (
    BaseInstantSlicing,
    FileGroup,
    FileSlice,
    FileSlicing,
    FileSystemView,
    discover_partitions,
    list_partitions,
)
from hudi_assets.java_collections import JavaHashMap, java_hashmap_order, java_string_hash
from hudi_assets.metadata.keys import files_key
from hudi_assets.metadata.table import listing_metadata_table
from hudi_assets.retention import earliest_commit_to_retain
from hudi_assets.storage import DirectoryListing, Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import REPLACE_COMMIT, Instant
from hudi_assets.timeline.instant_time import wall_clock
from hudi_assets.timeline.savepoint import completed_savepoints

log = logging.getLogger(__name__)
# Table versions (Hudi 1.x) whose incremental clean lists every partition once a savepoint the last
# clean recorded is gone.
# Partitions of fewer names are decided object by object: faster there (the two meet near 90 names)
# and numpy's import is left to tables with large partitions.
_COLUMNAR_MIN_NAMES = 100


# ------------------------------------------------------------------------- per-partition decisions
@dataclass(frozen=True)
class PlanContext:
    """What every partition task shares: small and picklable."""

    storage: Storage
    slicing: FileSlicing
    policy: str
    ectr: str | None
    gate: bool  # KEEP_LATEST_COMMITS / BY_HOURS: enough table commits to clean at all
    file_versions_retained: int
    view_timestamps: frozenset[str]
    view_first: str | None
    view_last: str | None
    with_sizes: bool = False  # a dry run reports the bytes it would free
    window: ReaderWindow | None = None  # the reader window, when on

    def is_committed(self, instant_time: str) -> bool:
        if self.view_last is None or instant_time > self.view_last:
            return False
        return instant_time in self.view_timestamps or instant_time < (self.view_first or "")


@dataclass(frozen=True)
class PartitionTask:
    """One partition's share of the timeline-derived sets."""

    partition: str
    replaced: dict[str, str]  # file id -> replace time
    compactions: dict[str, tuple[str, str, bool]]  # file id -> (op base instant, plan instant, major)
    savepointed: frozenset[str]


def _task_of(tasks: dict[str, PartitionTask], partition: str) -> PartitionTask:
    """`partition`'s task, or an empty one for a partition none of the timeline's sets touches."""
    return tasks.get(partition) or PartitionTask(partition, {}, {}, frozenset())


@dataclass(frozen=True, slots=True)
class PartitionDecision:
    partition: str
    delete_partition: bool
    files: list[str]  # file names inside the partition, in the plan's order
    file_sizes: list[int] | None = None  # of `files`, when the context asks for sizes
    held: HeldBack | None = None  # what the reader window kept out of `files`

    def __reduce__(self):
        """Pickled compact, as a task sends it to the driver: the names as one '/'-joined string (no
        file name holds a '/') and the sizes as one array of machine integers, instead of an object
        per file to pickle and memoize (measured: 0.1 s CPU less in the workers per 700,000 files)."""
        joined = "/".join(self.files)
        if not self.files or joined.count("/") != len(self.files) - 1:
            return PartitionDecision, (self.partition, self.delete_partition, self.files, self.file_sizes,
                                       self.held)
        sizes = None if self.file_sizes is None else array("q", self.file_sizes)
        return _unpickle_decision, (self.partition, self.delete_partition, joined, sizes, self.held)


def _unpickle_decision(partition: str, delete_partition: bool, joined: str,
                       sizes: array | None, held: HeldBack | None = None) -> PartitionDecision:
    return PartitionDecision(partition, delete_partition, joined.split("/"),
                             None if sizes is None else sizes.tolist(), held)


def list_and_plan_partition(ctx: PlanContext, task: PartitionTask) -> PartitionDecision:
    """List one partition (empty when it is gone) and decide it."""
    listing = ctx.storage.list_directory(task.partition)
    return plan_partition(ctx, task, listing.files, listing)


def plan_listed_partition(ctx: PlanContext, task: PartitionTask, names: list[str],
                          sizes: dict[str, int]) -> PartitionDecision:
    """Decide one partition from the metadata table's listing (names in its order, sizes by name).
    Before the partition is marked for deletion, storage is listed for files of writes still in
    flight, which the metadata table does not list yet (Hudi's `hasPendingFiles`)."""
    decision = plan_partition(ctx, task, names, DirectoryListing(names, [], sizes))
    if decision.delete_partition:
        on_storage = ctx.slicing.file_groups(task.partition, ctx.storage.list_directory(task.partition).files)
        if any(file_id not in task.replaced for file_id in on_storage):
            return replace(decision, delete_partition=False)
    return decision


def plan_partition(ctx: PlanContext, task: PartitionTask, names: list[str],
                   listing: DirectoryListing | None = None) -> PartitionDecision:
    """Decide one listed partition (CleanPlanner.getDeletePaths), with the sizes of what it deletes
    when `ctx.with_sizes` (from `listing` where it carries them)."""
    decision = _decide_partition(ctx, task, names)
    if ctx.with_sizes and decision.files:
        sizes = ctx.storage.file_sizes(task.partition, decision.files, listing)
        return replace(decision, file_sizes=sizes)
    return decision


def _decide_partition(ctx: PlanContext, task: PartitionTask, names: list[str]) -> PartitionDecision:
    """Runs once per partition over every file of it: per-file work is kept to the grouping, and
    what is the same for many slices (is an instant committed, is anything savepointed or being
    compacted) is decided once."""
    partition = task.partition
    by_commits = ctx.policy != CleaningPolicy.KEEP_LATEST_FILE_VERSIONS
    if by_commits and not ctx.gate:
        return PartitionDecision(partition, False, [])
    compactions, savepointed, replaced = task.compactions, task.savepointed, task.replaced
    if (len(names) >= _COLUMNAR_MIN_NAMES and isinstance(ctx.slicing, BaseInstantSlicing)
            and ctx.window is None and not (compactions or savepointed or replaced)):
        from hudi_assets.clean.columnar import decide_base_files

        keep = 1 if by_commits else ctx.file_versions_retained
        decided = decide_base_files(partition, names, ctx.slicing.base_extension,
                                    ectr=ctx.ectr if by_commits else None, keep=keep,
                                    is_committed=ctx.is_committed)
        if decided is not None:
            return PartitionDecision(partition, decided[1], decided[0])
    groups = ctx.slicing.file_groups(partition, names)
    for file_id, (_, plan_instant, major) in compactions.items():
        if major and file_id in groups:
            groups[file_id].slice_at(plan_instant)  # the empty slice of a pending compaction
    visible: dict[str, bool] = {}  # a partition has few distinct instants
    committed: dict[str, list[FileSlice]] = {}
    for file_id, group in groups.items():
        slices = group.slices
        kept = []
        for instant in (sorted(slices, reverse=True) if len(slices) > 1 else slices):
            is_visible = visible.get(instant)
            if is_visible is None:
                is_visible = visible[instant] = ctx.is_committed(instant)
            if is_visible:
                kept.append(slices[instant])
        committed[file_id] = kept

    def unprotected(slices: list[FileSlice]) -> list[FileSlice]:
        if not savepointed:
            return slices
        return [s for s in slices if not any(name in savepointed for name in s.file_names)]

    def not_for_compaction(file_id: str, slices: list[FileSlice]) -> list[FileSlice]:
        op = compactions.get(file_id)
        return slices if op is None else [s for s in slices if s.base_instant < op[0]]

    ectr = ctx.ectr
    window = ctx.window
    held = HeldBack()
    live = [fid for fid in groups if fid not in replaced]
    # Replaced file groups: before ECTR (by commits) or all of them (file versions).
    from_replaced: dict[str, list[str]] = {}
    for file_id in groups:
        replace_time = replaced.get(file_id)
        if replace_time is None or (by_commits and not replace_time < ectr):
            continue
        doomed = unprotected(committed[file_id])
        if doomed and window is not None:
            doomed, kept = window.split(committed[file_id], doomed, replace_time)
            held += kept
        paths = [p for s in doomed for p in s.file_names]
        if paths:
            from_replaced[file_id] = paths
    from_live: dict[str, list[str]] = {}
    for file_id in live:
        slices = committed[file_id]
        if not slices:
            continue
        if by_commits:
            # Newest first: the slices before ECTR are a suffix; its first is the newest before
            # ECTR (what a reader as of ECTR reads), and the latest slice is never in the rest.
            older = [s for s in slices if s.base_instant < ectr]
            doomed = unprotected(not_for_compaction(file_id, older[1:]))
        else:
            remaining = not_for_compaction(file_id, slices)
            keep = ctx.file_versions_retained - (1 if file_id in compactions else 0)
            doomed = unprotected(remaining[max(keep, 0):])
        if doomed and window is not None:
            doomed, kept = window.split(slices, doomed)
            held += kept
        if doomed:
            from_live[file_id] = [p for s in doomed for p in s.file_names]
    deletes = [p for part in (from_replaced, from_live)
               for file_id in _in_view_order(partition, groups, part) for p in part[file_id]]
    # No live file group and no pending (uncommitted, non-replaced) files: the partition can go;
    # by commits, also no file group still in the partition that was replaced at or after ECTR
    # (noSubsequentReplaceCommit asks the view, which holds only groups with files).
    delete_partition = not live
    if by_commits and delete_partition:
        delete_partition = all(replaced[fid] < ectr for fid in groups)
    if held.files:  # the partition holds versions a reader may still read
        return PartitionDecision(partition, False, deletes, held=held)
    return PartitionDecision(partition, delete_partition, deletes)


def _import_columnar() -> None:
    """The columnar decision and numpy, imported before local workers fork: each would otherwise
    import them on its first large partition (measured: 0.1 s CPU a worker)."""
    import hudi_assets.clean.columnar  # noqa: F401


def _in_view_order(partition: str, groups: dict[str, FileGroup], chosen: dict[str, list[str]]) -> list[str]:
    """The `chosen` file ids in the order Hudi's file-system view lists the partition's groups.

    buildFileGroups collects `Pair(partition, fileId)` in a `new HashSet<>(idsWithBaseFiles)` and
    then adds the ids with log files only; `groups` comes in that insertion order.
    """
    if len(chosen) < 2:
        return list(chosen)
    with_base = sum(1 for g in groups.values() if any(s.base_file for s in g.slices.values()))
    partition_hash = java_string_hash(partition)
    view = JavaHashMap(max(with_base * 4 // 3 + 1, 16), lambda fid: partition_hash ^ java_string_hash(fid))
    for file_id in groups:
        view.put(file_id)
    return view.order(chosen)


# ------------------------------------------------------------------------------------- planner
class CleanPlanner:
    """Hudi's CleanPlanner over one snapshot of the active timeline."""

    def __init__(self, table: HoodieTable, config: CleanConfig, engine: Engine | None = None,
                 now: datetime | None = None, with_sizes: bool = False):
        self.table = table
        self.config = config
        self.engine = engine or LocalEngine()
        self.now = now
        self.with_sizes = with_sizes
        # partition -> sizes of the files the last plan lists there, in its order (`with_sizes`).
        self.file_sizes: dict[str, list[int]] = {}
        self.timeline = table.active_timeline
        self.view = FileSystemView(table, self.engine, parallelism=config.parallelism)
        # The metadata table the view lists through; None: storage.
        self.metadata = listing_metadata_table(table.storage, table.config, config.metadata_enabled)
        self.commit_timeline = self.timeline.completed_commits_timeline(table.is_mor)  # TABLE-COMMITS
        self.empty_last_clean: Instant | None = None  # found empty: the scheduler deletes it
        self.window = ReaderWindow.of(table, config.reader_window_s, now or wall_clock())
        self.held_back = HeldBack()  # what the window kept out of the last plan

    # ----------------------------------------------------------------- timeline-level decisions
    def earliest_commit_to_retain(self) -> Instant | None:
        return earliest_commit_to_retain(self.timeline.commits_and_compaction_timeline(), self.config,
                                         self.now)

    def last_completed_commit_timestamp(self) -> str:
        last = self.commit_timeline.last()
        return last.timestamp if last else ""

    def savepointed_timestamps(self) -> list[str]:
        """0.15: current completed savepoints, recorded in the plan (partitioned tables only), in the
        order of the `HashSet` HoodieTable.getSavepointTimestamps collects them in."""
        if not self.table.config.is_partitioned:
            return []
        return java_hashmap_order(self.timeline.savepoint_timeline().timestamps)

    def partitions_to_clean(self, ectr: Instant | None) -> list[str]:
        scope = self.scope(ectr)
        return self.all_partitions() if scope is None else scope

    def scope(self, ectr: Instant | None) -> list[str] | None:
        """The partitions to scan, or None for every partition (found by listing the table)."""
        if self.config.policy == CleaningPolicy.KEEP_LATEST_FILE_VERSIONS:
            return None
        if ectr is None:
            return []
        if self.config.incremental:
            last_clean = self.timeline.clean_timeline().filter_completed().last()
            if last_clean is not None:
                if not self.timeline.read_details(last_clean):
                    self.empty_last_clean = last_clean
                else:
                    clean = metadata.completed_metadata(self.timeline, last_clean) or {}
                    previous = clean.get("earliestCommitToRetain") or ""
                    commits = self.timeline.commits_timeline()
                    if previous and not commits.is_before_timeline_starts(previous):
                        if self._lists_all_after_savepoint_deletes() and self._removed_savepoints(clean):
                            log.info("a savepoint was removed since the last clean: full listing")
                            return None
                        return self.incremental_partitions(clean, previous, ectr)
        return None

    def _lists_all_after_savepoint_deletes(self) -> bool:
        """Hudi 1.x (table versions 8, 9) scans every partition when a savepoint the last clean
        recorded is gone (CleanPlanner.isAnySavepointDeleted); 0.15 adds that savepoint's partitions."""
        return self.table.config.is_hudi_1x

    def _removed_savepoints(self, clean: dict) -> list[str]:
        """The savepoints the last clean recorded (`savepointed_timestamps`) that are gone now."""
        extra = clean.get("extraMetadata") or {}
        before = [t for t in (extra.get(SAVEPOINTED_TIMESTAMPS) or "").split(",") if t]
        current = set(self.savepointed_timestamps())
        return [t for t in before if t not in current]

    def all_partitions(self) -> list[str]:
        if self.metadata is not None:
            return self.metadata.partition_paths()
        listings = list_partitions(self.table.storage, self.engine, self.config.parallelism)
        return [p.partition for p in listings]

    def _partitions_of(self, instant: Instant) -> list[str]:
        commit = metadata.commit_metadata(self.timeline, instant)
        if instant.action == REPLACE_COMMIT:
            return list(dict.fromkeys([*commit.replaced_file_ids, *commit.partition_to_write_stats]))
        return list(commit.partition_to_write_stats)

    def incremental_partitions(self, clean: dict, previous_ectr: str, ectr: Instant) -> list[str]:
        """Partitions of TABLE-COMMITS in [previous ECTR, new ECTR), plus (0.15) the partitions of
        savepointed commits whose savepoint was removed since the last clean."""
        found: dict[str, None] = {}
        for instant in self.commit_timeline.between(previous_ectr, ectr.timestamp):
            found.update(dict.fromkeys(self._partitions_of(instant)))
        if self.window is not None:  # versions the window held back at the last clean, looked at again
            recent = set(self.window.superseding_since(clean.get("startCleanTime") or ""))
            for instant in self.timeline.commits_and_compaction_timeline().filter_completed():
                if instant.timestamp in recent:
                    found.update(dict.fromkeys(self._partitions_of(instant)))
        if not self.table.config.is_partitioned:
            return list(found)
        for removed in self._removed_savepoints(clean):
            instant = next((i for i in self.commit_timeline if i.timestamp == removed), None)
            if instant is None:
                log.warning("savepoint %s was removed and its commit archived: skipped", removed)
                continue
            found.update(dict.fromkeys(self._partitions_of(instant)))
        return list(found)

    # ---------------------------------------------------------------- per-partition decisions
    def _context(self, ectr: Instant | None) -> PlanContext:
        if self.config.policy == CleaningPolicy.KEEP_LATEST_COMMITS:
            gate = len(self.commit_timeline) > self.config.commits_retained
        else:
            gate = len(self.commit_timeline) > 0
        view = self.view.timeline
        return PlanContext(
            storage=self.table.storage, slicing=self.view.slicing,
            policy=self.config.policy, ectr=ectr.timestamp if ectr else None, gate=gate,
            file_versions_retained=self.config.file_versions_retained,
            view_timestamps=frozenset(view.timestamps),
            view_first=view.first().timestamp if view else None,
            view_last=view.last().timestamp if view else None,
            with_sizes=self.with_sizes,
            window=self.window,
        )

    def _tasks_by_partition(self) -> dict[str, PartitionTask]:
        """The tasks of the partitions that the timeline-derived sets touch; any other partition's
        task is empty."""
        replaced: dict[str, dict[str, str]] = {}
        for (partition, file_id), when in self.view.replaced_file_groups.items():
            replaced.setdefault(partition, {})[file_id] = when
        majors = set(self.timeline.pending_compaction_timeline().timestamps)
        compactions: dict[str, dict[str, tuple[str, str, bool]]] = {}
        for (partition, file_id), op in self.view.pending_compaction_operations.items():
            compactions.setdefault(partition, {})[file_id] = (
                op.base_instant, op.compaction_instant, op.compaction_instant in majors)
        savepointed: dict[str, set[str]] = {}
        for savepoint in completed_savepoints(self.timeline):
            for partition, names in savepoint.files.items():
                savepointed.setdefault(partition, set()).update(names)
        # Hudi matches names against the union over all partitions; names carry the file id, so
        # the partition's own list decides the same and keeps each task small.
        return {p: PartitionTask(p, replaced.get(p, {}), compactions.get(p, {}),
                                 frozenset(savepointed.get(p, ())))
                for p in dict.fromkeys([*replaced, *compactions, *savepointed])}

    def partition_decider(self, ectr: Instant | None
                          ) -> Callable[[str, list[str], DirectoryListing], PartitionDecision]:
        """The decision of one listed partition, as a table-wide discovery visits it (`decide`; the
        status report visits with it too, so its listing serves the plan and its own facts)."""
        ctx, tasks = self._context(ectr), self._tasks_by_partition()

        def visit(partition: str, names: list[str], listing: DirectoryListing) -> PartitionDecision:
            task = _task_of(tasks, partition)
            return plan_partition(ctx, task, names, listing)

        return visit

    def decide(self, partitions: list[str] | None, ectr: Instant | None,
               listed: dict[str, dict[str, int]] | None = None) -> list[PartitionDecision]:
        """One engine task per partition (parallelism min(#partitions, cleaner.parallelism)), each
        listing its partition once. `partitions` None: every partition, decided in the task of the
        table-wide discovery that lists it. `listed`: the metadata table's listing the caller has
        read already (`MetadataTable.files_in_partitions`; the status report's), decided from instead
        of read again when the plan reads the metadata table."""
        ctx = self._context(ectr)
        if self.metadata is not None:
            partitions = self.all_partitions() if partitions is None else partitions
            if listed is not None:
                return self._decide_listed(ctx, partitions, listed)
            return self._decide_from_metadata(ctx, partitions)
        if partitions is None:
            found = discover_partitions(self.table.storage, self.engine, self.config.parallelism,
                                        self.partition_decider(ectr), before_fork=_import_columnar)
            return [decision for _, decision in found]
        if not partitions:
            return []
        by_partition = self._tasks_by_partition()
        tasks = [_task_of(by_partition, p) for p in partitions]
        return store_map(self.engine, self.table.storage.is_local,
                         lambda task: list_and_plan_partition(ctx, task), tasks,
                         min(len(tasks), self.config.parallelism), before_fork=_import_columnar)

    def _decide_from_metadata(self, ctx: PlanContext, partitions: list[str]) -> list[PartitionDecision]:
        """One task per partition, which lists nothing (sizes come with the names). The driver reads
        a batch of `cleaner.parallelism` partitions before each batch's tasks, as Hudi's
        `loadPartitions` does, except on the local engine with more than one batch: there workers
        forked once (not once per batch: 0.4 s CPU of a 1M-file plan) each read their own
        partitions' records from the metadata table's files, opened before the fork, a chunk at a
        time, in key order so that each HFile block is inflated once. (With one batch, reading it
        before the fork costs less: 7% of a 100k-file plan.) Either way one chunk or batch of names
        at a time is held."""
        by_partition = self._tasks_by_partition()
        tasks = [_task_of(by_partition, p) for p in partitions]
        batch_size = self.config.parallelism
        metadata = self.metadata
        if isinstance(self.engine, LocalEngine) and len(tasks) > batch_size:
            metadata.open_files_partition()
            by_key = sorted(range(len(tasks)), key=lambda n: files_key(tasks[n].partition))

            def decide(chunk: Sequence[PartitionTask]) -> list[PartitionDecision]:
                listed = metadata.listed_in_partitions([task.partition for task in chunk])
                return [plan_listed_partition(ctx, task, names, sizes)
                        for task, (names, sizes) in zip(chunk, listed, strict=True)]

            decided = self.engine.map_chunks_in_processes(decide, [tasks[n] for n in by_key], batch_size,
                                                          before_fork=_import_columnar)
            by_index = dict(zip(by_key, decided, strict=True))  # task index -> its decision
            return [by_index[n] for n in range(len(tasks))]
        decisions = []
        for start in range(0, len(tasks), batch_size):
            batch = tasks[start:start + batch_size]
            listed = metadata.listed_in_partitions([task.partition for task in batch])
            items = [(task, *files) for task, files in zip(batch, listed, strict=True)]
            decisions += store_map(self.engine, True, lambda item: plan_listed_partition(ctx, *item), items,
                                   len(items), before_fork=_import_columnar)
        return decisions

    def _decide_listed(self, ctx: PlanContext, partitions: list[str],
                       listed: dict[str, dict[str, int]]) -> list[PartitionDecision]:
        """`_decide_from_metadata` from a listing read already; partitions it lacks are read."""
        if not partitions:
            return []
        missing = [p for p in partitions if p not in listed]
        if missing:
            listed = {**listed, **self.metadata.files_in_partitions(missing)}
        by_partition = self._tasks_by_partition()
        items = [(_task_of(by_partition, p), list(listed[p]), listed[p])
                 for p in partitions]
        return store_map(self.engine, True, lambda item: plan_listed_partition(ctx, *item), items,
                         min(len(items), self.config.parallelism), before_fork=_import_columnar)

    def plan(self) -> CleanerPlan:
        """The plan Hudi 0.15 would request (CleanPlanActionExecutor.requestClean)."""
        ectr = self.earliest_commit_to_retain()
        scope = self.scope(ectr)
        log.info("clean policy %s, earliest commit to retain %s, %s partitions to scan",
                 self.config.policy, ectr.timestamp if ectr else None, "all" if scope is None else len(scope))
        with gc_paused():
            decisions = self.decide(scope, ectr)
            files, partitions_to_delete = self._collect(decisions)
        self.file_sizes = {d.partition: d.file_sizes for d in decisions if d.file_sizes is not None}
        self.held_back = sum((d.held for d in decisions if d.held is not None), HeldBack())
        savepoints = self.savepointed_timestamps()
        return CleanerPlan(
            earliest_instant_to_retain=ectr,
            last_completed_commit_timestamp=self.last_completed_commit_timestamp(),
            policy=self.config.policy,
            file_paths_to_delete=files,
            partitions_to_delete=partitions_to_delete,
            extra_metadata={SAVEPOINTED_TIMESTAMPS: ",".join(savepoints)} if savepoints else {},
        )

    def _collect(self, decisions: list[PartitionDecision]
                 ) -> tuple[dict[str, list[CleanFileInfo]], list[str]]:
        """The plan's map of files and list of partitions, in the order requestClean leaves them.

        Hudi decides `min(#partitions, parallelism)` partitions at a time; each batch is collected
        with `Collectors.toMap`, its partitions to delete appended in that map's order, and its
        partitions with files (0.15, HUDI-7703: no others) `putAll` into one `new HashMap<>()`.
        Consumes the decisions' names (each list is emptied once its paths are made): at 2M files the
        names and the paths held together were half the dry run's peak memory.
        """
        storage = self.table.storage
        batch_size = min(len(decisions), self.config.parallelism) or 1
        files = JavaHashMap()
        by_partition: dict[str, PartitionDecision] = {}
        partitions_to_delete: list[str] = []
        for start in range(0, len(decisions), batch_size):
            batch = {d.partition: d for d in decisions[start:start + batch_size]}
            order = java_hashmap_order(batch)
            partitions_to_delete.extend(p for p in order if batch[p].delete_partition)
            files.put_all(java_hashmap_order(p for p in order if batch[p].files))
            by_partition.update(batch)
        plan_files = {}
        for partition in files.order():
            names = by_partition[partition].files
            prefix = f"{storage.uri(partition)}/"  # checked once; names from a listing hold no '/'
            plan_files[partition] = list(map(_new_file_info, zip(map(prefix.__add__, names), repeat(False))))
            names.clear()  # its paths replace the names: the two are never all held at once
        return plan_files, partitions_to_delete


# CleanFileInfo from a (path, is bootstrap file) pair, made in C: one per planned file.
_new_file_info = partial(tuple.__new__, CleanFileInfo)
