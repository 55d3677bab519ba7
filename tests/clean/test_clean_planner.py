"""CleanPlanner on hand-built tables: each case's expected files follow from the spec (§3, §8)."""

from __future__ import annotations

import logging
import pickle
from datetime import UTC, datetime

import pytest
from support.builders import TableBuilder, base_file, log_file, ts

from hudi_assets.clean import CleanConfig, Cleaner, CleanPlanner
from hudi_assets.clean.plan import CleanFileInfo
from hudi_assets.clean.planner import PartitionDecision
from hudi_assets.config import WriteConfig
from hudi_assets.exceptions import UnsafePlanError
from hudi_assets.fsview import FileSystemView
from hudi_assets.retention import earliest_commit_to_retain, hours_cutoff
from hudi_assets.timeline.instant import State

P = "2024/01/01"
Q = "2024/01/02"


def _config(conf: dict[str, str]) -> CleanConfig:
    return CleanConfig.from_write_config(WriteConfig.load({}, None, conf))


def _plan(b, conf, now=None):
    table = b.table()
    return CleanPlanner(table, _config(conf), now=now).plan()


def _files(plan) -> set[str]:
    return {f.file_path.rpartition("/")[2] for fs in plan.file_paths_to_delete.values() for f in fs}


def _cow_versions(b, n: int, fid: str = "f1", partition: str = P) -> list[str]:
    """n commits, each writing a new version of one file group; returns the base file names."""
    names = []
    for i in range(n):
        name = base_file(fid, ts(i))
        b.commit(ts(i), {partition: [name]})
        names.append(name)
    return names


# ------------------------------------------------------------------------------ KEEP_LATEST_COMMITS
def test_keep_latest_commits_keeps_window_and_one_version_before_ectr(builder):
    b = builder()
    names = _cow_versions(b, 6)
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "2"})
    # ECTR = the oldest of the last 2 completed commits; versions >= ECTR and the newest before stay.
    assert plan.earliest_instant_to_retain.timestamp == ts(4)
    assert plan.earliest_instant_to_retain.state is State.COMPLETED
    assert _files(plan) == set(names[:3])
    assert plan.last_completed_commit_timestamp == ts(5)
    assert plan.partitions_to_delete == []
    assert all(f.file_path.startswith("file:/") for fs in plan.file_paths_to_delete.values() for f in fs)


def test_not_enough_commits_no_ectr(builder):
    b = builder()
    _cow_versions(b, 3)
    assert _plan(b, {"hoodie.cleaner.commits.retained": "3"}).total_files == 0


@pytest.mark.parametrize("pending", ["commit", "compaction", "replacecommit"])
def test_pending_instant_pins_ectr(builder, pending):
    b = builder("MERGE_ON_READ" if pending == "compaction" else "COPY_ON_WRITE")
    base_names = []
    for i in range(8):
        if i == 2:
            if pending == "compaction":
                b.compaction(ts(i), [(Q, "g1", ts(0))])
            else:
                b.commit(ts(i), {Q: []}, action=pending, state=State.INFLIGHT)
            continue
        name = base_file("f1", ts(i))
        b.commit(ts(i), {P: [name]}, action="commit")
        base_names.append(name)
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "2"})
    # The candidate ts(6) is after the pending ts(2): ECTR = latest completed before it, ts(1).
    assert plan.earliest_instant_to_retain.timestamp == ts(1)
    # Only ts(0) is older than ECTR, and it is the newest version before ECTR: nothing to delete.
    assert plan.total_files == 0


def test_pending_compaction_slices_kept_even_before_ectr(builder):
    b = builder("MERGE_ON_READ")
    base0, log0 = base_file("f1", ts(0)), log_file("f1", ts(0))
    b.commit(ts(0), {P: [base0]})
    b.commit(ts(1), {P: [log0]})
    b.compaction(ts(2), [(P, "f1", ts(0))])  # pending, pins ECTR at ts(1)
    other = [base_file("f2", ts(i)) for i in (3, 4, 5)]
    for i, name in zip((3, 4, 5), other, strict=True):
        b.commit(ts(i), {Q: [name]}, action="commit")
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "1"})
    assert plan.earliest_instant_to_retain.timestamp == ts(1)
    # f1's slice ts(0) is needed by the compaction; the empty compaction slice is f1's latest.
    assert _files(plan) == set()


# --------------------------------------------------------------------------------- BY_HOURS
def test_by_hours_no_recent_commit_cleans_nothing(builder):
    b = builder()
    _cow_versions(b, 5)
    now = datetime(2030, 1, 1, tzinfo=UTC)
    plan = _plan(b, {"hoodie.cleaner.hours.retained": "1"}, now=now)
    assert plan.policy == "KEEP_LATEST_BY_HOURS"
    assert plan.earliest_instant_to_retain is None and plan.total_files == 0


def test_by_hours_cutoff_in_process_zone_keeps_version_before(builder, monkeypatch):
    b = builder()
    names = _cow_versions(b, 6)  # ts(0)..ts(5): one minute apart
    # A "now" so that the cutoff falls at ts(3) in local time.
    local_ts3 = datetime(2024, 1, 1, 0, 3).astimezone()
    from datetime import timedelta
    now = local_ts3 + timedelta(hours=1)
    assert hours_cutoff(1, now) == ts(3)
    plan = _plan(b, {"hoodie.cleaner.hours.retained": "1"}, now=now)
    assert plan.earliest_instant_to_retain.timestamp == ts(3)
    assert _files(plan) == set(names[:2])  # ts(2) is the newest version before ECTR (0.14.1+)


# ------------------------------------------------------------------------------ FILE_VERSIONS
def test_file_versions_keeps_count(builder):
    b = builder()
    names = _cow_versions(b, 5)
    plan = _plan(b, {"hoodie.cleaner.fileversions.retained": "2"})
    assert plan.policy == "KEEP_LATEST_FILE_VERSIONS" and plan.earliest_instant_to_retain is None
    assert _files(plan) == set(names[:3])


def test_file_versions_keep_minus_one_under_pending_compaction(builder):
    b = builder("MERGE_ON_READ")
    b.commit(ts(0), {P: [base_file("f1", ts(0))]})
    b.commit(ts(1), {P: [log_file("f1", ts(0))]}, action="commit")
    for i in (2, 3, 4):  # three compacted versions of f1
        b.commit(ts(i), {P: [base_file("f1", ts(i))]}, action="commit")
    b.compaction(ts(5), [(P, "f1", ts(4))])
    plan = _plan(b, {"hoodie.cleaner.fileversions.retained": "2"})
    # Needed by the compaction: ts(4) and the empty ts(5) slice; keep 2-1 = 1 more (ts(3)).
    assert _files(plan) == {base_file("f1", ts(0)), log_file("f1", ts(0)), base_file("f1", ts(2))}


# -------------------------------------------------------------------------- replaced / savepoint
def test_replaced_groups_before_and_after_ectr(builder):
    b = builder()
    old = base_file("old", ts(0))
    b.commit(ts(0), {P: [old], Q: [base_file("q0", ts(0))]})
    new = base_file("new", ts(1))
    b.commit(ts(1), {P: [new]}, replaced={P: ["old"]})
    for i in range(2, 6):
        b.commit(ts(i), {Q: [base_file("q0", ts(i))]})
    later = base_file("later", ts(6))
    b.commit(ts(6), {Q: [later]}, replaced={Q: ["q0"]})
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "3"})  # ECTR ts(4)
    assert plan.earliest_instant_to_retain.timestamp == ts(4)
    # P: "old" replaced at ts(1) < ECTR -> deleted. Q: q0 replaced at ts(6) >= ECTR is neither
    # live nor replaced-before-ECTR: none of its versions is touched yet.
    assert _files(plan) == {old}
    versions = _plan(b, {"hoodie.cleaner.fileversions.retained": "3"})
    # FILE_VERSIONS: every replaced group, whatever its replace time.
    assert _files(versions) == {old} | {base_file("q0", ts(i)) for i in (0, 2, 3, 4, 5)}


def test_partition_with_only_replaced_groups_is_deleted(builder):
    b = builder()
    old = base_file("old", ts(0))
    b.commit(ts(0), {P: [old]})
    b.commit(ts(1), {Q: []}, replaced={P: ["old"]})  # delete_partition
    for i in range(2, 5):
        b.commit(ts(i), {Q: [base_file("q", ts(i))]})
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "2"})
    assert _files(plan) == {old}  # q: ts(2) is the newest version before ECTR ts(3)
    assert plan.partitions_to_delete == [P]


def test_savepointed_slices_kept(builder):
    b = builder()
    names = _cow_versions(b, 6)
    b.savepoint(ts(1), {P: [names[1]]})
    old = base_file("old", ts(0))
    b.files(P, old)  # fake: a replaced group holding a savepointed file
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "2"})
    assert _files(plan) == {names[0], names[2]}
    assert plan.extra_metadata == {"savepointed_timestamps": ts(1)}


def test_failed_write_files_are_invisible(builder):
    b = builder()
    names = _cow_versions(b, 4)
    failed = base_file("f1", ts(9))
    b.commit(ts(9), {P: [failed]}, state=State.INFLIGHT)
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "1"})
    # The failed write pins ECTR to ts(3) (last completed before it): ts(3) latest, ts(2) kept.
    assert plan.earliest_instant_to_retain.timestamp == ts(3)
    assert _files(plan) == set(names[:2])


# -------------------------------------------------------------------------------- incremental
def test_incremental_window_is_previous_ectr_inclusive_to_new_exclusive(builder):
    b = builder()
    b.commit(ts(0), {P: [base_file("p", ts(0))], Q: [base_file("q", ts(0))]})
    b.commit(ts(1), {Q: [base_file("q", ts(1))]})
    b.commit(ts(2), {P: [base_file("p", ts(2))]})
    for i in range(3, 7):
        b.commit(ts(i), {Q: [base_file("q", ts(i))]})
    b.clean(ts(7), ts(2))
    table = b.table()
    planner = CleanPlanner(table, _config({"hoodie.cleaner.commits.retained": "2"}))
    ectr = planner.earliest_commit_to_retain()
    assert ectr.timestamp == ts(5)
    # [ts(2), ts(5)): ts(2) touched P, ts(3), ts(4) touched Q.
    assert planner.partitions_to_clean(ectr) == [P, Q]
    b2 = CleanPlanner(table, _config({"hoodie.cleaner.commits.retained": "4"}))
    e2 = b2.earliest_commit_to_retain()
    assert e2.timestamp == ts(3)
    assert b2.partitions_to_clean(e2) == [P]  # only ts(2) in [ts(2), ts(3))


def test_incremental_falls_back_to_full(builder):
    b = builder()
    for i in range(5):
        b.commit(ts(i), {P: [base_file("p", ts(i))], Q: [base_file("q", ts(i))]} if i == 0
                 else {Q: [base_file("q", ts(i))]})
    # previous ECTR before the first active commit (archived): full listing
    b.clean(ts(5), "20231231000000000")
    planner = CleanPlanner(b.table(), _config({"hoodie.cleaner.commits.retained": "2"}))
    # full listing: Hudi's order is the file system's (directory order locally)
    assert sorted(planner.partitions_to_clean(planner.earliest_commit_to_retain())) == [P, Q]
    off = CleanPlanner(b.table(), _config({"hoodie.cleaner.commits.retained": "2",
                                            "hoodie.cleaner.incremental.mode": "false"}))
    assert sorted(off.partitions_to_clean(off.earliest_commit_to_retain())) == [P, Q]


def test_empty_last_clean_forces_full_and_is_deleted(builder):
    b = builder()
    names = _cow_versions(b, 5)
    b.clean(ts(5), ts(3), empty=True)
    table = b.table()
    cleaner = Cleaner(table, _config({"hoodie.cleaner.commits.retained": "2"}))
    plan = cleaner.plan()
    instant = cleaner.request(plan)
    assert _files(plan) == set(names[:2])
    assert not table.storage.exists(f".hoodie/{ts(5)}.clean")
    assert table.storage.exists(f".hoodie/{ts(5)}.clean.requested")
    assert instant is not None and instant > ts(5)


def test_a_metadata_tables_plan_is_requested_at_its_writers_instant_time(tmp_path):
    """The metadata table's writer cleans at its latest deltacommit + `002`, not at a new time."""
    b = TableBuilder(tmp_path / "t" / ".hoodie" / "metadata", "MERGE_ON_READ")
    names = _cow_versions(b, 5)
    table = b.table()
    cleaner = Cleaner(table, _config({"hoodie.cleaner.commits.retained": "2"}))
    at = ts(4) + "002"
    assert cleaner.request(cleaner.plan()) == at
    assert table.storage.exists(f".hoodie/{at}.clean.requested")
    assert _files(cleaner.pending()[0].plan) == set(names[:2])


def test_removed_savepoint_adds_its_partitions(builder):
    b = builder()
    b.commit(ts(0), {P: [base_file("p", ts(0))]})
    b.commit(ts(1), {P: [base_file("p", ts(1))]})
    for i in range(2, 7):
        b.commit(ts(i), {Q: [base_file("q", ts(i))]})
    # The last clean (ECTR ts(4)) saw a savepoint of ts(1) which is gone now.
    b.clean(ts(7), ts(4), savepoints=ts(1))
    planner = CleanPlanner(b.table(), _config({"hoodie.cleaner.commits.retained": "1"}))
    ectr = planner.earliest_commit_to_retain()
    assert ectr.timestamp == ts(6)
    assert planner.partitions_to_clean(ectr) == [Q, P]


def test_plan_with_no_file_writes_no_instant(builder):
    b = builder()
    _cow_versions(b, 2)
    table = b.table()
    result = Cleaner(table, _config({"hoodie.cleaner.commits.retained": "1"})).clean()
    assert result.completed == {} and result.scheduled is None
    assert not [s for s in table.storage.list(".hoodie") if "clean" in s.name]


def test_ectr_function_orders_candidate_against_pending(builder):
    b = builder()
    _cow_versions(b, 4)
    table = b.table()
    config = _config({"hoodie.cleaner.commits.retained": "2"})
    ectr = earliest_commit_to_retain(table.active_timeline.commits_and_compaction_timeline(), config)
    assert ectr.timestamp == ts(2)


# ------------------------------------------------------------------- Hudi 0.15 details, by file
def test_partition_whose_metafile_has_the_base_file_format_is_cleaned(builder):
    b = builder()
    names = _cow_versions(b, 4)
    # hoodie.partition.metafile.use.base.format=true writes the metafile as a parquet file.
    metafile = b.root / P / ".hoodie_partition_metadata"
    metafile.rename(metafile.with_name(".hoodie_partition_metadata.parquet"))
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "1"})
    assert _files(plan) == set(names[:2])


def test_hadoop_checksum_files_are_not_file_groups(builder):
    b = builder("MERGE_ON_READ")
    logs = []
    for i in range(4):
        log = log_file("f1", ts(0), i + 1)
        b.commit(ts(i), {P: [base_file("f1", ts(0))] if i == 0 else [log]})
        logs.append(log)
    for name in [base_file("f1", ts(0)), *logs[1:]]:  # Hadoop's LocalFileSystem writes .<name>.crc
        (b.root / P / f".{name}.crc").write_bytes(b"crc")
    table = b.table()
    groups = FileSystemView(table).all_file_groups(P)
    assert [g.file_id for g in groups] == ["f1"]
    plan = _plan(b, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                     "hoodie.cleaner.fileversions.retained": "1"})
    assert plan.total_files == 0  # one slice, no phantom group ".f1" of checksum files


def test_replace_of_a_group_no_longer_listed_does_not_keep_the_partition(builder):
    b = builder()
    old = base_file("old", ts(0))
    b.commit(ts(0), {P: [old]})
    b.commit(ts(1), {Q: []}, replaced={P: ["old"]})
    for i in range(2, 6):
        b.commit(ts(i), {Q: [base_file("q", ts(i))]})
    # A replace at ECTR of a file group of P that has no file (already gone): Hudi's view does not
    # hold it, so noSubsequentReplaceCommit stays true.
    b.commit(ts(6), {Q: [base_file("q", ts(6))]}, replaced={P: ["gone"]})
    b.commit(ts(7), {Q: [base_file("q", ts(7))]})
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "2"})
    assert plan.earliest_instant_to_retain.timestamp == ts(6)
    assert old in _files(plan) and plan.partitions_to_delete == [P]


def test_plan_file_holds_maps_and_lists_in_hudis_order(builder):
    """Expected orders come from running CleanPlanActionExecutor's collection code on Java 17:
    batches of hoodie.cleaner.parallelism partitions, each collected with Collectors.toMap, its
    partitions to delete appended, its partitions with files putAll into one new HashMap."""
    from hudi_assets.avro import deserialize_metadata

    b = builder()
    parts = ["dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-03", "dt=2024-01-08"]
    b.commit(ts(0), {p: [base_file(f"g{n}", ts(0))] for n, p in enumerate(parts)})
    b.clean(ts(1), ts(0))  # incremental: partitions in commit order
    b.commit(ts(2), {"q": [base_file("q", ts(2))]}, replaced={p: [f"g{n}"] for n, p in enumerate(parts)})
    for i in range(3, 7):
        b.commit(ts(i), {"q": [base_file("q", ts(i))]})
    table = b.table()
    conf = {"hoodie.cleaner.commits.retained": "2", "hoodie.cleaner.parallelism": "2"}
    cleaner = Cleaner(table, _config(conf))
    plan = cleaner.plan()
    instant = cleaner.request(plan)
    record = deserialize_metadata(table.storage.read(f".hoodie/{instant}.clean.requested"),
                                  "HoodieCleanerPlan", "plan")
    assert list(record["filePathsToBeDeletedPerPartition"]) == [
        "dt=2024-01-01", "dt=2024-01-08", "q", "dt=2024-01-03", "dt=2024-01-02"]
    assert record["partitionsToBeDeleted"] == parts
    assert record["extraMetadata"] == {} and record["filesToBeDeletedPerPartition"] == {}


def test_files_of_a_partition_come_in_the_order_of_hudis_file_group_set(builder):
    b = builder()
    ids = ["f1", "f2", "f3", "f4", "f5"]
    for i in range(3):
        b.commit(ts(i), {P: [base_file(f, ts(i)) for f in ids]})
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "1"})
    # new HashSet<>(Pair(partition, fileId)...) on Java 17 iterates f1, f4, f5, f2, f3.
    assert [f.file_path.rpartition("/")[2] for f in plan.file_paths_to_delete[P]] == [
        base_file(f, ts(0)) for f in ["f1", "f4", "f5", "f2", "f3"]]


def test_savepointed_timestamps_join_in_hash_set_order(builder):
    b = builder()
    names = _cow_versions(b, 6)
    b.savepoint(ts(0), {P: [names[0]]})
    b.savepoint(ts(3), {P: [names[3]]})
    plan = _plan(b, {"hoodie.cleaner.commits.retained": "2"})
    # HoodieTable.getSavepointTimestamps is a HashSet: Java 17 iterates ts(3) before ts(0).
    assert plan.extra_metadata == {"savepointed_timestamps": f"{ts(3)},{ts(0)}"}


@pytest.mark.parametrize("decision", [
    PartitionDecision(P, False, ["a_1-0-1_001.parquet", ".a_001.log.1_1-0-1"], [7, 2**40]),
    PartitionDecision(P, True, []),
    PartitionDecision("", False, ["", "x"], None),
    PartitionDecision(P, False, ["not/a/name", "y"], [1, 2]),  # a '/' in a name: pickled as it is
])
def test_a_decision_comes_back_from_a_worker_as_it_was_sent(decision):
    """Workers send decisions compact (names joined, sizes as one array); the driver gets lists again."""
    back = pickle.loads(pickle.dumps(decision, pickle.HIGHEST_PROTOCOL))
    assert back == decision
    assert all(type(name) is str for name in back.files)
    assert back.file_sizes is None or all(type(size) is int for size in back.file_sizes)


def test_empty_last_clean_and_the_pending_clean_it_becomes_go_in_one_run(builder, caplog):
    """Hudi 0.15's TestCleaner#testCleanEmptyInstants: the schedule step deletes the empty `.clean`,
    and the same run's execute step deletes the then-pending clean's empty inflight file (before,
    that waited for the next run, and the log named the requested file)."""
    b = builder()
    for n in range(1, 4):
        b.commit(ts(n), {P: [base_file(f"f{n}", ts(n))]})  # new file groups only: nothing to plan
    for name in (f"{ts(4)}.clean.requested", f"{ts(4)}.clean.inflight", f"{ts(4)}.clean"):
        b.state_file(name)
    caplog.set_level(logging.WARNING, "hudi_assets.clean.cleaner")
    result = Cleaner(b.table(), _config({"hoodie.cleaner.commits.retained": "1"})).clean()
    assert result.scheduled is None and result.executed == []
    hoodie = b.root / ".hoodie"
    assert [p.name for p in hoodie.glob(f"{ts(4)}.clean*")] == [f"{ts(4)}.clean.requested"]
    [line] = caplog.messages
    assert line.startswith("empty clean state file")
    assert line.endswith(f"{hoodie}/{ts(4)}.clean.inflight: deleted")


def test_refused_new_plan_leaves_the_empty_last_clean_in_place(builder):
    """The empty last clean is deleted only once the new plan passed validation: a refusal comes
    before the first delete."""
    b = builder()
    names = _cow_versions(b, 5)
    b.clean(ts(5), ts(3), empty=True)
    table = b.table()
    config = _config({"hoodie.cleaner.commits.retained": "2"})
    cleaner = Cleaner(table, config)
    plan = cleaner.plan()
    plan.file_paths_to_delete[P].append(CleanFileInfo(table.storage.uri(f"{P}/{names[-1]}")))  # latest
    with pytest.raises(UnsafePlanError):
        cleaner.request(plan)
    assert table.storage.exists(f".hoodie/{ts(5)}.clean")
    assert cleaner.request(cleaner.plan())
    assert not table.storage.exists(f".hoodie/{ts(5)}.clean")
