"""Orphan files: the dry run names exactly the orphans of a corpus holding every kind of orphan and
every kind of file that must survive; quarantine then undo restores the table byte for byte."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

import pytest

from hudi_assets.archive.archiver import HoodieTimelineArchiver
from hudi_assets.archive.config import ArchiveConfig
from hudi_assets.avro import serialize_metadata
from hudi_assets.clean.config import CleanConfig
from hudi_assets.engine import LocalEngine
from hudi_assets.exceptions import HudiInputError, InvalidConfigError
from hudi_assets.heartbeat import heartbeat_path
from hudi_assets.ownership import load_ownership
from hudi_assets.repair import OrphanConfig, OrphanFileRepair, parse_duration
from hudi_assets.repair.detection import changed_since
from hudi_assets.repair.quarantine import MOVED, read_manifest, run_folder
from hudi_assets.rollback import Rollbacker
from hudi_assets.rollback.markers import marker_dir
from hudi_assets.timeline.instant import Instant, State
from tests.support.builders import TableBuilder, base_file, log_file, ts

LATER = 30 * 86400  # the clock of a run: a month after the files were written


def clock(offset: float = LATER):
    return lambda: time.time() + offset


def repair(table, clock_offset: float = LATER, **config) -> OrphanFileRepair:
    return OrphanFileRepair(table, OrphanConfig(**config), LocalEngine(), clock(clock_offset))


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the base path outside .hoodie/.aux/hudi-assets (ours), with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".aux/hudi-assets" not in str(p)}


def archived_cow(root: Path) -> TableBuilder:
    """40 commits and 12 cleans, archived down to ts(30).."""
    b = TableBuilder(root).archivable()
    config = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3))
    HoodieTimelineArchiver(b.table(), config).archive()
    return b


@pytest.fixture
def corpus(tmp_path) -> tuple[TableBuilder, set[str], set[str]]:
    """(builder, the orphans, the candidates a guard keeps) over a COW table with an archive."""
    b = archived_cow(tmp_path / "t")
    assert b.table().active_timeline.first().timestamp > ts(5)  # ts(5) was archived
    orphans = set(b.files("p1",
                          "f-x_1-9-9_" + ts(5) + ".parquet",     # speculative extra of an archived commit
                          "f-y_1-9-9_" + ts(35) + ".parquet",    # speculative extra of an active commit
                          base_file("failed", ts(36) + "1"),    # a failed write rolled back and archived
                          f".{base_file('failed', ts(36) + '1')}.crc",  # its Hadoop checksum
                          base_file("gone", ts(300))))          # an instant on neither timeline
    b.write({f"p1/{base_file('zero', ts(301))}": b""})         # a zero-byte parquet file
    orphans.add(f"p1/{base_file('zero', ts(301))}")
    kept = set(b.files("p1", base_file("live", ts(302)), base_file("young", ts(303)),
                       f".{base_file('young', ts(303))}.crc",  # old, but its file is kept
                       base_file("saved", ts(304)), base_file("halfrb", ts(307))))
    # A half-done rollback of a failed write whose instant files are gone: its plan still names the file.
    request = {"partitionPath": "p1", "fileId": "halfrb", "latestBaseInstant": ts(307),
               "logBlocksToBeDeleted": {}, "filesToBeDeleted": [f"p1/{base_file('halfrb', ts(307))}"]}
    b.state_file(Instant(ts(308), "rollback", State.REQUESTED).file_name, serialize_metadata(
        "HoodieRollbackPlan", {"instantToRollback": {"commitTime": ts(307), "action": "commit"},
                               "RollbackRequests": [request], "version": 1}))
    b.state_file(Instant(ts(308), "rollback", State.INFLIGHT).file_name)
    b.state_file(heartbeat_path(ts(302)).removeprefix(".hoodie/"))
    os.utime(b.root / heartbeat_path(ts(302)), (time.time() + LATER,) * 2)
    os.utime(b.root / "p1" / base_file("young", ts(303)), (time.time() + LATER,) * 2)
    b.savepoint(ts(305), {"p1": [base_file("saved", ts(304))]})
    b.commit(ts(306), state=State.INFLIGHT)                    # a live writer: pending, skipped
    b.files("p1", f".{base_file(f'f-{ts(35)}', ts(35))}.crc")  # a checksum of a committed file
    return b, orphans, kept


def test_the_dry_run_names_exactly_the_orphans(corpus):
    b, orphans, kept = corpus
    before = snapshot(b.root)
    result = repair(b.table()).plan()
    assert result.dry_run
    assert {o.path for o in result.orphans} == orphans
    assert {k.path for k in result.kept} == kept
    assert snapshot(b.root) == before
    reasons = {o.path: o.reason for o in result.orphans}
    assert "not listed by the completed commit" in reasons[f"p1/f-x_1-9-9_{ts(5)}.parquet"]
    assert "neither timeline" in reasons[f"p1/{base_file('gone', ts(300))}"]
    why = {k.path.rpartition("/")[2]: k.reason for k in result.kept}
    assert "live heartbeat" in why[base_file("live", ts(302))]
    assert "minimum age" in why[base_file("young", ts(303))]
    assert why[f".{base_file('young', ts(303))}.crc"] == "the file it guards is kept"
    assert "savepoint" in why[base_file("saved", ts(304))]
    assert "pending plan" in why[base_file("halfrb", ts(307))]
    assert result.by_partition_instant()[("p1", ts(301))] == (1, 0)


def test_quarantine_then_undo_restores_the_table_byte_for_byte(corpus):
    b, orphans, _ = corpus
    before = snapshot(b.root)
    done = repair(b.table()).quarantine()
    assert not done.dry_run and done.run
    for path in orphans:
        assert not (b.root / path).exists()
        assert (b.root / run_folder(done.run) / path).exists()
    assert {o.path for o in read_manifest(b.storage, done.run)} == orphans
    assert repair(b.table()).plan().orphans == ()
    undone = repair(b.table()).undo(done.run)
    assert set(undone.restored) == orphans
    assert snapshot(b.root) == before
    assert not (b.root / run_folder(done.run)).exists()


def test_delete_removes_the_orphans_and_nothing_else(corpus):
    b, orphans, _ = corpus
    before = snapshot(b.root)
    done = repair(b.table()).delete()
    assert done.deleted and done.run is None
    assert snapshot(b.root) == {p: d for p, d in before.items() if p not in orphans}


def test_purge_deletes_only_runs_older_than_the_cutoff(corpus):
    b, orphans, _ = corpus
    run = repair(b.table()).quarantine().run
    assert repair(b.table()).purge(timedelta(days=60)).runs == ()
    purged = repair(b.table(), clock_offset=LATER + 61 * 86400).purge(timedelta(days=60))
    assert purged.runs == (run,) and purged.files == len(orphans)
    assert not (b.root / run_folder(run)).exists()


def test_a_quarantine_killed_half_way_is_finished_by_the_next_run(corpus):
    b, orphans, _ = corpus
    before = snapshot(b.root)
    service = repair(b.table())
    found = service.plan()
    # What a kill between the manifest and the moves leaves: the manifest, one file moved.
    from hudi_assets.repair.quarantine import move_all, quarantined_path, write_manifest
    write_manifest(b.storage, "20240301000000000", found.orphans)
    first = found.orphans[0].path
    move_all(b.storage, [(first, quarantined_path("20240301000000000", first))])
    assert service.resume() == ["20240301000000000"]
    assert (b.root / run_folder("20240301000000000") / MOVED).exists()
    assert not any((b.root / p).exists() for p in orphans)
    repair(b.table()).undo("20240301000000000")
    assert snapshot(b.root) == before


def test_a_write_that_completes_or_starts_during_the_run_keeps_its_files(corpus):
    b, _, _ = corpus
    table = b.table()
    ownership = load_ownership(table)
    found = repair(table).plan()
    late = f"p1/{base_file('gone', ts(300))}"
    # A writer completes a commit listing one candidate and starts another on a candidate's instant.
    b.commit(ts(400), {"p1": [base_file("gone", ts(300))]})
    b.commit(ts(301), state=State.REQUESTED)
    changed = changed_since(table, ownership, found.orphans)
    assert set(changed) == {late, f"p1/{base_file('zero', ts(301))}"}
    assert "completed during the run" in changed[late]


def test_too_many_orphans_refuse_the_run(corpus):
    b, orphans, _ = corpus
    with pytest.raises(HudiInputError, match=f"{len(orphans)} orphan files found, more than the maximum"):
        repair(b.table(), max_orphans=2).quarantine()
    assert all((b.root / p).exists() for p in orphans)


def test_a_file_older_than_both_timelines_refuses_the_run(corpus):
    b, orphans, _ = corpus
    b.files("p1", base_file("ancient", "20200101000000000"))
    with pytest.raises(HudiInputError, match="older than every instant"):
        repair(b.table()).quarantine()
    assert all((b.root / p).exists() for p in orphans)


def test_a_missing_archive_refuses_the_run(tmp_path):
    b = TableBuilder(tmp_path / "t").commit(ts(1))
    with pytest.raises(HudiInputError, match="archived timeline is missing"):
        repair(b.table()).plan()


def test_mor_log_files_written_after_their_base_instant_are_owned(tmp_path):
    b = TableBuilder(tmp_path / "t", "MERGE_ON_READ")
    b.storage.mkdirs(".hoodie/archived")
    b.commit(ts(1), {"p1": [base_file("a", ts(1))]})
    b.commit(ts(2), {"p1": [log_file("a", ts(1))]})               # a deltacommit's log of slice ts(1)
    orphan = b.files("p1", log_file("a", ts(1), 2))                # no deltacommit lists it
    planned = b.files("p1", log_file("a", ts(1), 3))               # a pending compaction plans it
    plan = {"operations": [{"baseInstantTime": ts(1), "deltaFilePaths": [log_file("a", ts(1), 3)],
                            "dataFilePath": None, "fileId": "a", "partitionPath": "p1", "metrics": {},
                            "bootstrapFilePath": None}],
            "extraMetadata": None, "version": 2, "strategy": None, "preserveHoodieMetadata": False}
    b.state_file(Instant(ts(3), "compaction", State.REQUESTED).file_name,
                 serialize_metadata("HoodieCompactionPlan", plan))
    result = repair(b.table()).plan()
    assert [o.path for o in result.orphans] == orphan
    assert [k.path for k in result.kept] == planned


def test_a_pending_deltacommit_may_own_a_log_file(tmp_path):
    b = TableBuilder(tmp_path / "t", "MERGE_ON_READ")
    b.storage.mkdirs(".hoodie/archived")
    b.commit(ts(1), {"p1": [base_file("a", ts(1))]})
    b.commit(ts(2), state=State.INFLIGHT)
    appended = b.files("p1", log_file("a", ts(1)))
    result = repair(b.table()).plan()
    assert result.orphans == () and [k.path for k in result.kept] == appended


def test_files_the_metadata_table_lists_are_kept(tmp_path):
    """A commit removed from the timeline while the metadata table still lists its file (a rollback
    that died before its metadata-table update): the metadata table's readers still read it."""
    b = TableBuilder(tmp_path / "t").commit(ts(1)).commit(ts(2), {"p1": [base_file("listed", ts(2))]})
    b.storage.mkdirs(".hoodie/archived")
    b.metadata_table_from_storage()
    for state in State:
        (b.root / ".hoodie" / Instant(ts(2), "commit", state).file_name).unlink()
    listed = [f"p1/{base_file('listed', ts(2))}"]
    result = repair(b.table()).plan()
    assert result.orphans == ()
    assert [(k.path, k.reason) for k in result.kept] == [(listed[0], "the metadata table lists it")]


def test_min_age_is_refused_below_the_heartbeat_expiry_and_the_retained_hours(tmp_path):
    table = TableBuilder(tmp_path / "t", props={"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS",
                                                "hoodie.cleaner.hours.retained": "48"}).table()
    with pytest.raises(InvalidConfigError, match="heartbeat expiry"):
        OrphanConfig.from_write_config(table.write_config, parse_duration("1m"))
    with pytest.raises(InvalidConfigError, match=r"hours\.retained"):
        OrphanConfig.from_write_config(table.write_config, parse_duration("36h"))
    config = OrphanConfig.from_write_config(table.write_config, parse_duration("3d"))
    assert config.min_age == timedelta(days=3)
    with pytest.raises(InvalidConfigError, match="expected a number and a unit"):
        parse_duration("7 days")


def test_log_files_a_completed_rollback_names_stay_together(tmp_path):
    """A failed deltacommit's log file and the rollback's command block in the same slice: readers
    skip the failed block because of the command block, so neither may go without the other."""
    b = TableBuilder(tmp_path / "t", "MERGE_ON_READ")
    b.storage.mkdirs(".hoodie/archived")
    b.commit(ts(1), {"p1": [base_file("a", ts(1))]})
    failed, command = b.files("p1", log_file("a", ts(1), 1), log_file("a", ts(1), 2))
    partition = {"partitionPath": "p1", "successDeleteFiles": [], "failedDeleteFiles": [],
                 "rollbackLogFiles": {f"{b.root}/{command}": 1},
                 "logFilesFromFailedCommit": {f"{b.root}/{failed}": 1}}
    b.state_file(Instant(ts(3), "rollback", State.REQUESTED).file_name)
    b.state_file(Instant(ts(3), "rollback", State.INFLIGHT).file_name)
    b.state_file(Instant(ts(3), "rollback").file_name, serialize_metadata("HoodieRollbackMetadata", {
        "startRollbackTime": ts(3), "timeTakenInMillis": 3, "totalFilesDeleted": 0,
        "commitsRollback": [ts(2)], "partitionMetadata": {"p1": partition}, "version": 1,
        "instantsRollback": [{"commitTime": ts(2), "action": "deltacommit"}]}))
    orphan = b.files("p1", log_file("a", ts(1), 3))
    assert [o.path for o in repair(b.table()).plan().orphans] == orphan


def test_an_unreadable_archive_refuses_the_run(corpus):
    b, orphans, _ = corpus
    (archive,) = (b.root / ".hoodie" / "archived").glob(".commits_.archive.*")
    archive.write_bytes(b"not a log file" * 100)
    with pytest.raises(HudiInputError, match="archived timeline is unreadable"):
        repair(b.table()).quarantine()
    assert all((b.root / p).exists() for p in orphans)


def test_a_failed_append_its_rollback_does_not_name_is_an_orphan(tmp_path):
    """The live-writer soak's unplanted file. An APPEND marker naming the slice's base file (as 0.x
    append handles wrote them before HUDI-1517) is rolled back, as Hudi 0.15 does, by logging out the
    slice's *latest* log file. When a later deltacommit appended to the slice before the (LAZY)
    rollback ran, that is the later commit's file: the failed write's own log file is named by no
    commit and no rollback. Its only block belongs to the rolled-back instant (readers skip it, and
    the command block voids it by instant), so it is an orphan, and the committed files stay."""
    b = TableBuilder(tmp_path / "t", "MERGE_ON_READ")
    b.storage.mkdirs(".hoodie/archived")
    b.commit(ts(1), {"p1": [base_file("a", ts(1))]})
    b.commit(ts(2), {"p1": []}, state=State.INFLIGHT)           # killed after its append
    failed = b.files("p1", log_file("a", ts(1), 1))
    b.storage.write(f"{marker_dir(ts(2))}/p1/{base_file('a', ts(1))}.marker.APPEND", b"")
    b.commit(ts(3), {"p1": [log_file("a", ts(1), 2)]})          # appends to the slice, completes
    [done] = Rollbacker(b.table()).rollback(ts(2), force=True).executed
    [command] = [p.relative_to(b.root).as_posix() for p in (b.root / "p1").glob(".a_*.log.3_1-0-1")]
    meta = load_ownership(b.table())
    assert f"p1/{log_file('a', ts(1), 2)}" in meta.owned and command in meta.owned
    assert failed[0] not in meta.owned, f"the rollback {done.rollback_instant} names the failed write's file"
    result = repair(b.table()).plan()
    assert [o.path for o in result.orphans] == failed and result.kept == ()
    assert "no completed write or rollback lists this log file" in result.orphans[0].reason
