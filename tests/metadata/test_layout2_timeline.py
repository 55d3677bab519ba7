"""Timeline layout 2 names (Hudi 1.x), read-only, and the read-only table-version check."""

from __future__ import annotations

import pytest

from hudi_assets.exceptions import CorruptFileError, UnsupportedTableError
from hudi_assets.table_config import TableConfig
from hudi_assets.timeline.instant import CLUSTERING, COMMIT, DELTA_COMMIT, Instant, State
from hudi_assets.timeline.layout import timeline_layout
from hudi_assets.timeline.layout2 import parse_layout2_name


@pytest.mark.parametrize(("name", "instant", "completed"), [
    ("100_200.deltacommit", Instant("100", DELTA_COMMIT), "200"),
    ("100.compaction.requested", Instant("100", "compaction", State.REQUESTED), None),
    ("100.clustering.inflight", Instant("100", CLUSTERING, State.INFLIGHT), None),
    ("100.deltacommit", Instant("100", DELTA_COMMIT), None),  # legacy: completed before an upgrade
    ("100.inflight", Instant("100", COMMIT, State.INFLIGHT), None),
])
def test_layout2_names(name, instant, completed):
    assert parse_layout2_name(name) == (instant, completed)


@pytest.mark.parametrize("name", ["1_2.bogus", "1_2.clustering", "1_2.compaction",
                                  "1_2.deltacommit.inflight"])
def test_malformed_layout2_names_are_refused(name):
    with pytest.raises(CorruptFileError):
        parse_layout2_name(name)


def test_not_instant_files_are_ignored():
    assert parse_layout2_name("history") is None and parse_layout2_name("hoodie.properties") is None


def test_timeline_folder_and_versions():
    v9 = TableConfig({"hoodie.table.version": "9", "hoodie.timeline.layout.version": "2",
                      "hoodie.timeline.path": "timeline"})
    assert timeline_layout(v9).paths.timeline_path(v9) == ".hoodie/timeline"
    v6 = TableConfig({"hoodie.timeline.layout.version": "1"})
    assert timeline_layout(v6).paths.timeline_path(v6) == ".hoodie"
    v9.check_supported("props")
    for service in ("clean", "metadata table services", "savepoint"):
        v9.check_service(service, "props")
    with pytest.raises(UnsupportedTableError, match="table version 7 is not supported"):
        TableConfig({"hoodie.table.version": "7"}).check_supported("props")
