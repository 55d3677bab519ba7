"""Hudi's `LockManager`: which provider `hoodie.write.lock.provider` names, how long to try it, and
`table_lock`, the context manager every clean and archive step holds.

As `LockManager.lock` does, a run calls the provider's `try_lock(hoodie.write.lock.wait_time_ms)` up to
`hoodie.write.lock.client.num_retries` + 1 times, sleeping
`hoodie.write.lock.client.wait_time_ms_between_retry` after each failed try; a try that fails with an
error is retried the same way. Giving up raises `TableBusyError` naming the owner where the provider
knows it; nothing was changed then. `hoodie.write.concurrency.mode` only tells Hudi's writers whether
to lock: hudi-assets locks whenever a provider is configured.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hudi_assets import config_options as opt
from hudi_assets.config import WriteConfig
from hudi_assets.exceptions import HudiAssetsError, InvalidConfigError, TableBusyError
from hudi_assets.extras import require
from hudi_assets.lock import TableLock
from hudi_assets.table import HoodieTable
from hudi_assets.transaction.lock_provider import HeldLock, LockProvider, LockProviderError

log = logging.getLogger(__name__)


_PACKAGE = "org.apache.hudi.client.transaction.lock."
FILESYSTEM_PROVIDER = _PACKAGE + "FileSystemBasedLockProvider"
ZOOKEEPER_PROVIDER = _PACKAGE + "ZookeeperBasedLockProvider"
DYNAMODB_PROVIDER = "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider"
IN_PROCESS_PROVIDER = _PACKAGE + "InProcessLockProvider"

_HELD: dict[str, HeldLock] = {}  # base URI -> the provider lock this process holds (see `table_lock`)


@dataclass(frozen=True)
class LockRetries:
    """The lock manager's retry settings, with `HoodieLockConfig`'s defaults."""

    wait_time_ms: int = 60_000
    client_num_retries: int = 50
    client_wait_time_ms_between_retry: int = 5_000

    @classmethod
    def from_config(cls, config: WriteConfig) -> LockRetries:
        return cls(config.get(opt.LOCK_ACQUIRE_WAIT_TIMEOUT_MS),
                   config.get(opt.LOCK_ACQUIRE_CLIENT_NUM_RETRIES),
                   config.get(opt.LOCK_ACQUIRE_CLIENT_RETRY_WAIT_TIME_MS))


def lock_provider(table: HoodieTable, operation: str) -> LockProvider | None:
    """The provider `hoodie.write.lock.provider` names, built from the table's write config; None
    when none is configured. Providers that cannot exclude another process are refused."""
    config = table.write_config
    name = config.get(opt.LOCK_PROVIDER)
    if not name:
        return None
    if name == FILESYSTEM_PROVIDER:
        from hudi_assets.transaction.filesystem import FileSystemBasedLockProvider

        return FileSystemBasedLockProvider.from_config(table, operation)
    if name == ZOOKEEPER_PROVIDER:
        require("kazoo", "zookeeper", name)
        from hudi_assets.transaction.zookeeper import ZookeeperBasedLockProvider

        return ZookeeperBasedLockProvider.from_config(table, operation)
    if name == DYNAMODB_PROVIDER:
        require("boto3", "dynamodb", name)
        from hudi_assets.transaction.dynamodb import DynamoDBBasedLockProvider

        return DynamoDBBasedLockProvider.from_config(table, operation)
    source = config.sources.get(opt.LOCK_PROVIDER.key, "default")
    if name == IN_PROCESS_PROVIDER:
        raise InvalidConfigError(
            f"{opt.LOCK_PROVIDER.key}={name} (from {source}): an in-process lock lives in one JVM's "
            "memory, so "
            f"it cannot exclude hudi-assets, a process of its own, from the writer; configure "
            f"{FILESYSTEM_PROVIDER}, {ZOOKEEPER_PROVIDER} or {DYNAMODB_PROVIDER} on both sides")
    raise InvalidConfigError(
        f"{opt.LOCK_PROVIDER.key}={name} (from {source}): not supported by hudi-assets; supported: "
        f"{FILESYSTEM_PROVIDER}, {ZOOKEEPER_PROVIDER}, {DYNAMODB_PROVIDER}")


def acquire(provider: LockProvider, retries: LockRetries,
            sleep: Callable[[float], None] = time.sleep) -> None:
    """Take the provider's lock as Hudi's `LockManager.lock` does, or raise `TableBusyError`."""
    tries = retries.client_num_retries + 1
    error: LockProviderError | None = None
    for attempt in range(1, tries + 1):
        try:
            if provider.try_lock(retries.wait_time_ms / 1000):
                log.debug("Acquired %s", provider.lock_name)
                return
            error = None
            log.info("%s is held by %s; retrying (%d of %d tries)", provider.lock_name,
                     provider.owner() or "another writer", attempt, tries)
        except LockProviderError as exc:
            error = exc
            log.warning("%s: %s (%d of %d tries)", provider.lock_name, exc, attempt, tries)
        if attempt < tries:
            sleep(retries.client_wait_time_ms_between_retry / 1000)
    if error is not None:
        raise HudiAssetsError(f"{provider.lock_name}: could not acquire Hudi's lock after {tries} "
                              f"tries: {error}. Nothing was changed") from error
    raise TableBusyError(f"{provider.lock_name}: table is busy: Hudi's lock is held by "
                         f"{provider.owner() or 'another writer (owner unknown)'}; gave up after "
                         f"{tries} tries. Nothing was changed; retry later")


@contextmanager
def table_lock(table: HoodieTable, operation: str) -> Iterator[HeldLock]:
    """Hold the table's lock for the with-block, released on every way out: the configured Hudi lock
    provider, else hudi-assets' own `TableLock`. Reentrant within a run, whichever lock it is: a step
    that runs inside another (a clean that schedules, then executes) reuses the lock its caller holds."""
    held = _HELD.get(table.base_path)
    if held is not None:
        yield held
        return
    provider = lock_provider(table, operation)
    if provider is None:
        with TableLock.acquire(table, operation) as lock:
            _HELD[table.base_path] = lock
            try:
                yield lock
            finally:
                del _HELD[table.base_path]
        return
    try:
        acquire(provider, LockRetries.from_config(table.write_config))
        _HELD[table.base_path] = provider
        try:
            yield provider
        finally:
            del _HELD[table.base_path]
            _unlock(provider)
    finally:
        provider.close()


def _unlock(provider: LockProvider) -> None:
    """Release without masking the error that ends the block: a failed release is logged."""
    try:
        provider.unlock()
    except Exception as exc:  # the lock expires or its session ends on its own
        log.warning("%s: could not release Hudi's lock (%s)", provider.lock_name, exc)
