"""Planning a clean from the metadata table (`hoodie.metadata.enable`, default true) on v6 tables
whose metadata table the writer here initialized: the same plans as from a storage listing, read
from the metadata table (not storage), and refused when the metadata table cannot be read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.builders import TableBuilder, base_file, log_file

from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.clean.plan import CleanerPlan
from hudi_assets.cli import main
from hudi_assets.config import WriteConfig
from hudi_assets.engine import LocalEngine, SparkEngine
from hudi_assets.metadata.payloads import partition_files_record
from hudi_assets.metadata.writer import MetadataTableWriter
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import State

COMMITS = [f"2024010100000{n}000" for n in range(1, 8)]
PARTITIONS = ("p1", "p2", "p3")
POLICIES = {
    "commits": {"hoodie.cleaner.commits.retained": "2"},
    "versions": {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                 "hoodie.cleaner.fileversions.retained": "1"},
}


def _write(b: TableBuilder, table_type: str, commits: list[str], base: dict[str, str],
           metadata: bool = False) -> None:
    """Writes to file group `a<p>` of every partition (MOR: every other one to a log file), each
    recorded in the metadata table as the writer would with `metadata`."""
    for t in commits:
        writes = {}
        for p in PARTITIONS:
            if table_type == "COPY_ON_WRITE" or t in COMMITS[::2]:
                writes[p] = [base_file(f"a{p}", t)]
                base[p] = t
            else:
                writes[p] = [log_file(f"a{p}", base[p])]
        b.commit(t, writes)
        if metadata:
            records = [partition_files_record(p, {name: 1 for name in names}) for p, names in writes.items()]
            MetadataTableWriter(b.table()).commit(t, records)


def _written(root: Path, table_type: str) -> tuple[TableBuilder, dict[str, str]]:
    """Five writes (`_write`), then a metadata table made from storage."""
    b = TableBuilder(root, table_type)
    base: dict[str, str] = {}
    _write(b, table_type, COMMITS[:5], base)
    return b.metadata_table_from_storage(), base


def _config(table: HoodieTable, conf: dict[str, str]) -> CleanConfig:
    return CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, conf))


def _decisions(plan: CleanerPlan) -> tuple:
    """What a plan decides, in its order (its serialized form differs by the container's sync marker)."""
    files = [(p, [f.file_path for f in infos]) for p, infos in plan.file_paths_to_delete.items()]
    return (plan.earliest_instant_to_retain, plan.last_completed_commit_timestamp, plan.policy, files,
            plan.partitions_to_delete, plan.extra_metadata)


def _plans(root: Path, conf: dict[str, str]) -> tuple[tuple, tuple]:
    """The plan's decisions from the metadata table and from a storage listing."""
    table = HoodieTable(str(root))
    cleaner = Cleaner(table, _config(table, conf))
    from_mdt = cleaner.plan()
    planner = cleaner.planner
    assert planner.metadata is not None
    cleaner = Cleaner(table, _config(table, {**conf, "hoodie.metadata.enable": "false"}))
    from_storage = cleaner.plan()
    planner = cleaner.planner
    assert planner.metadata is None
    assert from_mdt.total_files > 0
    return _decisions(from_mdt), _decisions(from_storage)


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_plans_from_the_metadata_table_equal_plans_from_listing(tmp_path, table_type, policy):
    b, base = _written(tmp_path, table_type)
    from_mdt, from_storage = _plans(tmp_path, POLICIES[policy])
    assert from_mdt == from_storage
    # A clean (recorded in the metadata table), more writes, and the next (incremental) plan.
    table = HoodieTable(str(tmp_path))
    assert Cleaner(table, _config(table, POLICIES[policy])).clean().files_deleted > 0
    _write(b, table_type, COMMITS[5:], base, metadata=True)
    from_mdt, from_storage = _plans(tmp_path, POLICIES[policy])
    assert from_mdt == from_storage


def test_batches_of_one_partition_each_plan_the_same(tmp_path):
    """cleaner.parallelism=1: each partition read and decided on its own."""
    _written(tmp_path, "COPY_ON_WRITE")
    from_mdt, from_storage = _plans(tmp_path, {**POLICIES["commits"], "hoodie.cleaner.parallelism": "1"})
    assert from_mdt == from_storage
    assert len(from_mdt[3]) == len(PARTITIONS)


def test_the_plan_reads_the_metadata_table_not_storage(tmp_path):
    _written(tmp_path, "COPY_ON_WRITE")
    gone = tmp_path / "p2" / base_file("ap2", COMMITS[1])
    gone.unlink()  # the metadata table still lists it
    table = HoodieTable(str(tmp_path))
    conf = POLICIES["commits"]
    from_mdt = Cleaner(table, _config(table, conf)).plan()
    from_storage = Cleaner(table, _config(table, {**conf, "hoodie.metadata.enable": "false"})).plan()
    assert any(f.file_path.endswith(f"/p2/{gone.name}") for f in from_mdt.file_paths_to_delete["p2"])
    assert not any(f.file_path.endswith(gone.name) for f in from_storage.file_paths_to_delete["p2"])


PLAN_IN_WORKERS = """
import json, os, sys
from hudi_assets import engine as engines
from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.metadata.table import MetadataTable
from hudi_assets.table import HoodieTable
read = MetadataTable.listed_in_partitions

def reading(self, partitions):
    with open(sys.argv[2], "a") as readers:
        readers.write(f"{os.getpid()}\\n")
    return read(self, partitions)

MetadataTable.listed_in_partitions = reading
assert engines._can_fork()  # a fresh interpreter: no foreign thread keeps the engine from forking
engine = engines.LocalEngine(processes=int(sys.argv[3]), process_min_items=2)
cleaner = Cleaner(HoodieTable(sys.argv[1]), CleanConfig(commits_retained=2, parallelism=1), engine)
plan = cleaner.plan(with_sizes=True)
print(json.dumps([plan.to_record(), cleaner.planner.file_sizes, os.getpid()]))
"""


def test_forked_workers_read_their_own_partitions_from_the_metadata_table(tmp_path):
    """On the local engine, with more than one batch of partitions (cleaner.parallelism=1: three),
    the parent reads no partition's files: each worker reads its partitions' records from the
    metadata table's files opened before the fork, merging its log blocks over the base file. The
    plan, sizes included, is the one planned in a single process, and from a listing."""
    b, base = _written(tmp_path / "table", "MERGE_ON_READ")
    _write(b, "MERGE_ON_READ", COMMITS[5:], base, metadata=True)  # log blocks in the files partition
    plans = {}
    for processes in (2, 1):
        readers = tmp_path / f"readers-{processes}"
        out = subprocess.run([sys.executable, "-c", PLAN_IN_WORKERS, str(tmp_path / "table"), str(readers),
                              str(processes)], check=True, capture_output=True, text=True).stdout
        record, sizes, parent = json.loads(out)
        plans[processes] = [record, sizes]
        pids = {int(line) for line in readers.read_text().split()}
        assert (parent in pids) == (processes == 1) and pids
    assert plans[2] == plans[1]
    assert plans[2][0]["filePathsToBeDeletedPerPartition"] and plans[2][1]
    table = HoodieTable(str(tmp_path / "table"))
    listing = {**POLICIES["commits"], "hoodie.metadata.enable": "false"}
    assert json.loads(json.dumps(Cleaner(table, _config(table, listing)).plan().to_record())) == plans[2][0]


@pytest.mark.parametrize(("damage", "problem"), [("files partition removed", "__all_partitions__"),
                                                 ("base file truncated", "too short for an HFile")])
def test_an_unreadable_metadata_table_stops_the_clean_naming_it(tmp_path, capsys, damage, problem):
    _written(tmp_path, "COPY_ON_WRITE")
    files = tmp_path / ".hoodie" / "metadata" / "files"
    for data_file in [*files.glob(".files-*"), *files.glob("files-*.hfile")]:
        if damage == "base file truncated" and data_file.suffix == ".hfile":
            data_file.write_bytes(data_file.read_bytes()[:40])
        elif damage == "files partition removed":
            data_file.unlink()
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main(["clean", str(tmp_path), "--engine", "local",
                 "--hoodie-conf", "hoodie.cleaner.commits.retained=2"]) == 2
    err = capsys.readouterr().err
    assert ".hoodie/metadata/files" in err and problem in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    # With the metadata table disabled, the clean lists storage and runs.
    assert main(["clean", str(tmp_path), "--engine", "local", "--dry-run",
                 "--hoodie-conf", "hoodie.cleaner.commits.retained=2",
                 "--hoodie-conf", "hoodie.metadata.enable=false"]) == 0


@pytest.mark.parametrize("parallelism", ["200", "1"])
@pytest.mark.parametrize("in_flight", [False, True])
def test_a_replaced_partition_is_deleted_unless_storage_holds_files_in_flight(tmp_path, in_flight,
                                                                              parallelism):
    """p3's one group is replaced (insert_overwrite into p1) before the earliest commit to retain: the
    partition goes, unless a write in flight has a file there, which only storage knows (Hudi's
    hasPendingFiles lists it). Whether the driver reads the one batch or, a batch per partition, the
    workers read their own partitions' records and list p3 themselves."""
    b, _ = _written(tmp_path, "COPY_ON_WRITE")
    replace = "20240101000006000"
    b.commit(replace, {"p1": [base_file("zp1", replace)]}, replaced={"p3": ["ap3"]})
    new_group = {base_file("zp1", replace): 1}
    MetadataTableWriter(b.table()).commit(replace, [partition_files_record("p1", new_group)])
    for t in ("20240101000007000", "20240101000008000", "20240101000009000"):
        b.commit(t, {"p1": [base_file("ap1", t)]})
        MetadataTableWriter(b.table()).commit(t, [partition_files_record("p1", {base_file("ap1", t): 1})])
    if in_flight:
        b.commit("20240101000010000", {"p3": [base_file("cp3", "20240101000010000")]}, state=State.INFLIGHT)
    table = HoodieTable(str(tmp_path))
    policy = {**POLICIES["commits"], "hoodie.cleaner.parallelism": parallelism}
    cleaner = Cleaner(table, _config(table, policy))
    from_mdt = cleaner.plan()
    planner = cleaner.planner
    assert planner.metadata is not None
    assert len(from_mdt.file_paths_to_delete["p3"]) == 5  # every slice of the replaced group
    assert from_mdt.partitions_to_delete == ([] if in_flight else ["p3"])
    from_storage = Cleaner(table, _config(table, {**policy, "hoodie.metadata.enable": "false"})).plan()
    assert _decisions(from_mdt) == _decisions(from_storage)


@pytest.mark.spark
def test_spark_tasks_plan_from_the_metadata_table_like_local(tmp_path):
    """The driver reads each batch from the metadata table; Spark tasks get names and sizes only."""
    _written(tmp_path, "MERGE_ON_READ")
    table = HoodieTable(str(tmp_path))
    config = _config(table, POLICIES["commits"])
    engine = SparkEngine(master="local[2]")
    try:
        cleaner = Cleaner(table, config, engine)
        on_spark = cleaner.plan(with_sizes=True)
        planner = cleaner.planner
    finally:
        engine.session.stop()
    local = Cleaner(table, config, LocalEngine()).plan()
    assert planner.metadata is not None and _decisions(on_spark) == _decisions(local)
    assert planner.file_sizes and all(size == 1 for sizes in planner.file_sizes.values() for size in sizes)
