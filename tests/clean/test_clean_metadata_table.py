"""A clean on a table with a metadata table keeps it in step: the metadata deltacommit `<t>` records
the deletes before `<t>.clean` is written; crashes (kill -9) around it are finished by the next run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.builders import TableBuilder, base_file, log_file

from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.cli import main
from hudi_assets.config import WriteConfig
from hudi_assets.demo import generate_table
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.clean_records import indexed_columns
from hudi_assets.metadata.initializer import initialize_from_filesystem
from hudi_assets.metadata.keys import bloom_filter_key
from hudi_assets.metadata.payloads import ColumnRange, bloom_filter_record, column_stats_record, wrap
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.rollback import Rollbacker
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline.instant import State
from hudi_assets.transaction import table_lock

COMMITS = [f"2024010100000{n}000" for n in range(1, 6)]
PARTITIONS = ("p1", "p2")
COLUMNS = ("id", "ts")


def _build(root: Path, table_type: str) -> TableBuilder:
    """Five writes to file group `a` of two partitions: COW rewrites the base file each time; MOR
    alternates new base files (new slices) and log files on the latest slice."""
    b = TableBuilder(root, table_type)
    base = COMMITS[0]
    for t in COMMITS:
        if table_type == "COPY_ON_WRITE" or t in COMMITS[::2]:
            b.commit(t, {p: [base_file(f"a{p}", t)] for p in PARTITIONS})
            base = t
        else:
            b.commit(t, {p: [log_file(f"a{p}", base)] for p in PARTITIONS})
    return b


def _base_files(root: Path) -> list[tuple[str, str]]:
    return [(p, f.name) for p in PARTITIONS for f in sorted((root / p).glob("*.parquet"))]


def _with_mdt(root: Path, table_type: str, indexes: tuple[str, ...] = ()) -> TableBuilder:
    b = _build(root, table_type)
    seeds = {}
    if "column_stats" in indexes:
        stats = [ColumnRange(c, wrap("StringWrapper", "a"), wrap("StringWrapper", "z"), 0, 1, 5, 5)
                 for c in COLUMNS]
        seeds["column_stats"] = [column_stats_record(p, n, s) for p, n in _base_files(root) for s in stats]
    if "bloom_filters" in indexes:
        seeds["bloom_filters"] = [bloom_filter_record(p, n, COMMITS[-1], "DYNAMIC_V0", b"bloom")
                                  for p, n in _base_files(root)]
    initialize_from_filesystem(b.table(), seeds)
    return b


def _config(table: HoodieTable, **conf: str) -> CleanConfig:
    return CleanConfig.from_write_config(WriteConfig.load(
        table.config.props, None, {"hoodie.cleaner.commits.retained": "2", **conf}))


def _on_storage(root: Path) -> dict[str, set[str]]:
    return {p: {f.name for f in (root / p).iterdir() if not f.name.startswith(".hoodie_partition")}
            for p in PARTITIONS}


def _assert_in_step(root: Path, capsys) -> None:
    """`metadata --validate` exits 0 and the listing is exactly the data files on storage."""
    assert main(["metadata", str(root), "--validate"]) == 0, capsys.readouterr()
    capsys.readouterr()
    listing = MetadataTable(str(root)).files_listing.partitions
    assert {p: set(files) for p, files in listing.items()} == _on_storage(root)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_clean_records_its_deletes_in_the_metadata_table(tmp_path, capsys, table_type):
    _with_mdt(tmp_path, table_type)
    before = _on_storage(tmp_path)
    result = Cleaner(HoodieTable(str(tmp_path)), _config(HoodieTable(str(tmp_path)))).clean()
    (executed,) = result.executed
    assert executed.files_deleted > 0
    assert _on_storage(tmp_path) != before
    _assert_in_step(tmp_path, capsys)
    mdt_timeline = sorted(p.name for p in (tmp_path / ".hoodie/metadata/.hoodie").glob(
        f"{executed.instant}.*"))
    assert mdt_timeline == [f"{executed.instant}.deltacommit", f"{executed.instant}.deltacommit.inflight",
                            f"{executed.instant}.deltacommit.requested"]
    again = Cleaner(HoodieTable(str(tmp_path)), _config(HoodieTable(str(tmp_path)))).clean()
    assert again.scheduled is None and again.executed == []
    _assert_in_step(tmp_path, capsys)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_index_records_of_deleted_base_files_are_deleted(tmp_path, capsys, table_type):
    _with_mdt(tmp_path, table_type, ("column_stats", "bloom_filters"))
    files = _base_files(tmp_path)
    Cleaner(HoodieTable(str(tmp_path)), _config(HoodieTable(str(tmp_path)))).clean()
    _assert_in_step(tmp_path, capsys)
    deleted = [f for f in files if f not in _base_files(tmp_path)]
    kept = _base_files(tmp_path)
    assert deleted and kept
    metadata = MetadataTable(str(tmp_path))
    assert indexed_columns(metadata, deleted) == {}
    assert indexed_columns(metadata, kept) == {f: sorted(COLUMNS) for f in kept}
    blooms = _bloom_keys(tmp_path)
    assert {bloom_filter_key(p, n) for p, n in deleted} <= blooms["deleted"]
    assert {bloom_filter_key(p, n) for p, n in kept} <= blooms["live"]


def _bloom_keys(root: Path) -> dict[str, set[str]]:
    """Bloom filter keys by their newest state: the base files the initialization wrote, then the logs
    (no compaction runs here)."""
    from hudi_assets.logformat import BlockType, read_blocks
    from hudi_assets.logformat.hfile_block import decode_hfile_data_block, decode_hfile_records
    from hudi_assets.metadata.file_group import open_base_file
    from hudi_assets.storage import Storage

    state: dict[str, bool] = {}
    folder = Storage(str(root / ".hoodie/metadata/bloom_filters"))
    for path in sorted(folder.list_names("")[0]):
        if path.endswith(".hfile"):
            reader, schema = open_base_file(folder, path)
            records = decode_hfile_records(reader, schema, where="base file")
            state.update((k, v["BloomFilterMetadata"]["isDeleted"]) for k, v in records)
    for path in sorted((root / ".hoodie/metadata/bloom_filters").glob(".bloom-*"),
                       key=lambda p: int(p.name.split(".log.")[1].split("_")[0])):
        for block in read_blocks(path.read_bytes(), str(path)):
            if block.block_type is BlockType.HFILE_DATA:
                records = decode_hfile_data_block(block)
                state.update((k, v["BloomFilterMetadata"]["isDeleted"]) for k, v in records)
    return {"deleted": {k for k, d in state.items() if d}, "live": {k for k, d in state.items() if not d}}


def test_configured_column_list_decides_the_column_stats_deletes(tmp_path, capsys):
    _with_mdt(tmp_path, "COPY_ON_WRITE", ("column_stats",))
    files = _base_files(tmp_path)
    table = HoodieTable(str(tmp_path), hoodie_conf={"hoodie.metadata.index.column.stats.column.list": "ts"})
    Cleaner(table, _config(table)).clean()
    deleted = [f for f in files if f not in _base_files(tmp_path)]
    assert indexed_columns(MetadataTable(str(tmp_path)), deleted) == {f: ["id"] for f in deleted}


def test_unknown_metadata_partition_is_refused_before_anything_is_written(tmp_path, capsys):
    b = _with_mdt(tmp_path, "COPY_ON_WRITE")
    props = dict(b.table().config.props)
    write_table_config(b.storage, {**props, "hoodie.table.metadata.partitions": "files,partition_stats"})
    listing = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main(["clean", str(tmp_path), "--engine", "local",
                 "--hoodie-conf", "hoodie.cleaner.commits.retained=2"]) == 2
    err = capsys.readouterr().err
    assert "partition_stats" in err and err.count("\n") == 1
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == listing


def test_lazy_rollback_after_a_clean_keeps_the_metadata_table_in_step(tmp_path, capsys):
    b = _with_mdt(tmp_path, "COPY_ON_WRITE")
    table = HoodieTable(str(tmp_path))
    config = _config(table, **{"hoodie.cleaner.policy.failed.writes": "LAZY"})
    assert Cleaner(table, config).clean().files_deleted > 0
    _assert_in_step(tmp_path, capsys)
    b.commit("20240101000009000", state=State.INFLIGHT)
    table = HoodieTable(str(tmp_path))
    with table_lock(table, "rollback") as lock:  # no heartbeat: the write counts as failed
        [done] = Rollbacker(table, metadata=MetadataTableSink(table)).rollback_failed_writes(lock)
    assert done.instant_time == "20240101000009000"
    _assert_in_step(tmp_path, capsys)


STEPS = ["CLEAN_PARTITIONS", "MDT_REQUESTED", "MDT_BLOCK_WRITTEN", "MDT_BLOCK_WRITTEN:2", "MDT_COMPLETED",
         "CLEAN_COMPLETE"]


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_kill_9_around_the_metadata_deltacommit_then_rerun_finishes(tmp_path, capsys, step, table_type):
    _with_mdt(tmp_path, table_type, ("column_stats",))
    files = _base_files(tmp_path)
    before = MetadataTable(str(tmp_path)).files_listing
    kill = [sys.executable, str(Path(__file__).parents[1] / "support/kill_clean.py"), str(tmp_path), step,
            "2"]
    proc = subprocess.run(kill, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    assert not list((tmp_path / ".hoodie").glob("*.clean"))
    # The data clean has not completed: readers of the metadata table see none of its records.
    assert MetadataTable(str(tmp_path)).files_listing == before
    cmd = [sys.executable, "-m", "hudi_assets.cli", "clean", str(tmp_path), "--engine", "local",
           "--hoodie-conf", "hoodie.cleaner.commits.retained=2"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / ".hoodie").glob("*.clean"))) == 1
    _assert_in_step(tmp_path, capsys)
    deleted = [f for f in files if f not in _base_files(tmp_path)]
    assert deleted and indexed_columns(MetadataTable(str(tmp_path)), deleted) == {}
    rollbacks = list((tmp_path / ".hoodie/metadata/.hoodie").glob("*.rollback"))
    assert len(rollbacks) == (0 if step == "CLEAN_PARTITIONS" else 1)
    again = Cleaner(HoodieTable(str(tmp_path)), _config(HoodieTable(str(tmp_path)))).clean()
    assert again.executed == [] and again.scheduled is None



@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("policy", ["KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS"])
def test_demo_table_reads_the_same_after_cleans_kept_in_step(tmp_path, capsys, table_type, policy):
    hudi = pytest.importorskip("hudi")
    import pyarrow as pa

    from hudi_assets.demo import generate_table
    from hudi_assets.storage import Storage

    generate_table(Storage(str(tmp_path)), table_type, name="t", partitions=2, commits=8,
                   files_per_partition=2, records_per_file=3, update_fraction=0.5, bloom_entries=1000, seed=3)
    initialize_from_filesystem(HoodieTable(str(tmp_path)))

    def rows():
        batches = hudi.HudiTable(str(tmp_path)).read()
        return sorted(r["id"] + r["_hoodie_commit_time"] for r in pa.Table.from_batches(batches).to_pylist())

    before = rows()
    conf = {"hoodie.cleaner.policy": policy, "hoodie.cleaner.fileversions.retained": "1"}
    table = HoodieTable(str(tmp_path))
    assert Cleaner(table, _config(table, **conf)).clean().files_deleted > 0
    assert rows() == before
    assert main(["metadata", str(tmp_path), "--validate"]) == 0, capsys.readouterr()
    capsys.readouterr()
    again = Cleaner(HoodieTable(str(tmp_path)), _config(HoodieTable(str(tmp_path)), **conf)).clean()
    assert again.executed == [] and again.scheduled is None


def test_non_partitioned_table_is_kept_in_step(tmp_path, capsys):
    b = TableBuilder(tmp_path, "COPY_ON_WRITE", partitioned=False)
    for t in COMMITS:
        b.commit(t, {"": [base_file("a", t)]})
    initialize_from_filesystem(b.table())
    assert Cleaner(HoodieTable(str(tmp_path)), _config(HoodieTable(str(tmp_path)))).clean().files_deleted == 2
    assert main(["metadata", str(tmp_path), "--validate"]) == 0, capsys.readouterr()
    listing = MetadataTable(str(tmp_path)).files_listing.partitions
    assert set(listing[""]) == {base_file("a", t) for t in COMMITS[2:]}


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("action", ["compaction", "logcompaction"])
def test_pending_metadata_compaction_is_refused_before_any_delete_and_in_the_dry_run(tmp_path, capsys,
                                                                                    action):
    """A writer died mid-compaction of the metadata table: the clean and its dry run refuse before
    anything is deleted or written, naming the compaction and the way out."""
    _with_mdt(tmp_path, "COPY_ON_WRITE")
    (tmp_path / f".hoodie/metadata/.hoodie/{COMMITS[-1]}001.{action}.requested").write_bytes(b"")
    before = _snapshot(tmp_path)
    args = ["clean", str(tmp_path), "--engine", "local", "--hoodie-conf", "hoodie.cleaner.commits.retained=2"]
    for extra in (["--dry-run"], []):
        assert main(args + extra) == 1
        err = capsys.readouterr().err
        assert f"pending compaction ({COMMITS[-1]}001)" in err and "finish it first" in err, err
        way_out = f"`hudi-assets metadata {tmp_path} --compact`"
        assert (way_out in err) == (action == "compaction"), err
        assert _snapshot(tmp_path) == before


def test_a_metadata_table_is_cleaned_at_its_writers_instant_time(tmp_path):
    """A clean of a metadata table is requested at its latest deltacommit's time + `002`, as its
    writer cleans (`HoodieTableMetadataUtil.createCleanTimestamp`), whoever asks: not at a new
    instant time as on a data table."""
    data = generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", commits=12, bloom_entries=100,
                          seed=3, metadata_table=True, pending_compaction=False, failed_write=False)
    mdt = HoodieTable(f"{data.base_path}/.hoodie/metadata")
    assert mdt.is_metadata_table and not HoodieTable(data.base_path).is_metadata_table
    latest = mdt.active_timeline.filter_completed().filter_actions({"deltacommit"}).last()
    result = Cleaner(mdt, _config(mdt, **{"hoodie.cleaner.commits.retained": "2"})).clean()
    assert result.scheduled == f"{latest.timestamp}002" and result.files_deleted > 0
    assert list(result.completed) == [result.scheduled]
