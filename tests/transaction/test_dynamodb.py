"""DynamoDBBasedLockProvider against moto's DynamoDB server: the awslabs lock client's item, lease,
heartbeats and takeover. (Interoperability with the Java lock client itself is not tested here.)"""

from __future__ import annotations

import time

import boto3
import pytest
from moto.server import ThreadedMotoServer
from support.lock_tables import open_table, tree

from hudi_assets import config_options as opt
from hudi_assets.exceptions import HudiAssetsError, TableBusyError
from hudi_assets.transaction import table_lock
from hudi_assets.transaction.dynamodb import DynamoDBBasedLockProvider
from hudi_assets.transaction.lock_manager import DYNAMODB_PROVIDER

KEY = {"key": {"S": "t"}}  # the partition key defaults to the table name


@pytest.fixture(scope="module")
def endpoint():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def conf(endpoint, request) -> dict[str, str]:
    return {"hoodie.write.lock.provider": DYNAMODB_PROVIDER,
            "hoodie.write.lock.dynamodb.table": f"locks_{request.node.name[:40]}",
            "hoodie.write.lock.dynamodb.region": "us-east-1",
            "hoodie.write.lock.dynamodb.endpoint_url": endpoint,
            "hoodie.aws.access.key": "testing", "hoodie.aws.secret.key": "testing",
            "hoodie.write.lock.wait_time_ms": "600", "hoodie.write.lock.client.num_retries": "1"}


@pytest.fixture
def ddb(endpoint):
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def _item(ddb, conf):
    return ddb.get_item(TableName=conf["hoodie.write.lock.dynamodb.table"], Key=KEY,
                        ConsistentRead=True).get("Item")


def test_creates_the_table_writes_the_lock_clients_item_and_deletes_it(base, conf, ddb):
    with table_lock(open_table(base, **conf), "clean") as held:
        item = _item(ddb, conf)
        assert set(item) == {"key", "ownerName", "leaseDuration", "recordVersionNumber"}
        assert item["leaseDuration"] == {"S": "600"}
        assert item["ownerName"]["S"].startswith("hudi-assets clean pid")
        held.check_held()
    assert _item(ddb, conf) is None
    table = ddb.describe_table(TableName=conf["hoodie.write.lock.dynamodb.table"])["Table"]
    assert table["KeySchema"] == [{"AttributeName": "key", "KeyType": "HASH"}]


def test_heartbeats_replace_the_record_version_number(base, conf, ddb):
    with table_lock(open_table(base, **conf), "clean"):
        first = _item(ddb, conf)["recordVersionNumber"]
        time.sleep(0.5)  # a heartbeat every 200 ms
        assert _item(ddb, conf)["recordVersionNumber"] != first


def test_held_by_a_live_owner_waits_then_fails_naming_it_and_changes_nothing(base, conf, ddb):
    holder = DynamoDBBasedLockProvider.from_config(open_table(base, **conf), "archive")
    assert holder.try_lock(0)
    try:
        before = tree(base)
        started = time.monotonic()
        with pytest.raises(TableBusyError, match="hudi-assets archive pid") as busy, \
                table_lock(open_table(base, **conf), "clean"):
            pytest.fail("entered the block while the lock was held")
        assert time.monotonic() - started >= 2 * 1.2  # two tries, each its lease plus wait_time_ms
        assert "DynamoDB lock" in str(busy.value)
        assert tree(base) == before
        assert _item(ddb, conf)["ownerName"]["S"] == holder.owner_name
    finally:
        holder.unlock()
        holder.close()


def test_a_lock_without_heartbeats_is_taken_over_after_its_lease(base, conf, ddb):
    with table_lock(open_table(base, **conf), "clean"):
        pass  # creates the table
    ddb.put_item(TableName=conf["hoodie.write.lock.dynamodb.table"],
                 Item={**KEY, "ownerName": {"S": "writer-host0b1c"}, "leaseDuration": {"S": "500"},
                       "recordVersionNumber": {"S": "stale"}})
    with table_lock(open_table(base, **conf), "clean"):
        assert _item(ddb, conf)["ownerName"]["S"].startswith("hudi-assets clean")
    assert _item(ddb, conf) is None


def test_released_when_the_block_raises(base, conf, ddb):
    with pytest.raises(RuntimeError, match="boom"), table_lock(open_table(base, **conf), "clean"):
        raise RuntimeError("boom")
    assert _item(ddb, conf) is None


def test_a_lock_taken_over_meanwhile_is_reported_lost_and_left_alone(base, conf, ddb):
    with table_lock(open_table(base, **conf), "clean") as held:
        ddb.put_item(TableName=conf["hoodie.write.lock.dynamodb.table"],
                     Item={**KEY, "ownerName": {"S": "writer"}, "leaseDuration": {"S": "600"},
                           "recordVersionNumber": {"S": "theirs"}})
        time.sleep(0.5)  # the next heartbeat finds the item is not ours
        with pytest.raises(HudiAssetsError, match="lost Hudi's lock"):
            held.check_held()
    assert _item(ddb, conf)["ownerName"] == {"S": "writer"}


def test_the_lock_table_and_its_creation_timeout_default_as_in_hudi_0_14(base, conf, ddb):
    """HUDI-5782 (0.14.0): `hoodie.write.lock.dynamodb.table` defaults to `hudi_locks` and the table
    creation timeout to 2 minutes (it was 10)."""
    del conf["hoodie.write.lock.dynamodb.table"]
    table = open_table(base, **conf)
    assert table.write_config.get(opt.DYNAMODB_LOCK_TABLE_CREATION_TIMEOUT) == 120_000
    with table_lock(table, "clean") as held:
        assert held.lock_name == "DynamoDB lock hudi_locks[key=t]"
        assert ddb.get_item(TableName="hudi_locks", Key=KEY, ConsistentRead=True)["Item"]["ownerName"]
    assert "Item" not in ddb.get_item(TableName="hudi_locks", Key=KEY, ConsistentRead=True)
