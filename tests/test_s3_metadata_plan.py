"""On S3 (moto on 127.0.0.1), a clean planned from the metadata table lists no data partition: the
LIST requests of planning are replaced by reads of the metadata table's files."""

from __future__ import annotations

from collections import Counter

import pyarrow.fs as pafs
import pytest
from support.builders import TableBuilder, base_file
from support.s3_server import moto_s3

from hudi_assets.clean import CleanConfig
from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.engine import LocalEngine
from hudi_assets.metadata.initializer import initialize_from_filesystem
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

pytestmark = pytest.mark.s3
PARTITIONS = [f"p{n}" for n in range(8)]
COMMITS = [f"2024010100000{n}000" for n in range(1, 6)]


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    local = tmp_path_factory.mktemp("tables") / "t"
    b = TableBuilder(local)
    for t in COMMITS:
        b.commit(t, {p: [base_file(f"a{p}", t), base_file(f"b{p}", t)] for p in PARTITIONS})
    initialize_from_filesystem(b.table(), {})
    requests: Counter[str] = Counter()
    with moto_s3(requests) as options:
        pafs.S3FileSystem(**options, allow_bucket_creation=True).create_dir("lake")
        backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
        for path in local.rglob("*"):
            if path.is_file():
                backend.put_object("lake", f"t/{path.relative_to(local).as_posix()}", path.read_bytes())
        yield options, requests


def _plan(s3, metadata_enabled: bool):
    """The plan, and the LIST requests it made outside `.hoodie` (counted at the server)."""
    options, requests = s3
    table = HoodieTable(Storage("s3://lake/t", options))
    config = CleanConfig(commits_retained=2, metadata_enabled=metadata_enabled)
    requests.clear()
    plan = Cleaner(table, config, LocalEngine()).plan(with_sizes=True)
    return plan, requests["LIST"]


def test_planning_from_the_metadata_table_lists_no_data_partition(s3):
    plan, listed = _plan(s3, metadata_enabled=True)
    assert sorted(plan.file_paths_to_delete) == PARTITIONS and plan.total_files == 2 * 2 * len(PARTITIONS)
    assert listed == 1  # the base path's own probe (a max-keys=1 LIST of `t/`), no partition
    from_listing, listed = _plan(s3, metadata_enabled=False)
    assert listed >= 1 + len(PARTITIONS)
    assert {p: [f.file_path for f in files] for p, files in plan.file_paths_to_delete.items()} == {
        p: [f.file_path for f in files] for p, files in from_listing.file_paths_to_delete.items()}
