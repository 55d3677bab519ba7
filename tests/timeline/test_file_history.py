"""`hudi-assets timeline PATH --file NAME`: who wrote a data file and who deleted it, from the active
and the archived timeline, on tables whose clean, archive and rollback hudi-assets ran itself."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from support.builders import TableBuilder, base_file, pending_clean, ts

from hudi_assets.clean.plan import CleanerPlan, CleanFileInfo
from hudi_assets.cli import main
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import State

P = "p1"
CONF = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2",
        "hoodie.keep.max.commits": "3"}


def _at(n: int) -> datetime:
    """Half a minute after ts(n), as an aware local time (the clock a clean is given)."""
    return (datetime(2024, 1, 1) + timedelta(minutes=n, seconds=30)).astimezone()


def _history(path, name: str, capsys) -> dict:
    capsys.readouterr()
    assert main(["timeline", str(path), "--file", name, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("version", [6, 9])
def test_a_file_deleted_by_a_clean_since_archived(tmp_path, capsys, version):
    """On table version 9 the archived clean is a row of the LSM history, its metadata the completed
    clean's bytes."""
    b = TableBuilder(tmp_path / "t", version=version)
    doomed = base_file("f1", ts(1))
    for n in (1, 2):
        b.commit(ts(n), {P: [base_file("f1", ts(n))]})
    cleans = []
    for n in range(3, 9):  # each round: one more version of f1, then a clean of the oldest left
        b.commit(ts(n), {P: [base_file("f1", ts(n))]})
        result = HoodieTable(str(b.root), hoodie_conf=CONF).maintenance.clean(engine="local", now=_at(n))
        cleans.append(next(iter(result.completed)))
    assert not (b.root / P / doomed).exists()
    archived = HoodieTable(str(b.root), hoodie_conf=CONF).maintenance.archive()
    assert cleans[0] in {i.timestamp for i in archived.selection.instants}

    history = _history(b.root, doomed, capsys)
    assert history["partition"] == P and history["exists"] is False
    events = [(e["instant"], e["action"], e["event"], e["timeline"]) for e in history["events"]]
    assert events == [(ts(1), "commit", "written", "archived"), (cleans[0], "clean", "deleted", "archived")]

    capsys.readouterr()
    assert main(["timeline", str(b.root), "--file", f"{P}/{doomed}"]) == 0
    text = capsys.readouterr().out
    assert f"{P}/{doomed} (does not exist)" in text and f"{cleans[0]}  clean" in text


def test_a_file_deleted_by_a_rollback(builder, capsys):
    b = builder()
    b.commit(ts(1), {P: [base_file("f1", ts(1))]})
    failed = base_file("f2", ts(2))
    b.commit(ts(2), {P: [failed]}, state=State.INFLIGHT)
    assert (b.root / P / failed).exists()
    HoodieTable(str(b.root)).maintenance.rollback(ts(2))

    history = _history(b.root, failed, capsys)
    [event] = history["events"]
    assert (event["action"], event["event"], event["timeline"], event["partition"]) == (
        "rollback", "deleted", "active", P)
    assert event["instant"] > ts(2) and event["completed_ms"] > 0
    assert history["exists"] is False


def test_a_name_no_instant_knows(builder, capsys):
    b = builder()
    b.commit(ts(1), {P: [base_file("f1", ts(1))]})
    history = _history(b.root, "nothing.parquet", capsys)
    assert history["events"] == [] and history["exists"] is None
    assert history["notes"] == ["nothing.parquet is not named as a Hudi base or log file",
                                "no instant of the active or archived timeline names nothing.parquet"]


def test_a_file_a_pending_clean_plans_to_delete(builder, capsys):
    b = builder()
    for n in (1, 2, 3):
        b.commit(ts(n), {P: [base_file("f1", ts(n))]})
    old = base_file("f1", ts(1))
    table = HoodieTable(str(b.root))
    plan = CleanerPlan(None, ts(3), "KEEP_LATEST_COMMITS",
                       {P: [CleanFileInfo(table.storage.uri(f"{P}/{old}"))]})
    requested = pending_clean(table, plan)
    history = _history(b.root, old, capsys)
    assert [(e["instant"], e["event"]) for e in history["events"]] == [
        (ts(1), "written"), (requested.timestamp, "planned for deletion (pending clean)")]
    assert history["exists"] is True
