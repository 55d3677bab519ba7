"""Hudi's `DynamoDBBasedLockProvider`: one item of a DynamoDB table, kept by the protocol of awslabs'
`AmazonDynamoDBLockClient` that Hudi's provider uses.

The item: partition key attribute `key` = `hoodie.write.lock.dynamodb.partition_key` (default: the
table name), `ownerName`, `leaseDuration` (ms, as a string), `recordVersionNumber` (a new UUID on every
write); released by deleting it. A holder heartbeats every third of the lease by replacing the record
version number. A contender that finds the item waits; once the record version number has not changed
for its lease duration it takes the item over, conditioned on that number. One `try_lock(wait)` waits
at most the holder's lease plus `wait`, polling every second, as `acquireLock` with Hudi's
`additionalTimeToWaitForLock`. The lease is `hoodie.write.lock.wait_time_ms`, as in Hudi's provider.

Settings: `...dynamodb.table` (default `hudi_locks`, as since Hudi 0.14; created, as Hudi creates it,
when absent: `...billing_mode`, `...read_capacity`, `...write_capacity`, `...table_creation_timeout`,
2 minutes since 0.14), `...region` (else the `AWS_REGION` environment variable, else us-east-1),
`...endpoint_url`; credentials from
`hoodie.aws.access.key` / `hoodie.aws.secret.key` / `hoodie.aws.session.token`, else boto3's chain.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from hudi_assets import config_options as opt
from hudi_assets.exceptions import HudiAssetsError, InvalidConfigError
from hudi_assets.table import HoodieTable
from hudi_assets.transaction.lock_provider import LockProviderError, owner_name
from hudi_assets.transaction.renewal import Renewal, stopped

log = logging.getLogger(__name__)


# AmazonDynamoDBLockClient's attribute names.
PARTITION_KEY = "key"
OWNER_NAME = "ownerName"
LEASE_DURATION = "leaseDuration"
RECORD_VERSION_NUMBER = "recordVersionNumber"
IS_RELEASED = "isReleased"
REFRESH_PERIOD_SECONDS = 1.0  # AcquireLockOptions' default refresh period

_NAMES = {"#pk": PARTITION_KEY, "#rvn": RECORD_VERSION_NUMBER}
_NAMES_WITH_OWNER = {**_NAMES, "#on": OWNER_NAME}
_OURS = "attribute_exists(#pk) AND #rvn = :rvn AND #on = :on"


def _is_conditional_failure(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


class DynamoDBBasedLockProvider:
    def __init__(self, client: Any, table_name: str, partition_key: str, lease_ms: int, operation: str):
        self.client = client
        self.table_name = table_name
        self.partition_key = partition_key
        self.lease_ms = lease_ms
        self.operation = operation
        self.owner_name = f"{owner_name(operation)} {uuid.uuid4()}"  # the Java client: hostname + UUID
        self._rvn: str | None = None
        self._owner: str | None = None
        self._renewal: Renewal | None = None
        self._beat_lock = threading.Lock()
        self._last_beat = 0.0

    @classmethod
    def from_config(cls, table: HoodieTable, operation: str) -> DynamoDBBasedLockProvider:
        config = table.write_config
        table_name = config.get(opt.DYNAMODB_LOCK_TABLE_NAME)
        partition_key = config.get(opt.DYNAMODB_LOCK_PARTITION_KEY) or config.get(opt.TABLE_NAME)
        required = ((opt.DYNAMODB_LOCK_TABLE_NAME.key, table_name),
                    (opt.DYNAMODB_LOCK_PARTITION_KEY.key, partition_key))
        for key, value in required:
            if not value:
                raise InvalidConfigError(f"{key} is not set: DynamoDBBasedLockProvider needs it, with the "
                                         f"same value as the writer's")
        region = config.get(opt.DYNAMODB_LOCK_REGION) or os.environ.get("AWS_REGION", "us-east-1")
        session = boto3.session.Session(aws_access_key_id=config.get(opt.AWS_ACCESS_KEY) or None,
                                        aws_secret_access_key=config.get(opt.AWS_SECRET_KEY) or None,
                                        aws_session_token=config.get(opt.AWS_SESSION_TOKEN) or None,
                                        region_name=region)
        client = session.client("dynamodb", endpoint_url=config.get(opt.DYNAMODB_ENDPOINT_URL) or None)
        provider = cls(client, table_name, partition_key,
                       max(1, config.get(opt.LOCK_ACQUIRE_WAIT_TIMEOUT_MS)), operation)
        provider._ensure_table(config.get(opt.DYNAMODB_LOCK_BILLING_MODE),
                               config.get(opt.DYNAMODB_LOCK_READ_CAPACITY),
                               config.get(opt.DYNAMODB_LOCK_WRITE_CAPACITY),
                               config.get(opt.DYNAMODB_LOCK_TABLE_CREATION_TIMEOUT))
        return provider

    @property
    def lock_name(self) -> str:
        return f"DynamoDB lock {self.table_name}[{PARTITION_KEY}={self.partition_key}]"

    def _ensure_table(self, billing_mode: str, read_capacity: int, write_capacity: int,
                      creation_timeout_ms: int) -> None:
        """Create the lock table when absent, as Hudi's provider does, and wait until it is active."""
        try:
            self.client.describe_table(TableName=self.table_name)
            return
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise HudiAssetsError(f"{self.lock_name}: cannot describe the lock table: {exc}") from exc
        request: dict[str, Any] = {
            "TableName": self.table_name, "BillingMode": billing_mode,
            "KeySchema": [{"AttributeName": PARTITION_KEY, "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": PARTITION_KEY, "AttributeType": "S"}]}
        if billing_mode == "PROVISIONED":
            request["ProvisionedThroughput"] = {"ReadCapacityUnits": read_capacity,
                                                "WriteCapacityUnits": write_capacity}
        log.info("Creating the DynamoDB lock table %s", self.table_name)
        try:
            self.client.create_table(**request)
            self.client.get_waiter("table_exists").wait(
                TableName=self.table_name,
                WaiterConfig={"Delay": 1, "MaxAttempts": max(1, creation_timeout_ms // 1000)})
        except (ClientError, BotoCoreError) as exc:
            raise HudiAssetsError(f"{self.lock_name}: cannot create the lock table: {exc}") from exc

    # ------------------------------------------------------------------ acquiring
    def _get(self) -> dict[str, Any] | None:
        response = self.client.get_item(TableName=self.table_name, ConsistentRead=True,
                                        Key={PARTITION_KEY: {"S": self.partition_key}})
        return response.get("Item")

    def _put(self, rvn: str, condition: str, names: dict[str, str], values: dict[str, Any]) -> None:
        item = {PARTITION_KEY: {"S": self.partition_key}, OWNER_NAME: {"S": self.owner_name},
                LEASE_DURATION: {"S": str(self.lease_ms)}, RECORD_VERSION_NUMBER: {"S": rvn}}
        self.client.put_item(TableName=self.table_name, Item=item, ConditionExpression=condition,
                             ExpressionAttributeNames=names, **({"ExpressionAttributeValues": values}
                                                                if values else {}))

    def try_lock(self, timeout_seconds: float) -> bool:
        started = time.monotonic()
        wait = timeout_seconds
        watched: tuple[str, float, float] | None = None  # (record version, lease s, first seen)
        while True:
            rvn = str(uuid.uuid4())
            try:
                item = self._get()
                if item is None:
                    self._put(rvn, "attribute_not_exists(#pk)", {"#pk": PARTITION_KEY}, {})
                    return self._acquired(rvn)
                current = item.get(RECORD_VERSION_NUMBER, {}).get("S", "")
                if IS_RELEASED in item:
                    self._put(rvn, "attribute_exists(#pk) AND #rvn = :rvn AND #ir = :ir",
                              {**_NAMES, "#ir": IS_RELEASED},
                              {":rvn": {"S": current}, ":ir": item[IS_RELEASED]})
                    return self._acquired(rvn)
                self._owner = f"{item.get(OWNER_NAME, {}).get('S', 'an unnamed owner')} ({self.lock_name})"
                if watched is None or watched[0] != current:
                    lease = int(item.get(LEASE_DURATION, {}).get("S", "0") or 0) / 1000
                    if watched is None:
                        wait += lease  # acquireLock waits at least the holder's lease
                    watched = (current, lease, time.monotonic())
                elif time.monotonic() - watched[2] > watched[1]:
                    log.warning("%s: taking over the lock of %s: no heartbeat for its lease of %gs",
                                self.lock_name, self._owner, watched[1])
                    self._put(rvn, "attribute_exists(#pk) AND #rvn = :rvn", _NAMES, {":rvn": {"S": current}})
                    return self._acquired(rvn)
            except ClientError as exc:
                if not _is_conditional_failure(exc):
                    raise LockProviderError(f"{self.lock_name}: {exc}") from exc
                # another contender won the conditional write (LockNotGrantedException): go on waiting
            except BotoCoreError as exc:
                log.warning("%s: could not reach DynamoDB (%s); retrying", self.lock_name, exc)
            if time.monotonic() - started > wait:
                return False
            time.sleep(REFRESH_PERIOD_SECONDS)

    def _acquired(self, rvn: str) -> bool:
        self._rvn = rvn
        self._last_beat = time.monotonic()
        self._renewal = Renewal(f"lock renewal {self.lock_name}", self.lease_ms / 3000, self._beat)
        return True

    # ------------------------------------------------------------- holding, releasing
    def _beat(self) -> bool:
        """`sendHeartbeat`: a new record version number, only while the item is still ours."""
        with self._beat_lock:
            if self._rvn is None:
                return False
            rvn = str(uuid.uuid4())
            try:
                self.client.update_item(
                    TableName=self.table_name, Key={PARTITION_KEY: {"S": self.partition_key}},
                    UpdateExpression="SET #ld = :ld, #rvn = :newRvn", ConditionExpression=_OURS,
                    ExpressionAttributeNames={**_NAMES_WITH_OWNER, "#ld": LEASE_DURATION},
                    ExpressionAttributeValues={":ld": {"S": str(self.lease_ms)}, ":newRvn": {"S": rvn},
                                               ":rvn": {"S": self._rvn}, ":on": {"S": self.owner_name}})
            except ClientError as exc:
                if not _is_conditional_failure(exc):
                    raise
                log.error("%s: lost Hudi's lock: another owner took it over", self.lock_name)
                return False
            self._rvn = rvn
            self._last_beat = time.monotonic()
            return True

    def check_held(self) -> None:
        lost = self._renewal is None or self._renewal.lost.is_set()
        if lost or time.monotonic() - self._last_beat > self.lease_ms / 1000:
            raise HudiAssetsError(f"{self.lock_name}: lost Hudi's lock of this {self.operation} run (no "
                                  f"heartbeat within its lease); stopped before changing more")

    def unlock(self) -> None:
        """`releaseLock` with deleteLock: delete the item, only while it is still ours."""
        self._renewal = stopped(self._renewal)
        with self._beat_lock:
            rvn, self._rvn = self._rvn, None
            if rvn is None:
                return
            try:
                self.client.delete_item(
                    TableName=self.table_name, Key={PARTITION_KEY: {"S": self.partition_key}},
                    ConditionExpression=_OURS, ExpressionAttributeNames=_NAMES_WITH_OWNER,
                    ExpressionAttributeValues={":rvn": {"S": rvn}, ":on": {"S": self.owner_name}})
            except ClientError as exc:
                if not _is_conditional_failure(exc):
                    raise
                log.warning("%s: the lock had already been taken over at release", self.lock_name)

    def owner(self) -> str | None:
        return self._owner

    def close(self) -> None:
        self._renewal = stopped(self._renewal)
