"""`validateRollback` of Hudi's metadata writer: a data write at or before the metadata table's latest
compaction is inside a compacted base file, so a rollback cannot undo it there and Hudi asks for a
restore. The rule differs by version, as Java's does: 0.15 (release-0.15.0) compares every rolled-back
write with the compaction time as strings (`<t>001` sorts after `<t>`); 1.x (1.0.x) checks only a
write whose deltacommit the metadata timeline holds, and only against a compaction time of the same
length (its compactions take fresh times). Both check the write each rollback undoes (0.15's
`update(HoodieRollbackMetadata)` takes `commitsRollback[0]`), when the metadata table is written,
after the data rollback's deletes; hudi-assets checks the writes the run rolls back before anything
is written too (`refuse_held_writes`), as every refusal comes before the first delete.
"""

from __future__ import annotations

from collections.abc import Iterable

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


def refuse_held_writes(mdt: HoodieTable, instant_times: Iterable[str]) -> None:
    """`check_metadata_rollback` for each write a run rolls back (`instant_times`), on one read of the
    metadata timeline under the run's lock (the refusal's, when it read it), before anything is written.
    Only those, as Java: another pending write the compaction holds (a live one, whose writer's clock
    is behind the compaction's) is no reason to refuse this rollback."""
    timeline = mdt.active_timeline
    for instant_time in instant_times:
        check_metadata_rollback(mdt, timeline, instant_time)
