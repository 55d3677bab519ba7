"""The command line: output, exit codes, and bad input that names the file and changes nothing."""

from __future__ import annotations

import json
import shutil

import pytest

from hudi_assets.cli import main

REPLACE_TABLE = "sample_table__cow__v6_simplekeygen_nonhivestyle_overwritetable"
ROLLBACK_TABLE = "sample_table__mor__parquet__v6_nonpartitioned_rollback"


def _snapshot(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def table_copy(real_tables, tmp_path):
    def copy(name: str):
        if name not in real_tables:
            pytest.skip("../shared is absent")
        return shutil.copytree(real_tables[name], tmp_path / name)
    return copy


def test_timeline_json(table_copy, capsys):
    base = table_copy(ROLLBACK_TABLE)
    assert main(["timeline", str(base), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["table_type"] == "MERGE_ON_READ"
    assert [(r["instant"], r["action"], r["state"]) for r in out["instants"]] == [
        ("20250126040823628", "deltacommit", "COMPLETED"),
        ("20250126040936578", "rollback", "COMPLETED"),
        ("20250126060846931", "deltacommit", "COMPLETED"),
    ]
    assert out["instants"][1]["files_deleted"] == 1 and out["instants"][2]["bytes_written"] == 11835


def test_timeline_table(table_copy, capsys):
    assert main(["timeline", str(table_copy(REPLACE_TABLE))]) == 0
    out = capsys.readouterr().out
    assert "replacecommit" in out and "3 active, 0 archived instants" in out


@pytest.mark.parametrize(
    ("file", "content", "problem"),
    [
        ("20240707001302376.commit", b'{"partitionToWriteStats" : {', "not valid commit metadata JSON"),
        ("20240707001302376.commit", b"\x00\x01binary", "not valid commit metadata JSON"),
        ("20240707001399999.clean", b"Obj\x01garbage", "Avro"),
        ("20240707001399999.frobnicate", b"", "unknown instant action 'frobnicate'"),
    ],
)
def test_bad_timeline_files_exit_2_naming_the_file(table_copy, capsys, file, content, problem):
    base = table_copy(REPLACE_TABLE)
    (base / ".hoodie" / file).write_bytes(content)
    before = _snapshot(base)
    assert main(["timeline", str(base)]) == 2
    err = capsys.readouterr().err
    assert file in err and problem in err and err.count("\n") == 1
    assert _snapshot(base) == before


def test_missing_properties_and_missing_base_path(tmp_path, capsys):
    assert main(["timeline", str(tmp_path / "absent")]) == 2
    assert "base path does not exist" in capsys.readouterr().err
    (tmp_path / ".hoodie").mkdir()
    assert main(["timeline", str(tmp_path)]) == 2
    assert "hoodie.properties: missing" in capsys.readouterr().err


def test_v8_table_refusal_in_one_line_then_the_service_runs(table_copy, capsys):
    base = table_copy("sample_table__cow__v8_simplekeygen_nonhivestyle")
    before = _snapshot(base)
    assert main(["savepoint", "create", str(base), "20250713011316000"]) == 2
    err = capsys.readouterr().err
    assert "could not savepoint 20250713011316000: it is not on the active timeline" in err
    assert err.count("\n") == 1 and _snapshot(base) == before
    assert main(["savepoint", "create", str(base), "20250713011316909"]) == 0
    assert main(["timeline", str(base)]) == 0
    out = capsys.readouterr().out
    assert "20250713011316909     20250713011317225" in out and "savepoint" in out


def test_console_script_exit_codes(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "hudi_assets.cli", "timeline", str(tmp_path / "x")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "does not exist" in done.stderr
