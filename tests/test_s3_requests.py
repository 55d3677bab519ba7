"""Requests a clean plan makes on S3 (moto on 127.0.0.1): one LIST per directory of the table, each
partition listed once for discovery and its decision both, and a dry run's sizes from those listings."""

from __future__ import annotations

from collections import Counter

import pyarrow.fs as pafs
import pytest
from s3_server import moto_s3

from hudi_assets.clean import CleanConfig
from hudi_assets.clean.workflow import clean_table, plan_clean
from hudi_assets.demo import generate_table
from hudi_assets.engine import LocalEngine
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

pytestmark = pytest.mark.s3
PARTITIONS, GROUPS, COMMITS = 100, 25, 4  # 4 slices of 25 groups: 100 files per partition


class CountingHandler(pafs.FileSystemHandler):
    """Delegates to a real filesystem, counting the requests by kind."""

    def __init__(self, fs: pafs.FileSystem):
        self.fs = fs
        self.calls: Counter[str] = Counter()
        self.listed: Counter[str] = Counter()

    def get_type_name(self): return "counting"
    def normalize_path(self, path): return self.fs.normalize_path(path)
    def equals(self, other): return self is other

    def get_file_info(self, paths):
        self.calls["info"] += len(paths)
        return self.fs.get_file_info(paths)

    def get_file_info_selector(self, selector):
        self.calls["list"] += 1
        self.listed[selector.base_dir] += 1
        return self.fs.get_file_info(selector)

    def delete_file(self, path):
        if "/.hoodie/" not in path:  # the table's own files (the lock's release is one more)
            self.calls["delete_file"] += 1
        return self.fs.delete_file(path)

    def create_dir(self, path, recursive): return self.fs.create_dir(path, recursive=recursive)
    def delete_dir(self, path): return self.fs.delete_dir(path)
    def delete_dir_contents(self, path, missing_dir_ok=False):
        return self.fs.delete_dir_contents(path, missing_dir_ok)
    def delete_root_dir_contents(self): return self.fs.delete_dir_contents("/", accept_root_dir=True)
    def move(self, src, dest): return self.fs.move(src, dest)
    def copy_file(self, src, dest): return self.fs.copy_file(src, dest)
    def open_input_stream(self, path): return self.fs.open_input_stream(path)
    def open_input_file(self, path): return self.fs.open_input_file(path)
    def open_output_stream(self, path, metadata): return self.fs.open_output_stream(path, metadata=metadata)
    def open_append_stream(self, path, metadata): return self.fs.open_append_stream(path, metadata=metadata)


def _put_table(tmp_path, options, prefix: str, partitions: int) -> None:
    """A fast-mode table written locally, then put into moto's store directly (through HTTP, 10,000
    small PUTs take minutes on a busy machine)."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    local = tmp_path / prefix
    generate_table(Storage(str(local)), "COPY_ON_WRITE", partitions=partitions, files_per_partition=GROUPS,
                   commits=COMMITS, update_fraction=1.0, fast=True, savepoint=False, insert_overwrite=False,
                   failed_write=False)
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    for path in local.rglob("*"):
        if path.is_file():
            backend.put_object("lake", f"{prefix}/{path.relative_to(local).as_posix()}", path.read_bytes())


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    with moto_s3() as options:
        pafs.S3FileSystem(**options, allow_bucket_creation=True).create_dir("lake")
        _put_table(tmp_path_factory.mktemp("tables"), options, "big", PARTITIONS)
        _put_table(tmp_path_factory.mktemp("tables"), options, "small", 3)
        yield options


def _counted(options, prefix: str) -> tuple[HoodieTable, CountingHandler]:
    handler = CountingHandler(pafs.S3FileSystem(**options))
    return HoodieTable(Storage(f"s3://lake/{prefix}", options, pafs.PyFileSystem(handler))), handler


def test_a_full_plan_lists_each_directory_once(s3):
    table, handler = _counted(s3, "big")
    assert table.active_timeline and handler.listed["lake/big/.hoodie"] == 1  # the timeline: one LIST
    handler.calls.clear()
    handler.listed.clear()
    plan, planner = plan_clean(table, CleanConfig(commits_retained=1), LocalEngine(), with_sizes=True)
    assert plan.total_files >= PARTITIONS * GROUPS and len(plan.file_paths_to_delete) == PARTITIONS
    partitions = {f"lake/big/{p}" for p in plan.file_paths_to_delete}
    assert partitions <= set(handler.listed) and all(handler.listed[p] == 1 for p in partitions)
    directories = {"lake/big"} | {d.rpartition("/")[0] for d in partitions}  # root, years and months
    directories |= {d.rpartition("/")[0] for d in directories if d.count("/") > 2}
    assert set(handler.listed) == partitions | directories
    assert handler.calls["list"] == len(partitions | directories)  # one LIST per directory, no more
    assert handler.calls["info"] == 0  # no per-file requests: sizes came with the listings
    assert all(size == 0 for sizes in planner.file_sizes.values() for size in sizes)  # fast-mode files


def test_deletes_one_request_per_file(s3):
    """pyarrow's S3 filesystem has no batch delete and boto3 is not a dependency: each planned file
    is one DeleteObject request (the engine's threads issue them in parallel batches)."""
    table, handler = _counted(s3, "small")
    planned = plan_clean(table, CleanConfig(commits_retained=1), LocalEngine())[0].total_files
    result = clean_table(table, CleanConfig(commits_retained=1), LocalEngine())
    assert result.files_deleted == planned > 0
    assert handler.calls["delete_file"] == planned
