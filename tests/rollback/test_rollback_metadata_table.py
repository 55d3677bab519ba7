"""Failed writes rolled back on tables with a metadata table, as Hudi 0.15's finishRollback does:
one metadata deltacommit at the rollback's time, the failed instant's metadata deltacommit rolled
back, the metadata table validated against storage, a rerun doing nothing, and a run killed between
the metadata deltacommit and `<t>.rollback` finished by the next one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.failed_tables import expected_rows, read_rows

from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.cli import main
from hudi_assets.config import WriteConfig
from hudi_assets.demo.generator import DemoTable
from hudi_assets.engine import LocalEngine
from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.heartbeat import heartbeat_path
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.compaction import compact, compaction_instant_time
from hudi_assets.metadata.initializer import initialize_from_filesystem
from hudi_assets.metadata.payloads import partition_files_record
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.metadata.writer import MetadataTableWriter
from hudi_assets.rollback import Rollbacker, pending_rollbacks
from hudi_assets.table import HoodieTable

TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]


def _with_metadata_table(demo: DemoTable, failed_deltacommit: bool) -> None:
    """The metadata table built from storage up to the last completed commit; with
    `failed_deltacommit`, the failed write's own metadata deltacommit too (its writer died after it)."""
    table = HoodieTable(demo.base_path)
    initialize_from_filesystem(table)
    if failed_deltacommit:
        by_partition: dict[str, dict[str, int]] = {}
        for rel in demo.failed_files:
            partition, _, name = rel.rpartition("/")
            by_partition.setdefault(partition, {})[name] = (Path(demo.base_path) / rel).stat().st_size
        records = [partition_files_record(p, added=files) for p, files in by_partition.items()]
        MetadataTableWriter(HoodieTable(demo.base_path)).commit(demo.failed_instant, records)


def _listed(demo: DemoTable) -> set[str]:
    listing = MetadataTable(demo.base_path).files_listing.partitions
    return {f"{p}/{name}" if p else name for p, files in listing.items() for name in files}


def _metadata_timeline(demo: DemoTable) -> list[str]:
    return sorted(p.name for p in (Path(demo.base_path) / ".hoodie" / "metadata" / ".hoodie").iterdir()
                  if p.is_file())


def _assert_rolled_back(demo: DemoTable, failed_deltacommit: bool) -> None:
    hoodie = Path(demo.base_path) / ".hoodie"
    assert not [p for p in hoodie.iterdir() if p.name.startswith(demo.failed_instant)]
    [completed] = [p.name for p in hoodie.iterdir() if p.name.endswith(".rollback")]
    rollback_time = completed.split(".")[0]
    mdt = _metadata_timeline(demo)
    assert f"{rollback_time}.deltacommit" in mdt  # the rollback's own metadata deltacommit
    assert not [n for n in mdt if n.startswith(demo.failed_instant)]
    assert (f"{rollback_time}006.rollback" in mdt) == failed_deltacommit
    gone = {rel for rel in demo.failed_files if not (Path(demo.base_path) / rel).exists()}
    assert gone and not gone & _listed(demo)
    assert main(["metadata", demo.base_path, "--validate"]) == 0
    assert read_rows(demo.base_path) == expected_rows(demo)


@pytest.mark.parametrize("failed_deltacommit", [False, True], ids=["no-mdt-commit", "mdt-commit"])
@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_rollback_command_keeps_the_metadata_table_in_step(failed_table, table_type, failed_deltacommit):
    demo = failed_table(table_type)
    _with_metadata_table(demo, failed_deltacommit)
    if failed_deltacommit:
        assert f"{demo.failed_instant}.deltacommit" in _metadata_timeline(demo)
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 0
    _assert_rolled_back(demo, failed_deltacommit)
    before = _metadata_timeline(demo)
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 0
    assert _metadata_timeline(demo) == before  # a rerun does nothing


@pytest.mark.parametrize("failed_deltacommit", [False, True], ids=["no-mdt-commit", "mdt-commit"])
@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_lazy_clean_rolls_back_on_a_table_with_a_metadata_table(failed_table, table_type, failed_deltacommit):
    demo = failed_table(table_type)
    _with_metadata_table(demo, failed_deltacommit)
    table = HoodieTable(demo.base_path)
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, {
        "hoodie.cleaner.policy.failed.writes": "LAZY", "hoodie.cleaner.commits.retained": "10"}))
    Cleaner(table, config, LocalEngine()).clean()
    _assert_rolled_back(demo, failed_deltacommit)
    before = _metadata_timeline(demo)
    Cleaner(HoodieTable(demo.base_path), config, LocalEngine()).clean()
    assert _metadata_timeline(demo) == before


@pytest.mark.parametrize("step", ["MDT_REQUESTED", "MDT_COMPLETED", "MDT_ROLLED_BACK"])
def test_killed_between_metadata_deltacommit_and_rollback_is_finished(failed_table, step):
    demo = failed_table("MERGE_ON_READ")
    _with_metadata_table(demo, failed_deltacommit=True)
    kill = [sys.executable, str(Path(__file__).parents[1] / "support/kill_rollback.py"), demo.base_path,
            demo.failed_instant, step]
    proc = subprocess.run(kill, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    assert read_rows(demo.base_path) == expected_rows(demo)
    assert main(["metadata", demo.base_path, "--validate"]) == 0  # readers never see a half state
    rerun = [sys.executable, "-m", "hudi_assets.cli", "rollback", demo.base_path, demo.failed_instant]
    proc = subprocess.run(rerun, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _assert_rolled_back(demo, failed_deltacommit=True)
    assert not pending_rollbacks(HoodieTable(demo.base_path))
    assert not pending_rollbacks(HoodieTable(f"{demo.base_path}/.hoodie/metadata"))


def test_unknown_metadata_partition_is_refused_before_anything_is_written(failed_table, capsys):
    demo = failed_table("COPY_ON_WRITE")
    _with_metadata_table(demo, failed_deltacommit=False)
    props = Path(demo.base_path) / ".hoodie" / "hoodie.properties"
    text = props.read_text()
    props.write_text(text.replace("hoodie.table.metadata.partitions=files",
                                  "hoodie.table.metadata.partitions=expr_index_x,files"))
    files = sorted(str(p) for p in Path(demo.base_path).rglob("*"))
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 2
    assert "expr_index_x" in capsys.readouterr().err
    assert sorted(str(p) for p in Path(demo.base_path).rglob("*")) == files


def test_a_rollback_given_no_metadata_sink_is_refused_before_anything_is_written(failed_table):
    """rollback/ does not write the metadata table: its caller hands in the sink that does. Without
    one, a table with a metadata table is refused, not left with that metadata table out of step."""
    demo = failed_table("COPY_ON_WRITE")
    _with_metadata_table(demo, failed_deltacommit=False)
    files = {str(p): p.read_bytes() for p in Path(demo.base_path).rglob("*") if p.is_file()}
    with pytest.raises(HudiAssetsError, match="no metadata sink"):
        Rollbacker(HoodieTable(demo.base_path)).rollback(demo.failed_instant)
    assert {str(p): p.read_bytes() for p in Path(demo.base_path).rglob("*") if p.is_file()} == files
    table = HoodieTable(demo.base_path)
    [done] = Rollbacker(table, metadata=MetadataTableSink(table)).rollback(demo.failed_instant).executed
    assert done.instant_time == demo.failed_instant
    _assert_rolled_back(demo, failed_deltacommit=False)



def _refused_before_any_delete(demo: DemoTable, metadata_state_file: str, exit_code: int, why: str,
                               capsys) -> None:
    """With `metadata_state_file` on the metadata timeline, `rollback` of the failed write exits with
    `exit_code` saying `why`, and, under LAZY, so does the clean's rollback; no file changed."""
    _with_metadata_table(demo, failed_deltacommit=False)
    (Path(demo.base_path) / ".hoodie" / "metadata" / ".hoodie" / metadata_state_file).write_bytes(b"")
    files = {str(p): p.read_bytes() for p in Path(demo.base_path).rglob("*") if p.is_file()}
    assert main(["rollback", demo.base_path, demo.failed_instant]) == exit_code
    assert why in capsys.readouterr().err
    table = HoodieTable(demo.base_path)
    config = CleanConfig.from_write_config(WriteConfig.load(
        table.config.props, None, {"hoodie.cleaner.policy.failed.writes": "LAZY"}))
    with pytest.raises(HudiAssetsError, match=why):
        Cleaner(table, config, LocalEngine()).clean()
    assert {str(p): p.read_bytes() for p in Path(demo.base_path).rglob("*") if p.is_file()} == files


def test_pending_metadata_compaction_is_refused_before_any_delete(failed_table, capsys):
    """The rollback command and a LAZY clean's rollback refuse before deleting a failed write's files."""
    demo = failed_table("COPY_ON_WRITE")
    _refused_before_any_delete(demo, f"{demo.failed_instant}001.compaction.requested", 1,
                               "pending compaction", capsys)


def test_a_write_the_metadata_compaction_holds_is_refused_before_any_delete(failed_table, capsys):
    """0.15's validateRollback (a write at or before the metadata table's latest compaction cannot be
    rolled back there), checked before the first delete as on 1.x tables, not after the data files
    went."""
    demo = failed_table("COPY_ON_WRITE")
    _refused_before_any_delete(demo, f"{demo.failed_instant}001.commit", 2,
                               "at or before the metadata table's latest compaction", capsys)


def _live_write_the_compaction_holds(demo: DemoTable) -> str:
    """Beside the demo's failed write B, a live write A whose writer's clock lags: the metadata table
    compacted after its latest deltacommit, then A started at a time before that compaction's (two
    writers with skewed clocks), while B is after it. Returns A's instant time."""
    _with_metadata_table(demo, failed_deltacommit=False)
    metadata = MetadataTable(demo.base_path)
    latest = metadata.timeline.filter_completed().filter_actions({"deltacommit"}).last().timestamp
    compaction = compact(metadata, compaction_instant_time(latest)).timestamp
    last_commit = HoodieTable(demo.base_path).timeline.filter_completed().last().timestamp
    live = f"{last_commit[:14]}000"  # the same second as the last commit, by a clock behind
    assert live < last_commit < compaction < demo.failed_instant
    hoodie = Path(demo.base_path) / ".hoodie"
    for state_file in (f"{live}.commit.requested", f"{live}.inflight"):
        (hoodie / state_file).write_bytes(b"")
    beat = Path(demo.base_path) / heartbeat_path(live)
    beat.parent.mkdir(parents=True, exist_ok=True)
    beat.write_bytes(b"")  # renewed just now: its writer runs
    return live


def _state_files(demo: DemoTable, instant_time: str) -> list[str]:
    hoodie = Path(demo.base_path) / ".hoodie"
    return sorted(p.name for p in hoodie.iterdir() if p.name.startswith(instant_time))


@pytest.mark.parametrize("face", ["rollback", "lazy-clean"])
def test_a_live_write_the_compaction_holds_does_not_refuse_rolling_back_another(failed_table, face):
    """0.15's validateRollback checks the write being rolled back (`commitsRollback[0]`), not every
    pending one: rolling back B goes on, and A, which the compaction holds, stays pending."""
    demo = failed_table("COPY_ON_WRITE")
    live = _live_write_the_compaction_holds(demo)
    held = _state_files(demo, live)
    if face == "rollback":
        assert main(["rollback", demo.base_path, demo.failed_instant]) == 0
    else:
        table = HoodieTable(demo.base_path)
        config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, {
            "hoodie.cleaner.policy.failed.writes": "LAZY", "hoodie.cleaner.commits.retained": "10"}))
        Cleaner(table, config, LocalEngine()).clean()
    assert not _state_files(demo, demo.failed_instant)
    assert _state_files(demo, live) == held
    gone = {rel for rel in demo.failed_files if not (Path(demo.base_path) / rel).exists()}
    assert gone and not gone & _listed(demo)
    assert main(["metadata", demo.base_path, "--validate"]) == 0
    assert read_rows(demo.base_path) == expected_rows(demo)


def test_rolling_back_the_write_the_compaction_holds_is_still_refused(failed_table, capsys):
    """The target itself held: refused (exit 2) before anything is written, even with --force."""
    demo = failed_table("COPY_ON_WRITE")
    live = _live_write_the_compaction_holds(demo)
    files = {str(p): p.read_bytes() for p in Path(demo.base_path).rglob("*") if p.is_file()}
    assert main(["rollback", demo.base_path, live, "--force"]) == 2
    assert f"write {live} being rolled back is at or before" in capsys.readouterr().err
    assert {str(p): p.read_bytes() for p in Path(demo.base_path).rglob("*") if p.is_file()} == files
