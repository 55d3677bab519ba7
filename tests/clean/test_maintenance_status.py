"""`maintenance_status`: what is due, from the timeline alone (no Dagster)."""

from __future__ import annotations

from support.builders import base_file, ts

from hudi_assets.config import WriteConfig
from hudi_assets.maintenance import maintenance_status

P = "p"


def test_counts_commits_since_the_last_clean_and_against_keep_max(builder):
    b = builder()
    times = [ts(n) for n in range(1, 7)]
    for t in times[:4]:
        b.commit(t, {P: [base_file("f1", t)]})
    b.clean(ts(30), times[1], last_commit=times[3])
    for t in times[4:]:
        b.commit(t, {P: [base_file("f1", t)]})
    conf = {"hoodie.clean.max.commits": "3", "hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "5",
            "hoodie.cleaner.commits.retained": "2"}
    status = maintenance_status(b.table(), WriteConfig.load({}, None, conf))
    assert (status.commits_since_last_clean, status.clean_max_commits) == (2, 3)
    assert (status.completed_commits, status.keep_max_commits) == (6, 5)
    assert not status.clean_due and status.archive_due and status.due
    assert status.latest_instant == ts(30)
    relaxed_conf = {**conf, "hoodie.clean.max.commits": "2", "hoodie.keep.max.commits": "6"}
    relaxed = maintenance_status(b.table(), WriteConfig.load({}, None, relaxed_conf))
    assert relaxed.clean_due and not relaxed.archive_due


def test_a_table_never_cleaned_counts_every_commit(builder):
    b = builder()
    for n in range(1, 4):
        b.commit(ts(n), {P: [base_file("f1", ts(n))]})
    status = maintenance_status(b.table(), WriteConfig())
    assert status.commits_since_last_clean == 3 and status.clean_due  # hoodie.clean.max.commits=1
