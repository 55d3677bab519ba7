"""Clean and archive every real Hudi-written v6 table with aggressive settings: hudi-rs reads the
latest snapshot the same before and after, and a second run has nothing left to do."""

from __future__ import annotations

import shutil

import pytest
from hudi import HudiTable
from refdata import params_or_skip, table_zips

from hudi_assets.cli import main

BY_COMMITS = ["--hoodie-conf", "hoodie.cleaner.commits.retained=1",
              "--hoodie-conf", "hoodie.keep.min.commits=2", "--hoodie-conf", "hoodie.keep.max.commits=3"]
BY_VERSIONS = ["--hoodie-conf", "hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS",
               "--hoodie-conf", "hoodie.cleaner.fileversions.retained=1",
               "--hoodie-conf", "hoodie.keep.min.commits=2", "--hoodie-conf", "hoodie.keep.max.commits=3"]
OVERWRITE_TABLE = "sample_table__cow__v6_simplekeygen_nonhivestyle_overwritetable"


def _rows(base: str) -> list[str]:
    """Every row, whole (some tables have no meta fields), in a comparable form."""
    return sorted(repr(sorted(r.items())) for batch in HudiTable(base).read() for r in batch.to_pylist())


def _files(base) -> list:
    return sorted(p.relative_to(base) for p in base.rglob("*") if p.is_file())


@pytest.mark.parametrize("conf", [BY_COMMITS, BY_VERSIONS], ids=["commits", "file_versions"])
@pytest.mark.parametrize("name", params_or_skip(table_zips(6), "v6 tables"))
def test_clean_and_archive_real_tables(real_tables, tmp_path, name, conf):
    base = shutil.copytree(real_tables[name], tmp_path / name)
    before, files_before = _rows(str(base)), _files(base)
    assert main(["clean", str(base), "--engine", "local", *conf]) == 0
    assert main(["archive", str(base), *conf]) == 0
    assert _rows(str(base)) == before
    after = _files(base)
    assert main(["clean", str(base), "--engine", "local", *conf]) == 0
    assert main(["archive", str(base), *conf]) == 0
    assert _files(base) == after  # nothing left to do
    if name == OVERWRITE_TABLE and conf is BY_VERSIONS:
        # insert_overwrite_table replaced partitions 10 and 20 whole: both go, with their files.
        assert not (base / "10").exists() and not (base / "20").exists()
        assert len([f for f in files_before if f.suffix == ".parquet"]) == 5
        assert len([f for f in after if f.suffix == ".parquet"]) == 1
