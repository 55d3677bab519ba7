"""archive_batch -> merged_archive_files: Hudi's timeline archiver as two steps.

The batch is checked before any merge: every instant it removed from the active timeline must read
back from the archive (merging rewrites archive files, so a loss found later could not be undone).
On Hudi 1.x tables the archive is the LSM history and the second step its compaction and cleaning
(layers before and after) instead of 0.x's merge of small archive files.
"""

from __future__ import annotations

import dagster as dg
import pandas as pd

from hudi_assets.archive.archiver import HoodieTimelineArchiver
from hudi_assets.archive.archiver_v2 import TimelineArchiverV2
from hudi_assets.archive.lsm_writer import layer_summaries
from hudi_assets.metrics import MetricsListener
from hudi_assets.orchestration.checks import check_result
from hudi_assets.orchestration.display import bytes_metadata, table_value
from hudi_assets.orchestration.invariants import ARCHIVE_SCHEMA, violations
from hudi_assets.table import HoodieTable


def _state(instant) -> str:
    return f"{instant.timestamp}.{instant.action}.{instant.state.name}"


def archive_batch(context: dg.AssetExecutionContext, key: str, table: HoodieTable):
    """Archives the instants Hudi 0.15's archiver would, reporting each fence that limited it."""
    hudi = context.resources.hudi
    metrics = MetricsListener.for_table(table)
    archiver = HoodieTimelineArchiver.for_table(table, metrics)
    before = len(archiver.table.active_timeline)
    selection = archiver.plan()
    result = None if hudi.dry_run else archiver.archive(merge=False, selection=selection)
    archived = [_state(i) for i in result.selection.state_files] if result else []
    written = [result.archive_file] if result and result.archive_file else []
    entries = {_state(i) for i in archiver.readable_state_files(result)} if result else set()
    frame = pd.DataFrame({"instant": archived, "archived": [a in entries for a in archived]})
    yield check_result(context, "archived_instants_readable", violations(ARCHIVE_SCHEMA, frame), frame,
                       "archived instants are missing from the archive")
    after = len(archiver.table.reload_timeline())
    fences = pd.DataFrame([{"fence": f.name, "instant": f.instant or "", "reason": f.reason}
                           for f in selection.fences], columns=["fence", "instant", "reason"])
    if written:
        context.log.info(f"{key}: archived {len(result.selection.instants)} instants "
                         f"({len(archived)} state files) into {written[0]}")
    else:
        context.log.info(f"{key}: nothing archived ({'dry run: ' if hudi.dry_run else ''}"
                         f"{len(selection.instants)} instants selected; {selection.keep.reason})")
    yield dg.MaterializeResult(metadata={
        "dry_run": hudi.dry_run,
        "active_instants_before": before,
        "active_instants_after": after,
        "instants_selected": len(selection.instants),
        "instants_archived": len(result.selection.instants) if result else 0,
        "state_files_archived": len(archived),
        "archive_file": written[0] if written else "",
        "keep_range": selection.keep.reason,
        "fences": table_value(fences),
        **metrics.gauges,  # HoodieMetrics' names: <prefix>.archive.numInstantsArchived, ...
    })


def _layers(archiver: TimelineArchiverV2) -> pd.DataFrame:
    rows = [{"layer": s.layer, "files": s.files, "instants": s.instants, "bytes": s.size_bytes,
             "blocked_by": s.blocked_by or ""}
            for s in layer_summaries(archiver.history, archiver.config.timeline_compaction_batch_size,
                                     archiver.writer.target_bytes)]
    return pd.DataFrame(rows, columns=["layer", "files", "instants", "bytes", "blocked_by"])


def _lsm_compaction(context: dg.AssetExecutionContext, key: str, archiver: TimelineArchiverV2):
    """A Hudi 1.x table's history: compacted and cleaned (compactAndClean), layers before and after."""
    before = _layers(archiver)
    if context.resources.hudi.dry_run:
        merged, reason = None, "dry run"
    else:
        merged = archiver.merge_small_files()
        reason = "compacted" if merged else "no layer holds hoodie.timeline.compaction.batch.size files"
    compaction = archiver.compaction
    sources = [name for names in (compaction.merged.values() if compaction else ()) for name in names]
    after = _layers(archiver)
    blocked = [b for b in after["blocked_by"] if b]
    if blocked and not merged:
        reason = f"blocked by {', '.join(blocked)} (bigger than the compaction target, apache/hudi #17783)"
    done = f"compacted {len(sources)} history files into {merged}" if merged else reason
    context.log.info(f"{key}: {done}")
    yield dg.MaterializeResult(metadata={
        "merged_file": merged or "",
        "reason": reason,
        "files_merged": len(sources),
        "files_cleaned": len(compaction.cleaned) if compaction else 0,
        "layers_before": table_value(before),
        "layers_after": table_value(after),
        "archive_files": int(after["files"].sum()),
        **bytes_metadata("archive_bytes", int(after["bytes"].sum())),
    })


def merged_archive_files(context: dg.AssetExecutionContext, key: str, table: HoodieTable):
    """Merges small archive files when `hoodie.archive.merge.enable` is set (or says why not); on a
    Hudi 1.x table compacts and cleans its LSM history."""
    hudi = context.resources.hudi
    archiver = HoodieTimelineArchiver.for_table(table)
    if isinstance(archiver, TimelineArchiverV2):
        yield from _lsm_compaction(context, key, archiver)
        return
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
    context.log.info(f"{key}: {f'merged {len(gone)} archive files into {merged}' if merged else reason}")
    yield dg.MaterializeResult(metadata={
        "merged_file": merged or "",
        "reason": reason,
        "files_merged": len(gone),
        **bytes_metadata("bytes_merged", sum(before[name] for name in gone)),
        "archive_files": len(after),
        **bytes_metadata("archive_bytes", sum(after.values())),
    })
