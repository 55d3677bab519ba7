"""archive_batch -> merged_archive_files: Hudi's timeline archiver as two assets.

The batch is checked before any merge: every instant it removed from the active timeline must read
back from the archive (merging rewrites archive files, so a loss found later could not be undone).
"""

import dagster as dg
import pandas as pd

from hudi_assets.archive.archiver import HoodieTimelineArchiver
from hudi_assets.archive.config import ArchiveConfig
from hudi_assets.orchestration.assets import GROUP, TABLES, check_result, markdown_table
from hudi_assets.orchestration.clean_assets import clean_result
from hudi_assets.orchestration.invariants import ARCHIVE_SCHEMA, violations
from hudi_assets.orchestration.resources import HudiTableRegistry


def _archiver(hudi: HudiTableRegistry, key: str) -> HoodieTimelineArchiver:
    table = hudi.open(key)
    return HoodieTimelineArchiver(table, ArchiveConfig.from_write_config(hudi.write_config(key, table)))


@dg.asset(partitions_def=TABLES, group_name=GROUP, deps=[clean_result], kinds={"hudi"},
          check_specs=[dg.AssetCheckSpec(
              "archived_instants_readable", asset="archive_batch", blocking=True,
              description="Every state file removed from the active timeline reads back from the archive.")])
def archive_batch(context: dg.AssetExecutionContext, hudi: HudiTableRegistry):
    """Archives the instants Hudi 0.15's archiver would, reporting each fence that limited it."""
    archiver = _archiver(hudi, context.partition_key)
    before = len(archiver.table.active_timeline)
    selection = archiver.select()
    if hudi.dry_run:
        archived: list[str] = []
        result = None
    else:
        result = archiver.archive_if_required(merge=False, selection=selection)
        archived = [f"{i.timestamp}.{i.action}.{i.state.name}" for i in result.selection.state_files]
    written = [result.archive_file] if result and result.archive_file else []
    entries = {f"{e.instant.timestamp}.{e.instant.action}.{e.instant.state.name}"
               for e in archiver.archived.entries(only=written)} if written else set()
    frame = pd.DataFrame({"instant": archived, "archived": [a in entries for a in archived]})
    yield check_result("archived_instants_readable", violations(ARCHIVE_SCHEMA, frame), frame,
                       "archived instants are missing from the archive")
    after = len(archiver.table.reload_timeline())
    fences = pd.DataFrame([{"fence": f.name, "instant": f.instant or "", "reason": f.reason}
                           for f in selection.fences])
    yield dg.MaterializeResult(metadata={
        "dry_run": hudi.dry_run,
        "active_instants_before": before,
        "active_instants_after": after,
        "instants_archived": 0 if result is None else len(result.selection.instants),
        "instants_selected": len(selection.instants),
        "state_files_archived": len(archived),
        "archive_file": (result.archive_file or "") if result else "",
        "keep_min_commits": selection.keep.min_commits,
        "keep_max_commits": selection.keep.max_commits,
        "keep_range": selection.keep.reason,
        "fences": markdown_table(fences),
    })


@dg.asset(partitions_def=TABLES, group_name=GROUP, deps=[archive_batch], kinds={"hudi"})
def merged_archive_files(context: dg.AssetExecutionContext, hudi: HudiTableRegistry) -> dg.MaterializeResult:
    """Merges small archive files when `hoodie.archive.merge.enable` is set (or says why not)."""
    archiver = _archiver(hudi, context.partition_key)
    before = {s.name: s.size for s in archiver.archived.archive_files()}
    if hudi.dry_run:
        merged, reason = None, "dry run"
    elif not archiver.should_merge:
        merged, reason = None, ("hoodie.archive.merge.enable is false" if not archiver.config.merge_enable
                                else "the store can append to archive files")
    else:
        merged = archiver.merge_small_files()
        reason = "merged" if merged else (
            f"fewer than {archiver.config.merge_files_batch_size} small archive files")
    after = {s.name: s.size for s in archiver.archived.archive_files()}
    gone = set(before) - set(after)
    return dg.MaterializeResult(metadata={
        "merged_file": merged or "",
        "reason": reason,
        "files_merged": len(gone),
        "bytes_merged": sum(before[name] for name in gone),
        "archive_files": len(after),
        "archive_bytes": sum(after.values()),
    })


ARCHIVE_ASSETS = [archive_batch, merged_archive_files]
