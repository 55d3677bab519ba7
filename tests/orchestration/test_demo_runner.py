"""The README's first command: demo tables, then the whole graph, printing what was done."""

from __future__ import annotations

import pytest

from hudi_assets.orchestration.demo import main

pytestmark = [pytest.mark.spark, pytest.mark.dagster]


def test_demo_cleans_and_archives_both_tables_and_hudi_rs_reads_them_the_same(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    root = tmp_path / "demo"
    assert main([str(root)]) == 0
    out = capsys.readouterr().out
    for table in ("demo_cow", "demo_mor"):
        assert f"{table}: succeeded" in out
    assert out.count("hudi-rs reads the latest snapshot the same") == 2
    assert "FAILED" not in out and out.count("instants_archived=9") == 1
    # demo_mor's metadata table was last compacted after its 7th commit: archival stops there.
    assert out.count("instants_archived=7") == 1
    assert (root / ".dagster_home" / "dagster.yaml").exists()
    assert any((root / "demo_mor" / ".hoodie" / "archived").iterdir())
    (root / "foreign.txt").write_text("not ours")
    assert main([str(root)]) == 2  # never replaces a folder holding anything else
    assert (root / "foreign.txt").exists()
