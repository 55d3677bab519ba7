"""`Storage.delete_in`: the deletes of one directory's files relative to the directory opened once,
with `delete_many`'s outcomes (deleted, already gone, failed) and its refusal of other paths."""

from __future__ import annotations

import os

import pytest

from hudi_assets.exceptions import PathOutsideTableError
from hudi_assets.storage import Storage


@pytest.fixture
def storage(tmp_path):
    base = tmp_path / "table"
    base.mkdir()
    (tmp_path / "outside.txt").write_text("keep me")
    return Storage(str(base))


def test_deleted_missing_and_failed_as_relative_paths(storage):
    storage.write("p1/a.parquet", b"a")
    storage.write("p1/sub/x", b"")  # a directory: unlink fails and it is still there
    storage.write("top.parquet", b"t")
    result = storage.delete_in("p1", ["a.parquet", "gone.parquet", "sub"])
    assert result.deleted == ["p1/a.parquet"] and result.missing == ["p1/gone.parquet"]
    assert list(result.failed) == ["p1/sub"] and storage.exists("p1/sub/x")
    assert storage.delete_in("", ["top.parquet"]).deleted == ["top.parquet"]
    assert not storage.exists("p1/a.parquet") and not storage.exists("top.parquet")


def test_a_directory_already_gone_leaves_every_file_missing(storage):
    result = storage.delete_in("never", ["a.parquet", "b.parquet"])
    assert result.missing == ["never/a.parquet", "never/b.parquet"] and not result.deleted


@pytest.mark.parametrize("bad", ["../outside.txt", "..", "", "sub/x"])
def test_names_that_are_not_plain_are_refused_before_any_delete(storage, tmp_path, bad):
    storage.write("p1/a.parquet", b"a")
    with pytest.raises(PathOutsideTableError):
        storage.delete_in("p1", ["a.parquet", bad])
    assert storage.exists("p1/a.parquet") and (tmp_path / "outside.txt").read_text() == "keep me"
    with pytest.raises(PathOutsideTableError):
        storage.delete_in("../..", ["outside.txt"])
    assert os.path.exists(tmp_path / "outside.txt")
