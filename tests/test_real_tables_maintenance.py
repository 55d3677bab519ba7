"""Clean and archive every real Hudi-written v6 table with aggressive settings: hudi-rs reads the
latest snapshot the same before and after, and a second run has nothing left to do."""

from __future__ import annotations

import shutil

import pytest
from hudi import HudiTable
from support.refdata import params_or_skip, table_zips

from hudi_assets.cli import main
from hudi_assets.timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT, Instant

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


def _data_files(base) -> set[str]:
    return {str(p) for p in _files(base) if ".hoodie" not in p.parts
            and (p.suffix == ".parquet" or ".log." in p.name)}


def _latest_slice_files(base: str) -> set[str]:
    """Files of the latest file slices, as hudi-rs (an independent reader) sees them."""
    files = set()
    for s in HudiTable(base).get_file_slices():
        if s.base_file_name:
            files.add(s.base_file_relative_path())
        files.update(s.log_files_relative_paths())
    return files


def _completed_write_times(base) -> set[str]:
    """Instant times of completed writes, from the timeline's file names alone."""
    instants = (Instant.parse_file_name(p.name) for p in (base / ".hoodie").iterdir())
    return {i.timestamp for i in instants
            if i is not None and i.is_completed and i.action in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)}


def _instant_of(rel: str) -> str:
    name = rel.rpartition("/")[2]
    return name.split("_")[1].split(".")[0] if name.startswith(".") else name.rpartition("_")[2].split(".")[0]


@pytest.mark.parametrize("conf", [BY_COMMITS, BY_VERSIONS], ids=["commits", "file_versions"])
@pytest.mark.parametrize("name", params_or_skip(table_zips(6), "v6 tables"))
def test_clean_and_archive_real_tables(real_tables, tmp_path, name, conf):
    base = shutil.copytree(real_tables[name], tmp_path / name)
    before, files_before = _rows(str(base)), _files(base)
    latest, data_before = _latest_slice_files(str(base)), _data_files(base)
    committed = _completed_write_times(base)
    assert main(["clean", str(base), "--engine", "local", *conf]) == 0
    data_after = _data_files(base)
    assert not latest - data_after  # no file of a latest slice went
    if conf is BY_VERSIONS:
        # One version kept: every committed data file left is one of a latest slice (files of writes
        # that never completed are rollback's, not the cleaner's). So where older versions existed,
        # the clean must have deleted them.
        leftover = {f for f in data_after - latest if _instant_of(f) in committed}
        assert not leftover, sorted(leftover)
        assert (data_before - data_after) == {f for f in data_before - latest if _instant_of(f) in committed}
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
