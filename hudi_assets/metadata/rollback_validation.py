"""`validateRollback` of Hudi's metadata writer: a data write at or before the metadata table's latest
compaction is inside a compacted base file, so a rollback cannot undo it there and Hudi asks for a
restore. The rule differs by version, as Java's does: 0.15 (release-0.15.0) compares every rolled-back
write with the compaction time as strings (`<t>001` sorts after `<t>`); 1.x (1.0.x) checks only a
write whose deltacommit the metadata timeline holds, and only against a compaction time of the same
length (its compactions take fresh times). Java checks when the metadata table is written, after the
data rollback's deletes; hudi-assets checks every pending write the run may roll back before anything
is written too (`refuse_held_writes`), as every refusal comes before the first delete.
"""

from __future__ import annotations

from hudi_assets.exceptions import HudiInputError
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import COMMIT, DELTA_COMMIT
from hudi_assets.timeline.timeline import ActiveTimeline


def check_metadata_rollback(mdt: HoodieTable, timeline: ActiveTimeline, failed: str) -> None:
    """Refuse the rollback of the data write `failed` that the metadata table's latest compaction (on
    `timeline`, the metadata table's) holds, by the rule of the table's version."""
    hudi_1x = mdt.config.is_hudi_1x
    if hudi_1x and not timeline.filter_actions({DELTA_COMMIT}).filter(lambda i: i.timestamp == failed):
        return
    compaction = timeline.filter_completed().filter_actions({COMMIT}).last()
    if compaction is None or failed > compaction.timestamp:
        return
    if hudi_1x and len(compaction.timestamp) != len(failed):
        return
    raise HudiInputError(
        f"{mdt.base_path}: write {failed} being rolled back is at or before the metadata table's latest "
        f"compaction {compaction.timestamp}; nothing was deleted. Restore the table with Hudi instead")


def refuse_held_writes(table: HoodieTable, mdt: HoodieTable) -> None:
    """`check_metadata_rollback` for every pending write of `table`, on one read of each timeline,
    before anything is written. Every one, not only this run's targets (which the refusal does not
    know yet): broader than Java, which checks each rollback's own write. A failed write a compaction
    holds needs a restore whoever rolls it back; a live one it holds (a writer whose clock is behind
    the compaction's) refuses an unrelated rollback too, which Java would run."""
    timeline = mdt.reload_timeline()
    for write in table.reload_timeline().pending_writes_timeline():
        check_metadata_rollback(mdt, timeline, write.timestamp)
