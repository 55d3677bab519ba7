"""Hostile pending plans: whoever wrote them, none may delete a file a reader still needs.

Each case takes the plan Hudi's rules would write for a demo table, turns it into one that would
lose data, leaves it pending as `<t>.clean.requested`, and runs `hudi-assets clean`: exit 2 naming
the plan file and the offending path, no file deleted anywhere (outside the table included), and
hudi-rs reads the same rows latest and as of the savepoint. The library returns the same verdict.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.builders import base_file, pending_clean, ts
from support.failed_tables import read_rows

from hudi_assets.avro import serialize_metadata
from hudi_assets.clean import CleanConfig, Cleaner, CleanPlanner
from hudi_assets.clean.plan import CleanerPlan, CleanFileInfo
from hudi_assets.cli import main
from hudi_assets.config import WriteConfig
from hudi_assets.demo import generate_table
from hudi_assets.fsview import FileSystemView
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant_time import new_instant_time

PARTITIONS = ["2024/01/01", "2024/01/02", "2024/02/01"]
RETAIN = {"hoodie.cleaner.commits.retained": "3"}


@dataclass
class Case:
    table: HoodieTable
    demo: object
    plan: CleanerPlan
    view: FileSystemView
    outside: Path

    def uri(self, rel: str) -> str:
        return self.table.storage.uri(rel)

    def add(self, rel: str) -> str:
        """Plan the file `rel` (relative) under its own partition; returns its full path."""
        partition = rel.rpartition("/")[0]
        self.plan.file_paths_to_delete.setdefault(partition, []).append(CleanFileInfo(self.uri(rel)))
        return self.uri(rel)

    def planned(self) -> list[str]:
        return [self.table.storage.relativize(f.file_path)
                for files in self.plan.file_paths_to_delete.values() for f in files]

    def slices(self):
        """(partition, committed slices newest first) of every live file group."""
        replaced = self.view.replaced_file_groups
        for partition in self.view.partitions:
            for group in self.view.all_file_groups(partition):
                if (partition, group.file_id) not in replaced:
                    yield partition, [s for s in group.sorted_slices() if s.file_names]


def _latest_slice(case: Case) -> str:
    protected = case.view.savepointed_files | case.view.pending_plan_files
    for _, slices in case.slices():
        name = slices[0].paths[0]
        if name.rpartition("/")[2] not in protected:
            return case.add(name)
    raise AssertionError("no latest slice")


def _savepointed(case: Case) -> str:
    partition, names = next(iter(case.demo.savepointed_files.items()))
    return case.add(f"{partition}/{names[0]}")


def _read_by_compaction(case: Case) -> str:
    name = sorted(case.view.pending_plan_files - case.view.savepointed_files)[0]
    partition = next(p for p in case.view.partitions if name in case.table.storage.list_names(p)[0])
    return case.add(f"{partition}/{name}")


def _read_by_clustering(case: Case) -> str:
    """A pending clustering plan reads a file that the (otherwise legitimate) plan deletes."""
    rel = case.planned()[0]
    partition, _, name = rel.rpartition("/")
    plan = {"operationType": "CLUSTER", "version": 1, "extraMetadata": None, "clusteringPlan": {
        "inputGroups": [{"slices": [{"dataFilePath": rel, "deltaFilePaths": [],
                                     "fileId": name.partition("_")[0], "partitionPath": partition,
                                     "bootstrapFilePath": "", "version": 1}],
                         "metrics": {}, "numOutputFileGroups": 1, "extraMetadata": None, "version": 1}],
        "strategy": None, "extraMetadata": None, "version": 1, "preserveHoodieMetadata": True}}
    t = new_instant_time(i.timestamp for i in case.table.active_timeline.raw_instants)
    case.table.storage.write(f".hoodie/{t}.replacecommit.requested",
                             serialize_metadata("HoodieRequestedReplaceMetadata", plan))
    return case.uri(rel)


def _last_completed_in_future(case: Case) -> str:
    case.plan.last_completed_commit_timestamp = "99999999999999999"
    return "lastCompletedCommitTimestamp=99999999999999999"


def _ectr_too_late(case: Case) -> str:
    latest = case.table.active_timeline.completed_commits_timeline(case.table.is_mor).last()
    case.plan.earliest_instant_to_retain = latest
    return f"earliestInstantToRetain={latest.timestamp}"


def _at_or_after_ectr(case: Case) -> str:
    ectr = case.plan.ectr_timestamp
    for _, slices in case.slices():
        after = [s for s in slices[1:] if s.base_instant >= ectr]
        if after:
            return case.add(after[0].paths[0])
    raise AssertionError("no non-latest slice at or after the ECTR")


def _newest_before_ectr(case: Case) -> str:
    ectr = case.plan.ectr_timestamp
    protected = case.view.savepointed_files | case.view.pending_plan_files
    for _, slices in case.slices():
        before = [s for s in slices[1:] if s.base_instant < ectr]
        if slices[0].base_instant >= ectr and before and not set(before[0].file_names) & protected:
            return case.add(before[0].paths[0])
    raise AssertionError("no slice before the ECTR")


def _uncommitted(case: Case) -> str:
    return case.add(case.demo.failed_files[0])


def _partition(path: str):
    def mutate(case: Case) -> str:
        case.plan.partitions_to_delete.append(path)
        return path
    return mutate


def _symlinked_partition(case: Case) -> str:
    """A partition directory that is a link to a folder outside the table."""
    target = case.outside / "elsewhere"
    target.mkdir(parents=True)
    victim = "precious.txt"
    (target / victim).write_bytes(b"not yours")
    os.symlink(target, Path(case.table.base_path) / "2024/03")
    return case.add(f"2024/03/{victim}")


def _partition_metafile(case: Case) -> str:
    return case.add(f"{PARTITIONS[0]}/.hoodie_partition_metadata")


def _nul_byte(case: Case) -> str:
    rel = case.planned()[0]
    case.plan.file_paths_to_delete[rel.rpartition("/")[0]].append(CleanFileInfo(case.uri(rel) + "\0x"))
    return rel.rpartition("/")[2]


def _filed_under_another_partition(case: Case) -> str:
    rel = case.planned()[0]
    other = next(p for p in PARTITIONS if p != rel.rpartition("/")[0])
    case.plan.file_paths_to_delete.setdefault(other, []).append(CleanFileInfo(case.uri(rel)))
    return case.uri(rel)


def _outside_base(case: Case) -> str:
    precious = case.outside / "precious.parquet"
    precious.write_bytes(b"keep me")
    partition = next(iter(case.plan.file_paths_to_delete))
    case.plan.file_paths_to_delete[partition].append(CleanFileInfo(f"file:{precious}"))
    return f"file:{precious}"


CASES = {
    "latest_slice": (_latest_slice, "latest file slice", "COPY_ON_WRITE"),
    "savepointed_file": (_savepointed, "listed by a savepoint", "COPY_ON_WRITE"),
    "log_file_read_by_pending_compaction": (_read_by_compaction, "pending compaction", "MERGE_ON_READ"),
    "file_read_by_pending_clustering": (_read_by_clustering, "clustering", "COPY_ON_WRITE"),
    "last_completed_commit_in_the_future": (_last_completed_in_future, "not before the plan's instant",
                                            "COPY_ON_WRITE"),
    "ectr_later_than_the_policy_allows": (_ectr_too_late, "retains fewer commits", "MERGE_ON_READ"),
    "slice_at_or_after_ectr": (_at_or_after_ectr, "at or after the earliest commit", "COPY_ON_WRITE"),
    # Retaining 2 puts the ECTR past the savepoint, so the newest slice before it is not savepointed.
    "newest_slice_before_ectr": (_newest_before_ectr, "newest slice before", "COPY_ON_WRITE", "2"),
    "file_of_a_failed_write": (_uncommitted, "not committed", "COPY_ON_WRITE"),
    "live_partition": (_partition(PARTITIONS[1]), "still holds", "COPY_ON_WRITE"),
    "parent_of_partitions": (_partition("2024"), "is not a partition", "COPY_ON_WRITE"),
    "partition_dot_dot": (_partition("2024/01/01/.."), "not a normalised", "COPY_ON_WRITE"),
    "archived_timeline_folder": (_partition(".hoodie/archived"), "under .hoodie", "COPY_ON_WRITE"),
    "metafolder": (_partition(".hoodie"), "under .hoodie", "COPY_ON_WRITE"),
    "base_path_as_partition": (_partition(""), "base path is not a partition", "COPY_ON_WRITE"),
    "symlinked_partition_directory": (_symlinked_partition, "resolves outside the base path",
                                      "COPY_ON_WRITE"),
    "partition_metafile": (_partition_metafile, "not a data file", "COPY_ON_WRITE"),
    "nul_byte_in_path": (_nul_byte, "NUL", "COPY_ON_WRITE"),
    "file_filed_under_another_partition": (_filed_under_another_partition, "is not a file of partition",
                                           "COPY_ON_WRITE"),
    "path_outside_the_base": (_outside_base, "outside the table's base path", "COPY_ON_WRITE"),
}


def _listing(root: Path) -> dict[str, int]:
    found = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(directory) / name
            found[str(path.relative_to(root))] = path.lstat().st_size
    return found


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_plan_is_refused_whole_and_nothing_is_deleted(tmp_path, capsys, name):
    mutate, problem, table_type, *retained = CASES[name]
    conf = {"hoodie.cleaner.commits.retained": retained[0] if retained else "3"}
    base = tmp_path / "t"
    demo = generate_table(Storage(str(base)), table_type, name="t", partitions=PARTITIONS, commits=12,
                          files_per_partition=2, records_per_file=3, update_fraction=0.5, seed=5)
    table = HoodieTable(str(base))
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, conf))
    plan = CleanPlanner(table, config).plan()
    assert plan.total_files > 0
    case = Case(table, demo, plan, FileSystemView(table), tmp_path / "outside")
    case.outside.mkdir()
    offending = mutate(case)
    requested = pending_clean(table, plan)
    t = requested.timestamp
    latest, as_of_savepoint = read_rows(str(base)), read_rows(str(base), demo.savepoint)
    before = _listing(tmp_path)

    args = ["clean", str(base), "--engine", "local"] + [f"--hoodie-conf={k}={v}" for k, v in conf.items()]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert requested.file_name in err and offending.rpartition("/")[2] in err and problem in err, err
    assert f"--discard-pending {t}" in err
    assert _listing(tmp_path) == before
    assert read_rows(str(base)) == latest and read_rows(str(base), demo.savepoint) == as_of_savepoint
    # The library (and so the Dagster check) gives the same first verdict.
    report = Cleaner(HoodieTable(str(base)), config).validate()
    first = report.violations[0]
    assert first.plan_file in err and first.path in err and first.problem in err


def test_legitimate_plan_of_the_same_table_passes_and_runs(tmp_path):
    """The control: the unchanged plan passes the rule, and executing it leaves the table readable."""
    base = tmp_path / "t"
    demo = generate_table(Storage(str(base)), "MERGE_ON_READ", name="t", partitions=PARTITIONS, commits=12,
                          files_per_partition=2, records_per_file=3, update_fraction=0.5, seed=5)
    table = HoodieTable(str(base))
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, RETAIN))
    plan = CleanPlanner(table, config).plan()
    t = pending_clean(table, plan).timestamp
    report = Cleaner(HoodieTable(str(base)), config).validate()
    assert report.safe and sum(len(v) for v in report.plans[0].files.values()) == plan.total_files
    latest, as_of_savepoint = read_rows(str(base)), read_rows(str(base), demo.savepoint)
    args = ["clean", str(base), "--engine", "local"] + [f"--hoodie-conf={k}={v}" for k, v in RETAIN.items()]
    assert main(args) == 0
    assert read_rows(str(base)) == latest and read_rows(str(base), demo.savepoint) == as_of_savepoint
    assert (base / ".hoodie" / f"{t}.clean").exists()


def test_discard_pending_keeps_a_copy_and_unblocks_cleaning(tmp_path, capsys):
    base = tmp_path / "t"
    generate_table(Storage(str(base)), "COPY_ON_WRITE", name="t", partitions=PARTITIONS, commits=12,
                   files_per_partition=2, records_per_file=3, update_fraction=0.5, seed=5)
    table = HoodieTable(str(base))
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, RETAIN))
    plan = CleanPlanner(table, config).plan()
    case = Case(table, None, plan, FileSystemView(table), tmp_path)
    _latest_slice(case)
    t = pending_clean(table, plan, inflight=True).timestamp
    data = (base / ".hoodie" / f"{t}.clean.requested").read_bytes()
    args = ["clean", str(base), "--engine", "local"] + [f"--hoodie-conf={k}={v}" for k, v in RETAIN.items()]
    assert main(args) == 2
    assert main(["clean", str(base), "--discard-pending", "20000101000000000"]) == 2
    assert "no pending clean 20000101000000000" in capsys.readouterr().err
    assert main(["clean", str(base), "--discard-pending", t]) == 0
    kept = base / ".hoodie/.aux/hudi-assets/discarded"
    assert (kept / f"{t}.clean.requested").read_bytes() == data == (kept / f"{t}.clean.inflight").read_bytes()
    assert not list((base / ".hoodie").glob(f"{t}.clean*"))
    assert main(args) == 0  # cleaning goes on with a plan of its own
    assert "files deleted" in capsys.readouterr().out


def test_non_partitioned_table_emptied_by_a_replacecommit_completes(builder):
    """The plan marks "" for deletion; Hudi skips partition deletion on non-partitioned tables and
    completes the clean, and so do we (before, the clean stayed pending forever)."""
    from hudi_assets.clean import Cleaner

    b = builder(partitioned=False)
    t1, t2, t3 = ts(1), ts(2), ts(3)
    b.commit(t1, {"": [base_file("f1", t1)]})
    b.commit(t2, {}, replaced={"": ["f1"]})
    b.commit(t3, {})
    table = b.table()
    retain_one = {"hoodie.cleaner.commits.retained": "1"}
    result = Cleaner(table, CleanConfig.from_write_config(WriteConfig.load({}, None, retain_one))).clean()
    assert result.plan.partitions_to_delete == [""] and result.files_deleted == 1
    assert list(result.completed) == [result.scheduled]
    assert table.storage.exists(".hoodie_partition_metadata") and table.storage.exists(".hoodie")


def test_clean_is_refused_and_changes_nothing_while_another_run_holds_the_lock(tmp_path, capsys):
    """The table lock (the one `archive` takes) keeps a clean out: exit 1 naming the owner."""
    from support.lock_tables import hold_maintenance_lock

    base = tmp_path / "t"
    generate_table(Storage(str(base)), "COPY_ON_WRITE", name="t", partitions=PARTITIONS, commits=12, seed=5)
    before = _listing(tmp_path)
    args = ["clean", str(base), "--engine", "local", "--hoodie-conf=hoodie.cleaner.commits.retained=3"]
    with hold_maintenance_lock(HoodieTable(str(base)), "archive"):
        held = _listing(tmp_path)
        assert main(args) == 1
        assert main(["clean", str(base), "--discard-pending", "20240101000000000"]) == 1
        assert _listing(tmp_path) == held
    err = capsys.readouterr().err
    assert "busy" in err and "archive" in err and str(os.getpid()) in err
    assert main(args) == 0 and _listing(tmp_path) != before
    assert not (base / ".hoodie/.aux/hudi-assets.lock").exists()


def test_lazy_rollback_waits_while_a_pending_plan_is_refused(builder, capsys):
    """Under LAZY the failed writes are rolled back before the pending cleans run; an unsafe pending
    plan is refused before that rollback deletes anything, as the dry run refuses it (before, the
    failed write was rolled back and only then the plan refused)."""
    from hudi_assets.timeline.instant import Instant, State

    b = builder()
    p = "2024/01/01"
    for n in range(1, 4):
        b.commit(ts(n), {p: [base_file("f1", ts(n))]})
    b.commit(ts(4), {p: [base_file("f2", ts(4))]}, state=State.INFLIGHT)  # a failed write
    table = b.table()
    latest = CleanFileInfo(table.storage.uri(f"{p}/{base_file('f1', ts(3))}"))
    plan = CleanerPlan(Instant(ts(3), "commit"), ts(3), "KEEP_LATEST_COMMITS", {p: [latest]})
    pending_clean(table, plan)
    before = sorted(str(f.relative_to(b.root)) for f in b.root.rglob("*") if f.is_file())
    lazy = ["--hoodie-conf", "hoodie.cleaner.policy.failed.writes=LAZY"]
    for extra in (["--dry-run"], ["--engine", "local"]):
        assert main(["clean", str(b.root), *lazy, *extra]) == 2
        assert "unsafe" in capsys.readouterr().err
        assert sorted(str(f.relative_to(b.root)) for f in b.root.rglob("*") if f.is_file()) == before
