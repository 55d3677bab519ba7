"""`hudi-assets status --json` on tables built for each case: the reason a clean deletes nothing, the
fence archival waits for, and the numbers, checked against the state each table was built in."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from support.builders import TableBuilder, base_file, log_file, ts

from hudi_assets.cli import main
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import State

P = "p1"
KEYS = {"table", "timeline", "pending", "clean", "archive", "compaction_backlog", "files", "metadata_table"}


def status(b: TableBuilder, capsys, **conf: str) -> dict:
    capsys.readouterr()
    args = [a for k, v in conf.items() for a in ("--hoodie-conf", f"{k.replace('_', '.')}={v}")]
    assert main(["status", str(b.root), "--json", *args]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == KEYS
    return report


def updates(b: TableBuilder, times: list[str], file_id: str = "f1") -> TableBuilder:
    """Commits that each write a new version of one file group."""
    for t in times:
        b.commit(t, {P: [base_file(file_id, t)]})
    return b


def test_the_trigger_not_reached(builder, capsys):
    b = updates(builder(), [ts(1), ts(2)])
    clean = status(b, capsys, hoodie_clean_max_commits="5")["clean"]
    assert clean["due"] is False and clean["commits_since_last_clean"] == 2
    assert clean["reasons"][0] == "clean not due: 2 commits since the last clean < hoodie.clean.max.commits=5"


def test_no_more_commits_than_retained(builder, capsys):
    b = updates(builder(), [ts(1), ts(2), ts(3)])
    clean = status(b, capsys, hoodie_cleaner_commits_retained="3")["clean"]
    assert clean["due"] is True and clean["files_to_delete"] == 0 and not clean["blocked"]
    assert ("nothing to clean: 3 completed commits, not more than the 3 the cleaner retains "
            "(hoodie.cleaner.commits.retained=3)") in clean["reasons"]


def test_the_retained_commits_cover_every_older_version(builder, capsys):
    b = builder()
    for n in range(1, 5):  # inserts only: every commit writes a new file group
        b.commit(ts(n), {P: [base_file(f"f{n}", ts(n))]})
    clean = status(b, capsys, hoodie_cleaner_commits_retained="2")["clean"]
    assert clean["earliest_commit_to_retain"] == ts(3) and clean["files_to_delete"] == 0
    assert (f"nothing to clean: the 2 retained commits cover every older file version (earliest commit "
            f"to retain {ts(3)})") in clean["reasons"]


def test_a_pending_write_holds_the_earliest_commit_to_retain(builder, capsys):
    b = updates(builder(), [ts(1)])
    b.commit(ts(2), {P: [base_file("f2", ts(2))]}, state=State.INFLIGHT)
    updates(b, [ts(3), ts(4), ts(5)])
    report = status(b, capsys, hoodie_cleaner_commits_retained="1")
    clean = report["clean"]
    assert clean["earliest_commit_to_retain"] == ts(1) and clean["files_to_delete"] == 0
    assert clean["blocked"] is True and clean["blocked_since"] == ts(2)
    assert any(r.startswith(f"clean held back by the pending commit {ts(2)} (inflight): the earliest "
                            f"commit to retain stays at {ts(1)} instead of {ts(5)}")
               for r in clean["reasons"])
    [pending] = report["pending"]
    assert (pending["instant"], pending["action"], pending["state"], pending["heartbeat"]) == (
        ts(2), "commit", "INFLIGHT", "none")
    assert pending["age_seconds"] > 0
    assert report["timeline"]["oldest_pending"]["commit"]["instant"] == ts(2)


def test_a_savepoint_keeps_the_only_version_to_clean(builder, capsys):
    b = updates(builder(), [ts(1), ts(2), ts(3)])
    b.savepoint(ts(1) + "5", {P: [base_file("f1", ts(1))]})
    clean = status(b, capsys, hoodie_cleaner_commits_retained="1")["clean"]
    assert clean["files_to_delete"] == 0
    assert f"the savepoints {ts(1)}5 keep every file version they hold" in clean["reasons"]
    without = updates(TableBuilder(b.root.parent / "u"), [ts(1), ts(2), ts(3)])
    assert status(without, capsys, hoodie_cleaner_commits_retained="1")["clean"]["files_to_delete"] == 1


def test_no_file_group_over_the_versions_retained(builder, capsys):
    b = updates(builder(), [ts(1), ts(2)])
    clean = status(b, capsys, hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS",
                   hoodie_cleaner_fileversions_retained="2")["clean"]
    assert clean["files_to_delete"] == 0
    assert ("nothing to clean: no file group has more than the 2 file versions retained "
            "(hoodie.cleaner.fileversions.retained=2)") in clean["reasons"]


def test_no_commit_older_than_the_hours_retained(builder):
    b = updates(builder(), [ts(1), ts(2), ts(3)])
    table = HoodieTable(str(b.root), hoodie_conf={"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS"})
    clean = table.maintenance.status(now=datetime(2024, 1, 1, 5).astimezone()).report.clean
    assert clean.facts["files_to_delete"] == 0
    assert ("nothing to clean: no completed commit is older than the 24 hours the cleaner retains "
            "(hoodie.cleaner.hours.retained=24)") in clean.reasons


def test_files_to_delete_and_bytes_to_reclaim(builder, capsys):
    b = updates(builder(), [ts(1), ts(2), ts(3)])
    b.storage.write(f"{P}/{base_file('f1', ts(1))}", b"x" * 700)
    report = status(b, capsys, hoodie_cleaner_commits_retained="1")
    assert (report["clean"]["files_to_delete"], report["clean"]["bytes_to_reclaim"]) == (1, 700)
    files = report["files"]
    counts = ("partitions", "file_groups", "base_bytes", "small_files")
    assert [files[k] for k in counts] == [1, 1, 1, 1]
    assert files["small_files_by_partition"] == [{"partition": P, "small_files": 1, "file_groups": 1}]


# ------------------------------------------------------------------------------------- archive
ARCHIVE = {"hoodie_keep_min_commits": "5", "hoodie_keep_max_commits": "8",
           "hoodie_cleaner_commits_retained": "3"}


def _commits(b: TableBuilder, n: int, skip=(), action: str = "commit") -> TableBuilder:
    for i in range(n):
        if i not in skip:
            b.commit(ts(i), {P: [base_file(f"f{i}", ts(i))]}, action=action)
    return b


def _archive(b: TableBuilder, capsys, **conf: str) -> dict:
    return status(b, capsys, **{**ARCHIVE, **conf})["archive"]


def test_archive_due_with_nothing_in_its_way(builder, capsys):
    archive = _archive(_commits(builder(), 12), capsys)
    assert archive["due"] and not archive["blocked"] and archive["instants_to_archive"] == 7
    assert archive["reasons"][0] == "archive due: 12 completed commits > hoodie.keep.max.commits=8"


def test_archive_not_due(builder, capsys):
    archive = _archive(_commits(builder(), 6), capsys)
    assert archive["due"] is False
    assert archive["reasons"] == ["archive not due: 6 completed commits <= hoodie.keep.max.commits=8"]


def test_archive_waits_for_the_oldest_pending_write(builder, capsys):
    b = _commits(builder(), 12, skip={2})
    b.commit(ts(2), state=State.INFLIGHT)
    archive = _archive(b, capsys)
    assert archive["blocked"] and archive["blocked_since"] == ts(2)
    assert any(r.startswith(f"archive waits for the oldest pending write: oldest pending instant is "
                            f"[{ts(2)}__commit__INFLIGHT]") for r in archive["reasons"])
    # The pending write also holds the cleaner's earliest commit to retain at ts(1): the keep range widens.
    assert archive["instants_to_archive"] == 0 and archive["keep_min_commits"] == 11
    assert any(r.startswith("archive keeps 11 to 14 commits: ") for r in archive["reasons"])


def test_archive_waits_for_a_savepoint(builder, capsys):
    b = _commits(builder(), 12)
    b.savepoint(ts(1))
    archive = _archive(b, capsys)
    assert archive["blocked_since"] == ts(1) and archive["instants_to_archive"] == 1
    assert (f"archive waits for the savepoint: first savepoint {ts(1)}: nothing at or after it is "
            "archived") in archive["reasons"]


def test_archive_waits_for_the_mor_compaction_fence(builder, capsys):
    b = _commits(builder("MERGE_ON_READ"), 12, action="deltacommit")
    archive = _archive(b, capsys, hoodie_compact_inline_max_delta_commits="10")
    assert archive["blocked_since"] == ts(2) and archive["instants_to_archive"] == 2
    assert any(r.startswith("archive waits for the MOR compaction: keep the last 10 delta commits")
               for r in archive["reasons"])


def test_archive_waits_for_the_clustering_fence(builder, capsys):
    b = _commits(builder(), 12, skip={3})
    b.clustering(ts(3), state=State.COMPLETED)
    archive = _archive(b, capsys)
    assert archive["blocked_since"] == ts(3) and archive["instants_to_archive"] == 3
    assert (f"archive waits for the clustering: no completed clean: first replacecommit {ts(3)} may still "
            "hide replaced files") in archive["reasons"]


def test_archive_waits_for_the_metadata_table(builder, capsys):
    b = _commits(builder(**{"hoodie.table.metadata.partitions": "files"}), 12)
    b.metadata_table([ts(2) + "001"], [ts(i) for i in range(12)])
    archive = _archive(b, capsys, hoodie_metadata_enable="false")
    assert archive["blocked_since"] == ts(2) + "001" and archive["instants_to_archive"] == 3
    assert (f"archive waits for the metadata table: latest metadata-table compaction {ts(2)}001: newer "
            "instants stay") in archive["reasons"]


# ------------------------------------------------------------------------- compaction backlog
def test_mor_compaction_backlog(builder, capsys):
    b = builder("MERGE_ON_READ")
    b.commit(ts(1), {P: [base_file("f1", ts(1)), base_file("f2", ts(1)), base_file("f3", ts(1))]})
    b.commit(ts(2), {P: [log_file("f1", ts(1), 1), log_file("f2", ts(1), 1)]})
    b.commit(ts(3), {P: [log_file("f1", ts(1), 2)]})
    for name, size in ((log_file("f1", ts(1), 1), 100), (log_file("f1", ts(1), 2), 300),
                       (log_file("f2", ts(1), 1), 50)):
        b.storage.write(f"{P}/{name}", b"l" * size)
    backlog = status(b, capsys)["compaction_backlog"]
    assert (backlog["file_groups_with_logs"], backlog["log_files"], backlog["log_bytes"]) == (2, 3, 450)
    assert backlog["log_files_per_file_group"] == {"p50": 1, "max": 2}
    assert backlog["log_bytes_per_file_group"] == {"p50": 50, "max": 400}
    assert (backlog["last_compaction"], backlog["deltacommits_since_compaction"]) == (None, 3)
    b.compaction(ts(4), [(P, "f3", ts(1))])
    assert status(b, capsys)["compaction_backlog"]["pending_compactions"] == [ts(4)]


def test_a_cow_table_has_no_compaction_backlog(builder, capsys):
    assert status(updates(builder(), [ts(1)]), capsys)["compaction_backlog"] is None


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_text_fits_100_columns(builder, capsys, table_type):
    b = _commits(builder(table_type), 12, skip={2}, action="deltacommit" if table_type != "COPY_ON_WRITE"
                 else "commit")
    b.commit(ts(2), state=State.INFLIGHT)
    capsys.readouterr()
    assert main(["status", str(b.root), *[a for k, v in ARCHIVE.items()
                                          for a in ("--hoodie-conf", f"{k.replace('_', '.')}={v}")]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert any(line.startswith("archive: due, blocked since") for line in out)
    assert max(map(len, out)) <= 100
    # A long reason continues under its text, not under a second bullet.
    assert any(line.startswith("      ") for line in out)
    assert not any(line.lstrip().startswith("-  ") for line in out)
