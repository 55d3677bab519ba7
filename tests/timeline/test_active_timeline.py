"""The active timeline of real tables, checked against hudi-rs, and its named filters."""

from __future__ import annotations

import pytest
from hudi import HudiTable
from support.refdata import params_or_skip, table_zips

from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import Instant, State
from hudi_assets.timeline.timeline import ActiveTimeline


@pytest.mark.parametrize("name", params_or_skip(table_zips(6), "v6 tables"))
def test_completed_commits_equal_hudi_rs(real_tables, name):
    base = str(real_tables[name])
    table = HoodieTable(base)
    ours = table.active_timeline.completed_commits_timeline(table.is_mor).timestamps
    hudi_rs = HudiTable(base).get_timeline()
    theirs = [*hudi_rs.get_completed_commits(), *hudi_rs.get_completed_replacecommits()]
    if table.is_mor:
        theirs += hudi_rs.get_completed_deltacommits()
    assert ours == sorted(i.timestamp for i in theirs)
    assert bool(ours) == ("empty" not in name)


def _timeline(tmp_path, names: list[str]) -> ActiveTimeline:
    storage = Storage(str(tmp_path))
    for name in names:
        storage.write(f".hoodie/{name}", b"")
    return ActiveTimeline.load(storage)


def test_highest_state_wins_and_raw_keeps_every_file(tmp_path):
    tl = _timeline(tmp_path, ["001.commit.requested", "001.inflight", "001.commit",
                              "002.compaction.requested", "002.compaction.inflight", "002.commit",
                              "003.clean.requested", "004.deltacommit.requested", "004.deltacommit.inflight"])
    assert [str(i) for i in tl] == [
        "[001__commit__COMPLETED]", "[002__commit__COMPLETED]", "[003__clean__REQUESTED]",
        "[004__deltacommit__INFLIGHT]",
    ]
    assert len(tl.raw_instants) == 9
    assert tl.raw_instants[3] == Instant("002", "compaction", State.REQUESTED)


def test_named_filters(tmp_path):
    tl = _timeline(tmp_path, ["001.deltacommit", "002.replacecommit", "003.compaction.requested",
                              "004.clean", "005.savepoint.inflight", "005.savepoint",
                              "006.deltacommit.inflight", "007.replacecommit.requested", "008.rollback",
                              "009.logcompaction.requested"])
    assert tl.completed_commits_timeline(is_mor=True).timestamps == ["001", "002"]
    assert tl.completed_commits_timeline(is_mor=False).timestamps == ["002"]
    assert tl.commits_timeline().timestamps == ["001", "002", "006", "007"]
    assert tl.commits_and_compaction_timeline().timestamps == ["001", "002", "003", "006", "007"]
    assert tl.pending_compaction_timeline().timestamps == ["003"]
    assert tl.pending_log_compaction_timeline().timestamps == ["009"]
    assert tl.pending_replace_timeline().timestamps == ["007"]
    assert tl.pending_writes_timeline().timestamps == ["006"]
    assert tl.savepoint_timeline().timestamps == ["005"]
    assert tl.clean_timeline().timestamps == ["004"] and tl.rollback_timeline().timestamps == ["008"]
    assert tl.write_timeline().filter_pending().timestamps == ["003", "006", "007", "009"]
