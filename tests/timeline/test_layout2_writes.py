"""Layout-2 timeline writes (issue 23 item 2): immutable state files, completed ones named by a
completion time generated as Hudi 1.x's SkewAdjustingTimeGenerator does."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from hudi_assets.exceptions import StorageError
from hudi_assets.storage import Storage
from hudi_assets.table_config import TableConfig
from hudi_assets.timeline.instant import Instant, State
from hudi_assets.timeline.instant_time import format_instant_time
from hudi_assets.timeline.layout import load_active_timeline
from hudi_assets.timeline.layout2 import format_epoch_ms, generate_completion_time

V9 = TableConfig({"hoodie.table.name": "t", "hoodie.table.version": "9",
                  "hoodie.timeline.layout.version": "2", "hoodie.table.timeline.timezone": "UTC"})
NOW = datetime(2024, 11, 26, 7, 30, 0, 123000, tzinfo=UTC).timestamp()


def test_the_clock_is_read_before_the_skew_wait_and_the_time_is_monotonic():
    waits: list[float] = []
    assert generate_completion_time([], "UTC", 200, clock=lambda: NOW, sleep=waits.append) == \
        "20241126073000123"
    assert waits == [0.2]
    # A time already handed out (or a writer's clock ahead of ours): strictly after it.
    assert generate_completion_time(["20241126073000500"], "UTC", 0, clock=lambda: NOW,
                                    sleep=waits.append) == "20241126073000501"


def test_the_allowance_waited_out_is_the_one_a_time_ahead_may_lie_within():
    """A time 30 minutes ahead is within a one-hour allowance: the new time steps past it, as a
    default (200 ms) allowance would not."""
    now = time.time()
    ahead = format_instant_time(datetime.fromtimestamp(now, UTC).replace(tzinfo=None) + timedelta(minutes=30))
    after = format_instant_time(datetime.strptime(ahead, "%Y%m%d%H%M%S%f") + timedelta(milliseconds=1))
    assert generate_completion_time([ahead], "UTC", 3_600_000, clock=lambda: now,
                                    sleep=lambda _: None) == after


def test_a_legacy_name_takes_the_modification_time_in_the_table_zone(tmp_path):
    storage = Storage(str(tmp_path))
    storage.write(".hoodie/timeline/100.commit", b"")
    timeline = load_active_timeline(storage, V9)
    mtime = storage.status(".hoodie/timeline/100.commit").mtime_ms
    assert timeline.completion_times == {"100": format_epoch_ms(mtime, "UTC")}
    assert timeline.legacy == frozenset({"100"})
    assert format_epoch_ms(int(NOW * 1000), "UTC") == "20241126073000123"


def test_state_files_are_written_once_and_completed_ones_carry_their_completion_time(tmp_path):
    storage = Storage(str(tmp_path))
    storage.write(".hoodie/timeline/100.clean.requested", b"plan")
    timeline = load_active_timeline(storage, V9)
    timeline.clock_skew_ms = 0
    assert timeline.create_state_file(Instant("100", "clean", State.INFLIGHT), b"") == \
        ".hoodie/timeline/100.clean.inflight"  # Hudi 1.x: an empty clean inflight
    with pytest.raises(StorageError, match="written once"):
        timeline.create_state_file(Instant("100", "clean", State.REQUESTED), b"other")
    path = timeline.create_state_file(Instant("100", "clean"), b"done")
    reloaded = load_active_timeline(storage, V9)
    completion = reloaded.completion_times["100"]
    assert path == f".hoodie/timeline/100_{completion}.clean" and len(completion) == 17
    assert reloaded.read_details(Instant("100", "clean")) == b"done"
    assert storage.read(".hoodie/timeline/100.clean.requested") == b"plan"
