"""Storage: operations on local files, and the base-path confinement that guards every delete."""

from __future__ import annotations

import pickle

import pytest

from hudi_assets.exceptions import PathOutsideTableError
from hudi_assets.storage import Storage


@pytest.fixture
def storage(tmp_path):
    base = tmp_path / "table"
    base.mkdir()
    (tmp_path / "outside.txt").write_text("keep me")
    return Storage(str(base))


def test_write_read_list_delete(storage, tmp_path):
    storage.write("p1/a.parquet", b"abc")
    storage.write("p1/sub/b", b"")
    listed = {s.path: s for s in storage.list("p1")}
    assert set(listed) == {"p1/a.parquet", "p1/sub"}
    assert listed["p1/a.parquet"].size == 3 and not listed["p1/a.parquet"].is_dir
    assert listed["p1/a.parquet"].mtime_ms > 0 and listed["p1/sub"].is_dir
    assert storage.read("p1/a.parquet") == b"abc"
    assert storage.list("missing") == []
    result = storage.delete_many(["p1/a.parquet", "p1/gone"])
    assert result.deleted == ["p1/a.parquet"] and result.missing == ["p1/gone"] and not result.failed
    assert not storage.exists("p1/a.parquet")


def test_create_if_absent_is_write_once(storage):
    assert storage.create_if_absent(".hoodie/1.commit", b"first")
    assert not storage.create_if_absent(".hoodie/1.commit", b"second")
    assert storage.read(".hoodie/1.commit") == b"first"
    assert [s.name for s in storage.list(".hoodie")] == ["1.commit"]  # no temp file left behind


@pytest.mark.parametrize("bad", ["../outside.txt", "p/../../outside.txt", "/etc/passwd", "file:/etc/passwd",
                                 "s3://bucket/x", ".."])
def test_paths_outside_base_are_refused_before_io(storage, tmp_path, bad):
    with pytest.raises(PathOutsideTableError):
        storage.delete_many(["p1/fine", bad])
    with pytest.raises(PathOutsideTableError):
        storage.read(bad)
    assert (tmp_path / "outside.txt").read_text() == "keep me"


def test_absolute_and_uri_paths_inside_base_resolve(storage, tmp_path):
    base = tmp_path / "table"
    assert storage.relativize(str(base / "p" / "f")) == "p/f"
    assert storage.relativize(f"file:{base}/p/f") == "p/f"
    assert storage.relativize(f"file://{base}/p/f") == "p/f"
    assert storage.uri("p/f") == f"file:{base}/p/f"
    with pytest.raises(PathOutsideTableError):
        storage.relativize(str(base) + "x/f")  # a sibling sharing the prefix is outside


def test_delete_dir_never_removes_base(storage):
    storage.write("p/f", b"1")
    assert storage.delete_dir("p")
    assert not storage.delete_dir("p")
    with pytest.raises(PathOutsideTableError):
        storage.delete_dir("")


def test_pickles_without_filesystem_handle(storage):
    storage.write("x", b"1")
    clone = pickle.loads(pickle.dumps(storage))
    assert clone.base_uri == storage.base_uri and clone.read("x") == b"1"
