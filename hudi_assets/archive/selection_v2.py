"""Which instants Hudi 1.x's archiver moves into the LSM history (TimelineArchiverV2
.getInstantsToArchive, table versions 8 and 9), with every fence and its reason.

Differences from 0.15 (`selection`): nothing is archived unless the completed commits exceed
keep.max; the earliest instant to retain is the smallest (by requested time) of the fences (the
earliest pending write, the MOR compaction fence, the clustering fence of 1.x's ClusteringUtils, the
metadata table's latest compaction matched by COMPLETION time, and for a metadata table its data
table's earliest instant); completed cleans and rollbacks go only with commits, those requested
before the last commit archived; instants are archived in requested-time order. Followed: apache/hudi
TimelineArchiverV2 @00d66981 (1.0.x/1.1), ClusteringUtils id 739614832, HoodieDefaultTimeline
.findInstantsModifiedAfterByCompletionTime. TimelineArchiverV2 has no `hoodie.archive.limit.instants`
(only the 0.x archiver of some 1.x revisions reads it), so neither has this.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from hudi_assets.archive.config import ArchiveConfig, keep_range
from hudi_assets.archive.selection import (
    METADATA_TABLE,
    ArchiveSelection,
    Fence,
    archivable_commits,
    cleaner_plan,
    compaction_fence,
    data_table_fence,
    metadata_table_fence,
    pending_fence,
    plan_ectr,
    savepoint_fence,
    state_files_of,
)
from hudi_assets.clean.plan import SAVEPOINTED_TIMESTAMPS
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import CLEAN, CLUSTERING, REPLACE_COMMIT, ROLLBACK
from hudi_assets.timeline.timeline import ActiveTimeline, Timeline


def _earliest_replaced_savepoint(active: ActiveTimeline, policy: str, plan: dict) -> str | None:
    """ClusteringUtils.getEarliestReplacedSavepointInClean: the earliest savepoint the clean kept
    files for, when a completed replacecommit lies between it and the clean's earliest commit to
    retain (a deleted savepoint must not let archiving expose the replaced files it kept)."""
    ectr = plan_ectr(plan)
    savepoints = sorted(((plan.get("extraMetadata") or {}).get(SAVEPOINTED_TIMESTAMPS) or "").split(","))
    earliest = savepoints[0] if savepoints else None
    if policy == "KEEP_LATEST_FILE_VERSIONS" or not ectr or not earliest or ectr <= earliest:
        return None
    replaces = active.filter_actions({REPLACE_COMMIT}).filter_completed()
    return earliest if any(earliest <= i.timestamp <= ectr for i in replaces) else None


def clustering_fence(active: ActiveTimeline, cleaner_policy: str) -> Fence:
    """ClusteringUtils.getEarliestInstantToRetainForClustering (1.x): the first replacecommit or
    clustering (any state) at or after what the last completed clean retained from."""
    name = "clustering"
    replaces = active.filter_actions({REPLACE_COMMIT, CLUSTERING})
    if not replaces:
        return Fence(name, None, "no replacecommit or clustering in the active timeline")
    last_clean = active.clean_timeline().filter_completed().last()
    if last_clean is None:
        first = replaces.first()
        return Fence(name, first.timestamp, f"no completed clean: first replacecommit/clustering "
                                            f"{first.timestamp} may still hide replaced files")
    plan = cleaner_plan(active, last_clean)
    ectr = plan_ectr(plan)
    savepoint = _earliest_replaced_savepoint(active, cleaner_policy, plan)
    if savepoint:
        lower, basis = savepoint, f"last clean {last_clean.timestamp} kept files for savepoint {savepoint}"
    elif ectr:
        lower, basis = ectr, f"last clean {last_clean.timestamp} retains from {ectr}"
    else:
        lower = last_clean.timestamp
        basis = f"last clean {lower} has no earliest commit to retain"
    fence = replaces.at_or_after(lower).first()
    if fence is None:
        return Fence(name, None, f"{basis}: no replacecommit/clustering at or after it")
    return Fence(name, fence.timestamp, f"{basis}: first replacecommit/clustering at or after it is "
                                        f"{fence.timestamp}")


def _completed_after(table_commits: Timeline, completion_times: Mapping[str, str], at: str) -> Fence:
    """The metadata-table fence of 1.x: keep the commits that completed after the metadata table's
    latest compaction (`at`, its requested time), by completion time."""
    after = [i for i in table_commits
             if i.timestamp != at and completion_times.get(i.timestamp, i.timestamp) > at]
    if not after:
        return Fence(METADATA_TABLE, None, f"every completed commit completed before the latest "
                                           f"metadata-table compaction {at}")
    return Fence(METADATA_TABLE, after[0].timestamp,
                 f"latest metadata-table compaction {at}: {after[0].timestamp} is the first commit that "
                 "completed after it")


def _layout_timeline(storage: Storage) -> ActiveTimeline:
    """The active timeline of the table at `storage`, in its layout (a 1.x metadata table's is 2)."""
    return HoodieTable(storage).active_timeline


def select_instants_to_archive_v2(table: HoodieTable, config: ArchiveConfig,
                                  active: ActiveTimeline) -> ArchiveSelection:
    """Hudi 1.x's choice of instants to archive, with every fence and its reason."""
    is_mor = table.config.is_mor
    table_commits = active.completed_commits_timeline(is_mor)
    keep = keep_range(config, active.commits_timeline(), table_commits)
    selection = ArchiveSelection(keep)
    savepoint, savepoint_times = savepoint_fence(active, config)
    selection.fences = [savepoint]
    if len(table_commits) <= keep.max_commits:
        selection.notes.append(f"{len(table_commits)} completed commits <= max {keep.max_commits}: "
                               "nothing is archived")
        return selection
    fences = [pending_fence(active, table_commits), compaction_fence(active, is_mor, config),
              clustering_fence(active, config.cleaner.policy)]
    mdt = (data_table_fence(table, config) if table.is_metadata_table
           else metadata_table_fence(table, partial(_completed_after, table_commits, active.completion_times),
                                     _layout_timeline))
    if mdt is not None:
        fences.append(mdt)
    selection.fences += fences
    selection.commits = archivable_commits(table_commits, keep, config, fences, savepoint=savepoint,
                                           savepoint_times=savepoint_times)
    if selection.commits:
        last = selection.commits[-1].timestamp
        done = active.filter_actions({CLEAN, ROLLBACK}).filter_completed()
        selection.clean_rollback = done.before(last).instants
    selection.instants = sorted(selection.commits + selection.clean_rollback, key=lambda i: i.sort_key)
    selection.state_files = state_files_of(active, selection.instants)
    return selection
