"""Partition paths in clean plans, judged on their canonical form: Hive-style values with `#`, `?`,
`%` and spaces are names (Hudi writes them without URL encoding), a `file:` URI into `.hoodie` is
`.hoodie`, and a partition directory is deleted only when nothing live lies beneath it at any depth."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support.builders import pending_clean
from support.failed_tables import read_rows

from hudi_assets.clean import CleanConfig, CleanPlanner
from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.cli import main
from hudi_assets.config import WriteConfig
from hudi_assets.demo import generate_table
from hudi_assets.exceptions import UnsafePlanError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

SMALL = {"commits": 6, "files_per_partition": 2, "records_per_file": 3, "update_fraction": 0.5, "seed": 5}
RETAIN = "hoodie.cleaner.commits.retained=1"


def _listing(root: Path) -> dict[str, int]:
    return {str(Path(d, n).relative_to(root)): Path(d, n).lstat().st_size
            for d, dirs, files in os.walk(root) for n in dirs + files}


def _clean(base: Path, face: str) -> int:
    """A clean through the CLI or the API; the API's refusal as the CLI's exit code."""
    if face == "cli":
        return main(["clean", str(base), "--engine", "local", "--hoodie-conf", RETAIN])
    try:
        HoodieTable(str(base), hoodie_conf=dict([RETAIN.split("=")])).maintenance.clean(engine="local")
    except UnsafePlanError as refused:
        print(refused, file=sys.stderr)
        return 2
    return 0


@pytest.mark.parametrize("face", ["cli", "api"])
def test_partitions_named_with_hash_question_mark_and_percent_are_cleaned(tmp_path, face):
    base = tmp_path / "t"
    generate_table(Storage(str(base)), "COPY_ON_WRITE", name="t",
                   partitions=["city=a#b?c", "city=São Paulo %41"], **SMALL)
    rows = read_rows(str(base))
    assert _clean(base, face) == 0
    assert list((base / ".hoodie").glob("*.clean"))  # completed, not refused
    assert read_rows(str(base)) == rows


def _pending_partition_delete(base: Path, partition: str) -> str:
    """Our own plan for the table, plus `partition` to delete; left pending. Returns its file name."""
    table = HoodieTable(str(base))
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None,
                                                            dict([RETAIN.split("=")])))
    plan = CleanPlanner(table, config).plan()
    plan.partitions_to_delete.append(partition)
    return pending_clean(table, plan).file_name


def _refused(tmp_path, capsys, base: Path, plan_file: str, problem: str, face: str) -> None:
    rows, before = read_rows(str(base)), _listing(tmp_path)
    assert _clean(base, face) == 2
    err = capsys.readouterr().err
    assert plan_file in err and problem in err, err
    assert _listing(tmp_path) == before and read_rows(str(base)) == rows


@pytest.mark.parametrize("face", ["cli", "api"])
def test_file_uri_into_the_metafolder_is_refused(tmp_path, capsys, face):
    base = tmp_path / "t"
    generate_table(Storage(str(base)), "COPY_ON_WRITE", name="t", partitions=["2024/01/01"], **SMALL)
    (base / ".hoodie" / "archived").mkdir(exist_ok=True)
    (base / ".hoodie" / "archived" / ".hoodie_partition_metadata").write_text("#\n")
    (base / ".hoodie" / "archived" / "keep.archive.1_1-0-1").write_bytes(b"archived timeline")
    plan_file = _pending_partition_delete(base, f"file:{base}/.hoodie/archived")
    _refused(tmp_path, capsys, base, plan_file, "under .hoodie", face)


@pytest.mark.parametrize("face", ["cli", "api"])
def test_partition_over_a_nested_live_partition_is_refused(tmp_path, capsys, face):
    base = tmp_path / "t"
    generate_table(Storage(str(base)), "COPY_ON_WRITE", name="t",
                   partitions=["2024/01/05", "2024/01/06/sub"], **SMALL)
    (base / "2024" / "01" / "06" / ".hoodie_partition_metadata").write_text("#\n")  # no file group of its own
    plan_file = _pending_partition_delete(base, "2024/01/06")
    _refused(tmp_path, capsys, base, plan_file, "holds partition 2024/01/06/sub beneath it", face)


def test_a_new_plan_refused_before_it_is_written_names_nothing_to_discard(tmp_path):
    base = tmp_path / "t"
    generate_table(Storage(str(base)), "COPY_ON_WRITE", name="t", partitions=["2024/01/01"], **SMALL)
    table = HoodieTable(str(base))
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None,
                                                            dict([RETAIN.split("=")])))
    plan = CleanPlanner(table, config).plan()
    plan.partitions_to_delete.append(".hoodie")
    before = _listing(tmp_path)
    with pytest.raises(UnsafePlanError) as refused:
        Cleaner(table, config).request(plan)
    assert "under .hoodie" in str(refused.value) and "--discard-pending" not in str(refused.value)
    assert _listing(tmp_path) == before
