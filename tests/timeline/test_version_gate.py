"""The version gate of Hudi 1.x tables (issue 23 item 1): versions 8 and 9 open with timeline layout 2;
newer versions, LANCE base files, other table formats and the states a broken upgrade leaves are
refused (exit 2, one line, nothing written); the table services run on 8/9 (the per-service gate:
test_table_config)."""

from __future__ import annotations

import pytest
from support.refdata import more_table_zips, unzip_table

from hudi_assets.cli import main
from hudi_assets.exceptions import UnsupportedTableError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config

V9 = {"hoodie.table.name": "t", "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": "9",
      "hoodie.timeline.layout.version": "2", "hoodie.timeline.path": "timeline",
      "hoodie.timeline.history.path": "history", "hoodie.table.format": "native"}


def _table(tmp_path, **props: str) -> Storage:
    storage = Storage(str(tmp_path))
    write_table_config(storage, {**V9, **props})
    storage.write(".hoodie/timeline/100.deltacommit.requested", b"")
    storage.write(".hoodie/timeline/100_200.deltacommit", b"")
    return storage


def _refused(storage: Storage, capsys, match: str) -> None:
    with pytest.raises(UnsupportedTableError, match=match):
        HoodieTable(storage).active_timeline  # noqa: B018 (the gate runs on open or on the first read)
    before = sorted(s.path for s in storage.list("", recursive=True))
    assert main(["timeline", storage.base_uri]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hudi-assets: error:" in err
    assert sorted(s.path for s in storage.list("", recursive=True)) == before


@pytest.mark.parametrize("version", ["8", "9"])
def test_versions_8_and_9_with_layout_2_open(tmp_path, version):
    table = HoodieTable(_table(tmp_path, **{"hoodie.table.version": version}))
    assert table.active_timeline.completion_times == {"100": "200"}


@pytest.mark.parametrize(("props", "match"), [
    ({"hoodie.table.version": "10"}, "table version 10 \\(newer than Hudi 1.1\\) is not supported"),
    ({"hoodie.table.version": "7"}, "table version 7 is not supported"),
    ({"hoodie.table.base.file.format": "LANCE"}, "base file format LANCE is not supported"),
    ({"hoodie.table.format": "iceberg"}, "hoodie.table.format=iceberg is not supported"),
    ({"hoodie.timeline.layout.version": "1"}, "layout version 1 does not belong to table version 9"),
    ({"hoodie.table.version": "6"}, "layout version 2 does not belong to table version 6"),
])
def test_what_the_gate_refuses(tmp_path, capsys, props, match):
    _refused(_table(tmp_path, **props), capsys, match)


def test_layout_1_instant_files_beside_the_timeline_folder_are_refused(tmp_path, capsys):
    """A 6 -> 8 upgrade that stopped before moving every instant file leaves both layouts."""
    storage = _table(tmp_path)
    storage.write(".hoodie/050.deltacommit", b"")
    _refused(storage, capsys, r"layout-1 instant files \(050.deltacommit\) beside .hoodie/timeline/")


def test_the_archived_folder_an_upgrade_leaves_is_normal(tmp_path):
    storage = _table(tmp_path, **{"hoodie.table.initial.version": "6"})
    storage.write(".hoodie/archived/.commits_.archive.1_1-0-1", b"not read")
    storage.write(".hoodie/hoodie.properties.backup.unrelated", b"")
    assert len(HoodieTable(storage).active_timeline) == 1


def test_the_java_written_lance_table_is_refused(tmp_path, capsys):
    names = [n for n in more_table_zips() if "lance" in n]
    if not names:
        pytest.skip("../shared is absent: no LANCE table")
    base = unzip_table(names[0], tmp_path)
    _refused(Storage(str(base)), capsys, "LANCE")
    assert main(["clean", str(base)]) == 2  # clean runs on version 9, not on LANCE base files
    err = capsys.readouterr().err
    assert "base file format LANCE is not supported" in err and err.count("\n") == 1


def test_a_refusal_exits_2_in_one_line_and_reading_works(tmp_path, capsys):
    storage = _table(tmp_path)
    before = sorted(s.path for s in storage.list("", recursive=True) if not s.is_dir)
    assert main(["savepoint", "create", storage.base_uri, "050"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "could not savepoint 050: it is not on the active timeline" in err
    assert sorted(s.path for s in storage.list("", recursive=True) if not s.is_dir) == before
    assert main(["timeline", storage.base_uri, "--json"]) == 0
    assert '"completion_time": "200"' in capsys.readouterr().out
    assert HoodieTable(storage).maintenance.status().completed_commits == 1


@pytest.mark.dagster
def test_the_dagster_graph_refuses_a_1x_table_on_a_skipped_step_not_a_failed_run(tmp_path):
    import dagster as dg

    from hudi_assets.orchestration.definitions import build_definitions
    from hudi_assets.orchestration.resources import HudiTableRegistry

    storage = _table(tmp_path / "t")
    before = sorted(s.path for s in storage.list("", recursive=True))
    registry = HudiTableRegistry(base_paths=[storage.base_uri], engine="local", dry_run=False)
    with dg.instance_for_test() as instance:  # definitions resolve against the live instance
        job = build_definitions(registry).resolve_job_def("hudi_maintenance__default__t")
        result = job.execute_in_process(instance=instance, raise_on_error=False)
        logs = [e.message for e in instance.all_logs(result.run_id) if e.message]
    assert result.success and not result.get_failed_step_keys()
    materialized = {e.step_materialization_data.materialization.asset_key.path[-1]
                    for e in result.get_asset_materialization_events()}
    assert "archive_batch" not in materialized
    assert any(m.startswith("refused: t") for m in logs)  # the hand-made timeline (clean runs on 9)
    assert sorted(s.path for s in storage.list("", recursive=True)) == before
