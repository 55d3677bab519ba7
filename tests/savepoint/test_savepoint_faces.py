"""The savepoint faces (issue 28 item 4): the command line (output, exit codes, nothing written on a
refusal) and `table.maintenance`; and create, list, delete on the Java-written v6, v8 and v9 tables,
the lists against hudi-rs."""

from __future__ import annotations

import json

import pytest
from hudi import HudiReadOptions, HudiTableBuilder
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets.cli.main import main
from hudi_assets.demo import generate_table
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable


@pytest.fixture(params=[6, 9], ids=["v6", "v9"])
def made(tmp_path, request):
    return generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", partitions=2, commits=6, seed=7,
                          savepoint=False, failed_write=False, pending_compaction=False,
                          table_version=request.param)


def _savepoint_files(made) -> list[str]:
    return sorted(s.path for s in made.storage.list(".hoodie", recursive=True) if ".savepoint" in s.path)


def test_create_list_delete_on_the_command_line(made, capsys):
    instant = made.completed_commits[2]
    assert main(["savepoint", "create", made.base_path, instant, "--comment", "audit", "--user", "ana"]) == 0
    assert f"savepoint {instant} created" in capsys.readouterr().out
    assert main(["savepoint", "list", made.base_path, "--json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert (entry["instant"], entry["savepointed_by"], entry["comments"]) == (instant, "ana", "audit")
    assert entry["files"] > 0 and entry["bytes_kept_alive"] >= 0
    assert main(["savepoint", "list", made.base_path]) == 0
    out = capsys.readouterr().out
    assert instant in out and "ana" in out and "audit" in out
    assert main(["savepoint", "delete", made.base_path, instant]) == 0
    assert _savepoint_files(made) == []
    assert main(["savepoint", "list", made.base_path]) == 0
    assert "no savepoints" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["create", "20200101000000000"], ["delete", "20200101000000000"]])
def test_refusals_exit_2_and_write_nothing(made, capsys, argv):
    before = sorted(s.path for s in made.storage.list(".hoodie", recursive=True))
    assert main(["savepoint", argv[0], made.base_path, *argv[1:]]) == 2
    assert "20200101000000000" in capsys.readouterr().err
    assert sorted(s.path for s in made.storage.list(".hoodie", recursive=True)) == before


def test_maintenance_methods(made):
    maintenance = HoodieTable(made.storage).maintenance
    savepoint = maintenance.savepoint(comment="before the backfill")
    assert savepoint.instant == made.completed_commits[-1]
    assert [u.savepoint.instant for u in maintenance.savepoints()] == [savepoint.instant]
    maintenance.delete_savepoint(savepoint.instant)
    assert maintenance.savepoints() == []


JAVA_TABLES = [*table_zips(6), *table_zips(8), *table_zips(9)]


@pytest.mark.parametrize("name", params_or_skip(JAVA_TABLES, "Java-written tables"))
def test_create_list_delete_on_java_written_tables(name, tmp_path):
    """Create lists hudi-rs's file slices as of the instant (on 8/9 sliced by completion time, from the
    metadata table where there is one), list shows it, delete removes its files."""
    base = unzip_table(name, tmp_path)
    table = HoodieTable(str(base))
    commits = table.active_timeline.completed_commits_timeline(table.is_mor)
    if not commits:
        pytest.skip(f"{name} has no completed commit")
    instant = commits.last().timestamp
    savepoint = table.maintenance.savepoint(instant)
    theirs: dict[str, set[str]] = {}
    hudi = HudiTableBuilder.from_base_uri(str(base)).build()
    for s in hudi.get_file_slices(HudiReadOptions().with_as_of_timestamp(instant)):
        names = theirs.setdefault(s.partition_path, set())
        names.update([s.base_file_name] if s.base_file_name else [])
        names.update(s.log_file_names)
    assert {p: set(names) for p, names in savepoint.files.items() if names} == theirs
    assert [u.savepoint for u in table.maintenance.savepoints()] == [savepoint]
    table.maintenance.delete_savepoint(instant)
    assert not [p for p in (base / ".hoodie").rglob("*.savepoint*")]
    assert table.maintenance.savepoints() == []
