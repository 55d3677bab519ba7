"""Quarantine and undo on S3 (moto on 127.0.0.1): a move is a copy, the sources then go in one
DeleteObjects batch; undo restores every object byte for byte."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest
from support.s3_server import moto_s3

from hudi_assets.demo import generate_table
from hudi_assets.fsview import parse_base_file_name
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from tests.repair.test_orphans import repair

pytestmark = [pytest.mark.s3]


def _objects(storage: Storage) -> dict[str, bytes]:
    return {s.path: storage.read(s.path) for s in storage.list("", recursive=True)
            if not s.is_dir and not s.path.startswith(".hoodie/.aux/hudi-assets")}


def test_quarantine_and_undo_on_s3():
    with moto_s3() as options:
        pafs.S3FileSystem(**options, allow_bucket_creation=True).create_dir("lake")
        remote = Storage("s3://lake/tables/cow", options)
        generate_table(remote, "COPY_ON_WRITE", partitions=2, commits=4, seed=7)
        bases = sorted(s.path for s in remote.list("", recursive=True)
                       if s.path.endswith(".parquet") and not s.path.startswith(".hoodie"))
        orphans = []
        for i, source in enumerate(bases[:3]):  # three failed writes' copies
            folder, _, name = source.rpartition("/")
            file_id, _, instant = parse_base_file_name(name)
            orphans.append(f"{folder}/{file_id}_9-9-{i}_{int(instant) + 10_000_000 + i}.parquet")
            remote.write(orphans[-1], remote.read(source))
        before = _objects(remote)
        done = repair(HoodieTable(remote)).quarantine()
        assert sorted(o.path for o in done.orphans) == sorted(orphans)
        assert not any(remote.exists(p) for p in orphans)
        assert all(remote.exists(f".hoodie/.aux/hudi-assets/quarantine/{done.run}/{p}") for p in orphans)
        repair(HoodieTable(remote)).undo(done.run)
        assert _objects(remote) == before
