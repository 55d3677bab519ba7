"""`hudi-assets metadata` on the Java-written metadata tables of the real v8/v9 tables, checked against
hudi-rs (which lists file slices from the `files` partition for table version >= 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets.cli import main
from hudi_assets.metadata import MetadataTable
from hudi_assets.savepoint.files import latest_files_as_of, listing_view
from hudi_assets.table import HoodieTable

WITH_MDT = [name for name in table_zips(8) if name.endswith("v8_trips_8i3u1d")] + table_zips(9)
WITHOUT_MDT = [name for name in table_zips(8) if not name.endswith("v8_trips_8i3u1d")]


def _snapshot(base: Path) -> dict[str, bytes]:
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def _first_base_file(listing: dict[str, dict[str, int]]) -> tuple[str, str]:
    return next((partition, name) for partition, files in sorted(listing.items())
                for name in sorted(files) if not name.startswith("."))


def _run_json(capsys, *args: str) -> tuple[int, dict]:
    code = main(["metadata", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT, "v8/v9 tables with a metadata table"))
def test_listing_has_every_latest_file_slice_hudi_rs_reports(name, tmp_path, capsys):
    hudi = pytest.importorskip("hudi")
    base = unzip_table(name, tmp_path)
    before = _snapshot(base)
    code, view = _run_json(capsys, str(base))
    assert code == 0
    assert view["table_version"] in (8, 9)
    assert "files" in [p["partition"] for p in view["metadata_partitions"]]
    expected = {}
    for file_slice in hudi.HudiTable(str(base)).get_file_slices():
        files = expected.setdefault(file_slice.partition_path, {})
        if file_slice.base_file_name:
            files[file_slice.base_file_name] = file_slice.base_file_size
        files.update(zip(file_slice.log_file_names, file_slice.log_file_sizes, strict=True))
    assert expected, "hudi-rs lists no file slice"
    for partition, files in expected.items():
        listed = view["files"][partition]
        assert {f: listed.get(f) for f in files} == files
    assert _snapshot(base) == before


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT, "v8/v9 tables with a metadata table"))
def test_validate_is_consistent_then_names_a_removed_base_file(name, tmp_path, capsys):
    base = unzip_table(name, tmp_path)
    assert main(["metadata", str(base), "--validate"]) == 0
    assert "consistent" in capsys.readouterr().out
    listing = MetadataTable(str(base)).files_listing.partitions
    partition, victim = _first_base_file(listing)
    files = listing[partition]
    (base / partition / victim).unlink()
    assert main(["metadata", str(base), "--validate"]) == 1
    out = capsys.readouterr().out
    assert f"{victim}: listed ({files[victim]} bytes) but not on storage" in out
    assert "1 differences" in out


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT, "v8/v9 tables with a metadata table"))
def test_a_base_file_of_another_size_is_drift(name, tmp_path, capsys):
    base = unzip_table(name, tmp_path)
    metadata = MetadataTable(str(base))
    partition, victim = _first_base_file(metadata.files_listing.partitions)
    files = metadata.files_listing.partitions[partition]
    with open(base / partition / victim, "ab") as grown:
        grown.write(b"x")
    assert main(["metadata", str(base), "--validate"]) == 1
    expected = f"{victim}: listed with {files[victim]} bytes, {files[victim] + 1} on storage"
    assert expected in capsys.readouterr().out


@pytest.mark.parametrize("name", params_or_skip(WITHOUT_MDT, "v8 tables without a metadata table"))
def test_table_without_metadata_table_exits_2(name, tmp_path, capsys):
    base = unzip_table(name, tmp_path)
    assert main(["metadata", str(base)]) == 2
    err = capsys.readouterr().err
    assert "has no metadata table" in err and err.count("\n") == 1


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT[:1], "the v8 table with a metadata table"))
def test_a_savepoint_lists_from_the_metadata_table_what_storage_lists(name, tmp_path):
    """Create reads the files partition (`hoodie.metadata.enable`, Hudi's isMetadataTableAvailable) and
    leaves the metadata table as it was (Hudi writes nothing into it for a savepoint)."""
    base = unzip_table(name, tmp_path)
    assert MetadataTable(str(base)).files_listing.total_files > 0
    table = HoodieTable(str(base))
    assert table.maintenance.status().completed_commits == 7
    mdt_before = sorted(p.name for p in (base / ".hoodie" / "metadata").rglob("*"))
    instant = table.active_timeline.completed_commits_timeline(True).timestamps[-2]
    savepoint = table.maintenance.savepoint(instant)
    assert savepoint.files == latest_files_as_of(listing_view(table, None, metadata_enabled=False), instant)
    assert savepoint.file_count > 0
    assert sorted(p.name for p in (base / ".hoodie" / "metadata").rglob("*")) == mdt_before


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT[:1], "the v8 table with a metadata table"))
def test_default_output_shows_file_groups_compaction_and_partitions(name, tmp_path, capsys):
    base = unzip_table(name, tmp_path)
    assert main(["metadata", str(base)]) == 0
    out = capsys.readouterr().out
    assert "files: 1 file groups" in out
    assert "files-0000-0: base files-0000-0_23-1133-3302_20251220210130942.hfile" in out
    assert "latest compaction: 20251220210130942; 1 deltacommits since (20251220210130911)" in out
    assert "city=chennai: 4 files" in out
