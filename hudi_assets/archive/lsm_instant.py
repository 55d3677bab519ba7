"""The states of one active instant -> one `HoodieLSMTimelineInstant` row (Hudi 1.x
MetadataConversionUtils.createLSMTimelineInstant with ActiveAction, apache/hudi id 31256959204, id
30831307068).

`metadata` is the completed file's bytes (null when it is empty); `plan` is, by the action of the
instant's first pending state: a clean's plan (the requested file, else the inflight one; kept even
when empty), a compaction's or log compaction's requested plan, a replacecommit's or clustering's
requested metadata overridden by its inflight commit metadata (each only when not empty); none for
the other actions. Bytes are copied as they are: nothing is decoded.
"""

from __future__ import annotations

from typing import Any

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.timeline.history import LSM_TIMELINE_INSTANT_VERSION_1
from hudi_assets.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMPACTION,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    Instant,
    State,
)
from hudi_assets.timeline.timeline import ActiveTimeline


def lsm_timeline_instant(timeline: ActiveTimeline, states: list[Instant]) -> dict[str, Any]:
    """The row of one instant from all of its state files present on `timeline`."""
    by_state = {i.state: i for i in states}
    completed = by_state.get(State.COMPLETED)
    if completed is None:
        raise ValueError(f"{states}: only completed instants are archived")
    requested, inflight = by_state.get(State.REQUESTED), by_state.get(State.INFLIGHT)
    pending = requested or inflight
    if pending is None:  # Hudi's ActiveAction.getPendingInstant fails the run here
        raise CorruptFileError(timeline.storage.uri(timeline.state_file_path(completed)),
                               "has no requested or inflight state file to archive with it")
    metadata = timeline.read_details(completed)
    plan: bytes | None = None
    if pending.action == CLEAN:
        plan = timeline.read_details(pending)
    elif pending.action in (COMPACTION, LOG_COMPACTION):
        plan = timeline.read_details(Instant(completed.timestamp, pending.action, State.REQUESTED))
    elif pending.action in (REPLACE_COMMIT, CLUSTERING):
        for state in (requested, inflight):
            if state is not None and (content := timeline.read_details(state)):
                plan = content
    return {"instantTime": completed.timestamp,
            "completionTime": timeline.completion_time(completed),
            "action": completed.action, "metadata": metadata or None, "plan": plan,
            "version": LSM_TIMELINE_INSTANT_VERSION_1}
