"""Storage: operations on local files, and the base-path confinement that guards every delete."""

from __future__ import annotations

import os
import pickle
import resource
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pyarrow.fs as pafs
import pytest

from hudi_assets.exceptions import CorruptFileError, InvalidConfigError, PathOutsideTableError, StorageError
from hudi_assets.storage import Storage
from hudi_assets.storage_options import GCS_RETRY_LIMIT_S, gcs_options, s3_options


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


# ------------------------------------------------------------------------------ failed writes
@pytest.mark.parametrize("write", ["write", "create_if_absent"])
def test_write_under_a_regular_file_fails_naming_the_target(storage, tmp_path, write):
    storage.write("p", b"a file where a folder is expected")
    with pytest.raises(StorageError, match=r"table/p/\.hoodie/1\.commit: could not be written"):
        getattr(storage, write)("p/.hoodie/1.commit", b"x")  # not mistaken for "already exists"
    assert sorted(p.name for p in (tmp_path / "table").iterdir()) == ["p"]


@contextmanager
def _limit_file_size(limit: int) -> Iterator[None]:
    """Writes past `limit` bytes fail with EFBIG part-way, as on a full disk; lifted on exit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def test_partial_write_leaves_old_content_and_no_temp_file(storage, tmp_path):
    storage.write(".hoodie/hoodie.properties", b"old")
    storage.mkdirs(".hoodie/archived")
    with _limit_file_size(100):
        with pytest.raises(StorageError, match="File too large"):
            storage.write(".hoodie/hoodie.properties", b"n" * 10_000)
        with pytest.raises(StorageError, match="File too large"):
            storage.create_if_absent(".hoodie/archived/.commits_.archive.1_1-0-1", b"a" * 10_000)
    assert storage.read(".hoodie/hoodie.properties") == b"old"
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        "outside.txt", "table/.hoodie/hoodie.properties"]


# --------------------------------------------------------------------------- non-UTF-8 names
def test_listings_refuse_names_that_are_not_utf8(storage, tmp_path):
    base = os.fsencode(tmp_path / "table")
    storage.write("p/ok.parquet", b"1")
    storage.write("p/d\u00e9j\u00e0.parquet", b"1")  # UTF-8 beyond ASCII is a fine name
    assert sorted(storage.list_names("p")[0]) == ["déjà.parquet", "ok.parquet"]
    os.mkdir(base + b"/p/bad\xff")
    for listing in (lambda: storage.list_names("p"), lambda: storage.list("p")):
        with pytest.raises(CorruptFileError, match=r"table/p/bad\\xff: name is not valid UTF-8"):
            listing()
    files, dirs = storage.list_names("p", skip_undecodable=True)
    assert sorted(files) == ["déjà.parquet", "ok.parquet"] and dirs == []


def test_a_listing_splits_files_from_directories_as_lstat_does(tmp_path):
    """Symlinks list as files, whatever they point at; a directory gone or not one lists empty."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "f").write_bytes(b"1")
    (tmp_path / "to_dir").symlink_to(tmp_path / "sub", target_is_directory=True)
    (tmp_path / "to_file").symlink_to(tmp_path / "f")
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    storage = Storage(str(tmp_path))
    listing = storage.list_directory()
    assert sorted(listing.files) == ["broken", "f", "to_dir", "to_file"] and listing.dirs == ["sub"]
    for gone in ("missing", "f"):
        assert storage.list_directory(gone).files == storage.list_directory(gone).dirs == []


# ----------------------------------------------------------------------------- symlinked base
def test_paths_through_a_symlinked_base_are_inside(tmp_path):
    real = tmp_path / "real"
    (real / "p").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    via_link, via_real = Storage(str(link)), Storage(str(real))
    for storage in (via_link, via_real):
        assert storage.relativize(f"file:{real}/p/f") == "p/f"
        assert storage.relativize(f"file:{link}/p/f") == "p/f"
        assert storage.relativize(f"{link}/p/gone/f") == "p/gone/f"  # a deleted folder resolves too
        for outside in (f"{tmp_path}/alias/f", f"{link}/../elsewhere/f", f"{tmp_path}/realx/f"):
            with pytest.raises(PathOutsideTableError):
                storage.relativize(outside)
    assert via_link.uri("p/f") == f"file:{link}/p/f"  # recorded paths keep the spelling given


# --------------------------------------------------------------------------------- options
def test_storage_options_are_typed_and_checked():
    typed = s3_options({"anonymous": "false", "connect_timeout": "2.5", "retry_strategy": "standard:1",
                        "endpoint_override": "h:1", "allow_bucket_creation": True})
    assert typed["anonymous"] is False and typed["connect_timeout"] == 2.5
    assert isinstance(typed["retry_strategy"], pafs.AwsStandardS3RetryStrategy)
    assert typed["endpoint_override"] == "h:1" and typed["allow_bucket_creation"] is True
    assert gcs_options({})["retry_time_limit"] == timedelta(seconds=GCS_RETRY_LIMIT_S)
    assert gcs_options({"retry_time_limit": "90"})["retry_time_limit"] == timedelta(seconds=90)
    with pytest.raises(InvalidConfigError, match="'endpoint': not an option of pyarrow's S3FileSystem"):
        Storage("s3://b/t", {"endpoint": "h:1"})
    with pytest.raises(InvalidConfigError, match="default_metadata'"):
        s3_options({"default_metadata": "k=v"})


# `delete_in`: one directory's files deleted relative to the directory opened once, with
# `delete_many`'s outcomes (deleted, already gone, failed) and its refusal of other paths.
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
