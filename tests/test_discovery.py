"""Table discovery under a root folder and on S3."""

from __future__ import annotations

import os

from support.s3_server import moto_s3

from hudi_assets.demo import generate_table
from hudi_assets.discovery import discover_tables
from hudi_assets.storage import Storage


def _make(root: str, rel: str, options=None) -> None:
    generate_table(Storage(f"{root}/{rel}", options), "COPY_ON_WRITE", partitions=1, commits=2, fast=True,
                   savepoint=False, insert_overwrite=False, failed_write=False)


def test_finds_tables_without_descending_into_them(tmp_path):
    for rel in ("a", "db/b", "db/deep/er/c"):
        _make(str(tmp_path), rel)
    (tmp_path / ".hidden" / "x" / ".hoodie").mkdir(parents=True)
    assert discover_tables(str(tmp_path)) == [f"{tmp_path}/a", f"{tmp_path}/db/b"]
    assert discover_tables(str(tmp_path), max_depth=4)[-1] == f"{tmp_path}/db/deep/er/c"
    assert discover_tables(f"{tmp_path}/a") == [f"{tmp_path}/a"]
    assert discover_tables(str(tmp_path / "absent")) == []


def test_passes_over_folders_whose_names_are_not_utf8(tmp_path):
    _make(str(tmp_path), "db/a")
    os.makedirs(os.fsencode(tmp_path) + b"/db/stray\xff/x")
    assert discover_tables(str(tmp_path)) == [f"{tmp_path}/db/a"]


def test_finds_tables_on_s3():
    with moto_s3() as options:
        import pyarrow.fs as pafs

        pafs.S3FileSystem(**options, allow_bucket_creation=True).create_dir("lake")
        _make("s3://lake/warehouse", "t1", options)
        _make("s3://lake/warehouse", "sales/t2", options)
        assert discover_tables("s3://lake/warehouse", options) == [
            "s3://lake/warehouse/sales/t2", "s3://lake/warehouse/t1"]
