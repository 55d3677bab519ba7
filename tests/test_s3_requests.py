"""Requests a clean makes on S3 (moto on 127.0.0.1, counted at its HTTP layer): a full plan lists
each partition once, plus the directories above them, and asks nothing per file; deletes go in
DeleteObjects batches of up to 1,000 keys, and a key the store refuses is a failed delete."""

from __future__ import annotations

import math
from collections import Counter

import pyarrow.fs as pafs
import pytest
from support.s3_server import moto_s3

from hudi_assets.clean import CleanConfig
from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.demo import generate_table
from hudi_assets.engine import LocalEngine
from hudi_assets.exceptions import DeleteFailedError
from hudi_assets.storage import S3_DELETE_BATCH, Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata

pytestmark = [pytest.mark.s3, pytest.mark.large]
# 881 to 997 objects a partition (up to 9 slices of 110 file groups, the metafile), 98,999 in all:
# 100 x 1,000 files, each partition one LIST page (S3 returns up to 1,000 keys a page).
PARTITIONS, GROUPS, COMMITS = 100, 110, 9
RETAIN_ONE = CleanConfig(commits_retained=1)  # 8 slices of each group go


def _put_table(tmp_path, prefix: str, partitions: int) -> HoodieTable:
    """A fast-mode table written locally, then put into moto's store directly (through HTTP, 100,000
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
    return HoodieTable(str(local))


def _files(table: HoodieTable, plan) -> list[str]:
    """A plan's files, relative to the table, in plan order."""
    return [table.storage.relativize(f.file_path) for infos in plan.file_paths_to_delete.values()
            for f in infos]


def _left(storage: Storage) -> set[str]:
    """Every object of a table, by one recursive listing (a `exists` per missing key costs a HEAD
    and a LIST, which moto answers by a scan of the bucket)."""
    return {s.path for s in storage.list("", recursive=True) if not s.is_dir}


def _planned(table: HoodieTable) -> list[str]:
    return _files(table, Cleaner(table, RETAIN_ONE, LocalEngine()).plan())


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """(options, request counts, keys DeleteObjects refuses, local copies by name) of a server
    holding three tables."""
    requests: Counter[str] = Counter()
    refused: set[str] = set()
    with moto_s3(requests, refused) as options:
        # moto answers a LIST by a scan of the whole bucket (100,000 keys), in this process: more
        # than pyarrow's 3 s a request on a busy machine.
        options = {**options, "request_timeout": 120.0}
        pafs.S3FileSystem(**options, allow_bucket_creation=True).create_dir("lake")
        tables = {name: _put_table(tmp_path_factory.mktemp("tables"), name, partitions)
                  for name, partitions in (("big", PARTITIONS), ("small", 3), ("refusing", 2))}
        yield options, requests, refused, tables


def test_a_full_plan_lists_each_partition_once_plus_discovery(s3):
    options, requests, _, local = s3
    local = local["big"]
    table = HoodieTable(Storage("s3://lake/big", options))
    assert table.active_timeline
    requests.clear()
    cleaner = Cleaner(table, RETAIN_ONE, LocalEngine())
    plan = cleaner.plan(with_sizes=True)
    planner = cleaner.planner
    partitions = list(plan.file_paths_to_delete)
    # The same decisions as on a local disk (whose listing order differs from S3's sorted keys).
    assert len(partitions) == PARTITIONS and sorted(_files(table, plan)) == sorted(_planned(local))
    discovery = {"", "2024"} | {p.rpartition("/")[0] for p in partitions}  # the root, year and months
    assert requests["LIST"] == PARTITIONS + len(discovery)
    assert set(requests) == {"LIST"}  # nothing per file: the sizes came with the listings
    assert all(size == 0 for sizes in planner.file_sizes.values() for size in sizes)  # fast-mode files


def test_deletes_go_in_batches_of_up_to_1000_keys(s3):
    options, requests, _, local = s3
    storage = Storage("s3://lake/small", options)
    planned = _planned(local["small"])
    requests.clear()
    result = Cleaner(HoodieTable(storage), RETAIN_ONE, LocalEngine()).clean()
    assert result.files_deleted == len(planned) > 2 * S3_DELETE_BATCH
    assert requests["DELETE_OBJECTS"] == math.ceil(len(planned) / S3_DELETE_BATCH)
    assert requests["DELETE"] == 0  # no data file deleted one request at a time
    assert not _left(storage) & set(planned)


def test_keys_the_store_refuses_are_failed_deletes(s3):
    options, _, refused, _ = s3
    storage = Storage("s3://lake/refusing", options)
    doomed = _planned(HoodieTable(storage))
    kept = {doomed[0], doomed[-1]}
    refused.update(f"refusing/{rel}" for rel in kept)
    try:
        with pytest.raises(DeleteFailedError) as failed:
            Cleaner(HoodieTable(storage), RETAIN_ONE, LocalEngine()).clean()
    finally:
        refused.clear()
    assert sorted(failed.value.paths) == sorted(storage.uri(rel) for rel in kept)
    left = _left(storage)
    assert kept <= left and not left & set(doomed[1:-1])
    timeline = HoodieTable(storage).active_timeline
    [clean] = timeline.clean_timeline().filter_completed()
    record = metadata.completed_metadata(timeline, clean)
    failed_names = {n for p in record["partitionMetadata"].values() for n in p["failedDeleteFiles"]}
    assert failed_names == {rel.rpartition("/")[2] for rel in kept}
    assert record["totalFilesDeleted"] == len(doomed) - len(kept)
