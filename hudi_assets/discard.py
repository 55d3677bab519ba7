"""The way out of a pending instant that must not run: its state files are copied to
`.hoodie/.aux/hudi-assets/discarded/` and then removed, inflight before requested, so a crash
leaves an instant that is still pending, never a half-removed one. Used by `clean --discard-pending`
and `rollback --discard-pending`."""

from __future__ import annotations

import logging

from hudi_assets.exceptions import PathOutsideTableError
from hudi_assets.table import HoodieTable
from hudi_assets.table_paths import DISCARDED_FOLDER, aux_file_problem
from hudi_assets.timeline.instant import Instant, State

log = logging.getLogger(__name__)


def discard_instant(table: HoodieTable, instant: Instant) -> list[str]:
    """Copy, then remove, the inflight and requested state files of `instant`; returns the copies.
    The caller holds the table lock and has checked the instant may go."""
    timeline = table.reload_timeline()
    storage = table.storage
    sources = [timeline.state_file_path(instant.with_state(s)) for s in (State.INFLIGHT, State.REQUESTED)
               if timeline.has_state_file(instant.with_state(s))]
    copies = []
    for source in sources:
        copy = f"{DISCARDED_FOLDER}/{source.rpartition('/')[2]}"
        if why := aux_file_problem(copy, DISCARDED_FOLDER):
            raise PathOutsideTableError(f"{storage.uri(copy)}: {why}")
        storage.write(copy, storage.read(source))
        copies.append(storage.uri(copy))
    for source in sources:  # one by one: a batch (one S3 request) keeps no order, nor stops at a failure
        storage.delete_checked([source])
    log.info("discarded pending %s %s; its state files are kept in %s", instant.action, instant.timestamp,
             storage.uri(DISCARDED_FOLDER))
    table.reload_timeline()
    return copies
