"""The same table operations against S3 (a moto server on 127.0.0.1, started by the test)."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest
from support.s3_server import moto_s3, upload_tree

from hudi_assets.exceptions import PathOutsideTableError, StorageError
from hudi_assets.fsview import FileSystemView
from hudi_assets.storage import Storage
from hudi_assets.storage_options import s3_batch_client
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.report import timeline_rows

pytestmark = pytest.mark.s3

REPLACE_TABLE = "sample_table__cow__v6_simplekeygen_nonhivestyle_overwritetable"
V8_TABLE = "sample_table__cow__v8_nonpartitioned"


@pytest.fixture(scope="module")
def s3():
    with moto_s3() as options:
        yield options


def test_storage_operations_and_confinement_on_s3(s3):
    pafs.S3FileSystem(**s3, allow_bucket_creation=True).create_dir("confine")
    storage = Storage("s3://confine/tables/t1", s3)
    storage.write("p/a", b"abc")
    assert storage.create_if_absent(".hoodie/1.commit", b"x")
    assert not storage.create_if_absent(".hoodie/1.commit", b"y")
    assert storage.read(".hoodie/1.commit") == b"x"
    assert {s.path: s.size for s in storage.list("p")} == {"p/a": 3}
    assert storage.relativize("s3a://confine/tables/t1/p/a") == "p/a"
    for bad in ("s3://other-bucket/tables/t1/p/a", "s3://confine/tables/t10/x", "../t2/x"):
        with pytest.raises(PathOutsideTableError):
            storage.delete_many(["p/a", bad])
    assert storage.exists("p/a")
    # A batch (DeleteObjects) cannot tell a key already gone from a removed one; a single key can.
    result = storage.delete_many(["p/a", "p/never"])
    assert result.deleted == ["p/a", "p/never"] and not result.failed and not storage.exists("p/a")
    assert storage.delete_many(["p/never"]).missing == ["p/never"]


def test_real_table_timeline_on_s3_matches_local(s3, real_tables):
    if REPLACE_TABLE not in real_tables:
        pytest.skip("../shared is absent")
    local = HoodieTable(str(real_tables[REPLACE_TABLE]))
    uri = upload_tree(s3, real_tables[REPLACE_TABLE], "tables", REPLACE_TABLE)
    remote = HoodieTable(uri, s3)
    assert [str(i) for i in remote.active_timeline] == [str(i) for i in local.active_timeline]
    assert remote.config.props == local.config.props
    local_view, remote_view = FileSystemView(local), FileSystemView(remote)
    assert remote_view.partitions == local_view.partitions == ["10", "20", "30"]
    for partition in local_view.partitions:
        assert remote_view.latest_file_slices(partition) == local_view.latest_file_slices(partition)
    assert remote_view.replaced_file_groups == local_view.replaced_file_groups
    assert timeline_rows(remote) == [
        {**row, "state_file_mtime_ms": remote.active_timeline.state_files[i].mtime_ms}
        for row, i in zip(timeline_rows(local), remote.active_timeline, strict=True)
    ]


def test_v8_table_on_s3_reads_its_timeline_plans_its_clean_and_its_archive(s3, real_tables):
    if V8_TABLE not in real_tables:
        pytest.skip("../shared is absent")
    uri = upload_tree(s3, real_tables[V8_TABLE], "tables", V8_TABLE)
    table = HoodieTable(uri, s3)
    local = HoodieTable(str(real_tables[V8_TABLE]))
    assert table.active_timeline.completion_times == local.active_timeline.completion_times
    remote_archive = table.maintenance.archive(dry_run=True).selection
    assert remote_archive == local.maintenance.archive(dry_run=True).selection
    conf = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": 1}
    remote = HoodieTable(uri, s3, hoodie_conf=conf).maintenance.clean(dry_run=True).plan
    here = HoodieTable(str(real_tables[V8_TABLE]), hoodie_conf=conf).maintenance.clean(dry_run=True).plan

    def names(plan):
        planned = plan.file_paths_to_delete.items()
        return {p: [f.file_path.rpartition("/")[2] for f in files] for p, files in planned}

    assert names(remote) == names(here) and here.total_files > 0


def test_batch_delete_client_reaches_what_pyarrow_reaches():
    from botocore import UNSIGNED

    client = s3_batch_client({"endpoint_override": "127.0.0.1:9000", "scheme": "http", "region": "eu-west-3",
                              "access_key": "k", "secret_key": "s", "request_timeout": "7",
                              "retry_strategy": "standard:5"})
    assert client.meta.endpoint_url == "http://127.0.0.1:9000" and client.meta.region_name == "eu-west-3"
    assert client.meta.config.read_timeout == 7.0 and client.meta.config.retries["total_max_attempts"] == 5
    assert client._request_signer._credentials.access_key == "k"
    anonymous = s3_batch_client({"anonymous": "true", "endpoint_override": "https://s3.example:443"})
    assert anonymous.meta.config.signature_version is UNSIGNED
    assert anonymous.meta.endpoint_url == "https://s3.example:443"
    assert s3_batch_client({"role_arn": "arn:aws:iam::1:role/r"}) is None  # deletes stay pyarrow's


def test_a_batch_delete_refused_whole_raises(s3):
    storage = Storage("s3://no-such-bucket/t", s3)
    with pytest.raises(StorageError, match=r"no-such-bucket/t: deleting 2 objects failed \(.*NoSuchBucket"):
        storage.delete_many(["p/a", "p/b"])
