"""Clean (on Spark executors) and archive a table on S3 (moto on 127.0.0.1): the same result as on a
local disk, and hudi-rs reads the table the same afterwards."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest
from hudi import HudiTable
from support.s3_server import moto_s3

from hudi_assets.archive import ArchiveConfig, HoodieTimelineArchiver
from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.demo import generate_table
from hudi_assets.engine import SparkEngine
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

pytestmark = [pytest.mark.s3, pytest.mark.spark]
SPEC = {"partitions": 2, "commits": 10, "seed": 31}


def _rows(reader: HudiTable) -> dict:
    return {r["_hoodie_record_key"]: (r["_hoodie_commit_time"], r["fare"])
            for batch in reader.read() for r in batch.to_pylist()}


def _files(storage: Storage) -> set[str]:
    return {s.path for s in storage.list("", recursive=True)
            if not s.is_dir and not s.path.startswith(".hoodie/")}


def _maintain(storage: Storage, engine) -> tuple[int, int]:
    clean = Cleaner(HoodieTable(storage), CleanConfig(commits_retained=3), engine).clean()
    archive = HoodieTimelineArchiver(HoodieTable(storage), ArchiveConfig(min_commits=4, max_commits=6,
                                                                         cleaner=CleanConfig(commits_retained=3)))
    return clean.files_deleted, len(archive.archive().selection.instants)


def test_clean_on_spark_and_archive_on_s3_match_local(tmp_path):
    local = Storage(str(tmp_path / "mor"))
    generate_table(local, "MERGE_ON_READ", **SPEC)
    engine = SparkEngine(master="local[2]")
    try:
        with moto_s3() as options:
            pafs.S3FileSystem(**options, allow_bucket_creation=True).create_dir("lake")
            remote = Storage("s3://lake/tables/mor", options)
            generate_table(remote, "MERGE_ON_READ", **SPEC)
            reader = HudiTable(remote.base_uri, {
                "aws_endpoint": f"http://{options['endpoint_override']}", "aws_allow_http": "true",
                "aws_access_key_id": "test", "aws_secret_access_key": "test", "aws_region": "us-east-1"})
            before = _rows(reader)
            assert _files(remote) == _files(local)

            remote_counts = _maintain(remote, engine)
            local_counts = _maintain(local, engine)
            assert remote_counts == local_counts and remote_counts[0] > 0 and remote_counts[1] > 0
            assert _files(remote) == _files(local)  # the same files deleted
            archived = {s.name for s in remote.list(".hoodie/archived")}
            assert archived == {s.name for s in local.list(".hoodie/archived")} and archived
            assert _rows(HudiTable(remote.base_uri, reader.storage_options())) == before
    finally:
        engine.session.stop()  # the next module may start a session of its own
