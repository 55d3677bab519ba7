"""Hudi's `LockManager`: which provider `hoodie.write.lock.provider` names (hudi-assets' own
`MaintenanceLockProvider` when none), how long to try it, and `table_lock`, the context manager every
clean, archive and rollback step holds.

As `LockManager.lock` does, a run calls a Hudi provider's `try_lock(hoodie.write.lock.wait_time_ms)` up
to `hoodie.write.lock.client.num_retries` + 1 times, sleeping
`hoodie.write.lock.client.wait_time_ms_between_retry` after each failed try; a try that fails with an
error is retried the same way, and the log says how long the remaining tries may take. hudi-assets'
own lock is tried once: a second run is refused at once. Giving up raises `TableBusyError` naming the
owner where the provider knows it; nothing was changed then. `hoodie.write.concurrency.mode` only tells
Hudi's writers whether to lock: hudi-assets locks whenever a provider is configured.

Re-entrant per context (`contextvars`), not per process: a step that runs inside another (a clean
that schedules, then executes) reuses the lock its caller holds, while two threads working on one
table each take the lock and so exclude each other.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from hudi_assets import config_options as opt
from hudi_assets.config import WriteConfig
from hudi_assets.exceptions import HudiAssetsError, InvalidConfigError, TableBusyError
from hudi_assets.extras import require
from hudi_assets.table import HoodieTable
from hudi_assets.transaction.lock_provider import HeldLock, LockProvider, LockProviderError

log = logging.getLogger(__name__)


_PACKAGE = "org.apache.hudi.client.transaction.lock."
FILESYSTEM_PROVIDER = _PACKAGE + "FileSystemBasedLockProvider"
ZOOKEEPER_PROVIDER = _PACKAGE + "ZookeeperBasedLockProvider"
DYNAMODB_PROVIDER = "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider"
IN_PROCESS_PROVIDER = _PACKAGE + "InProcessLockProvider"

# base path -> the lock this context holds (see `table_lock`); replaced, never changed in place
_HELD: ContextVar[Mapping[str, HeldLock] | None] = ContextVar("hudi_assets_held_locks", default=None)


@dataclass(frozen=True)
class LockRetries:
    """The lock manager's retry settings, with `HoodieLockConfig`'s defaults (the options' own)."""

    wait_time_ms: int = opt.LOCK_ACQUIRE_WAIT_TIMEOUT_MS.default
    client_num_retries: int = opt.LOCK_ACQUIRE_CLIENT_NUM_RETRIES.default
    client_wait_time_ms_between_retry: int = opt.LOCK_ACQUIRE_CLIENT_RETRY_WAIT_TIME_MS.default

    @classmethod
    def from_config(cls, config: WriteConfig) -> LockRetries:
        """Hudi's settings for a configured Hudi provider; a single try for hudi-assets' own lock."""
        if not config.get(opt.LOCK_PROVIDER):
            return ONE_TRY
        return cls(config.get(opt.LOCK_ACQUIRE_WAIT_TIMEOUT_MS),
                   config.get(opt.LOCK_ACQUIRE_CLIENT_NUM_RETRIES),
                   config.get(opt.LOCK_ACQUIRE_CLIENT_RETRY_WAIT_TIME_MS))


ONE_TRY = LockRetries(wait_time_ms=0, client_num_retries=0)


def lock_provider(table: HoodieTable, operation: str) -> LockProvider:
    """The provider `hoodie.write.lock.provider` names, built from the table's write config;
    hudi-assets' own `MaintenanceLockProvider` when none is configured. Providers that cannot exclude
    another process are refused."""
    config = table.write_config
    name = config.get(opt.LOCK_PROVIDER)
    if not name:
        from hudi_assets.transaction.maintenance_lock import MaintenanceLockProvider

        return MaintenanceLockProvider.from_config(table, operation)
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
        started = time.monotonic()
        try:
            if provider.try_lock(retries.wait_time_ms / 1000):
                log.debug("Acquired %s", provider.lock_name)
                return
            error = None
            reason = f"held by {provider.owner() or 'another writer'}"
        except LockProviderError as exc:
            error = exc
            reason = str(exc)
        if attempt < tries:
            log.log(logging.INFO if error is None else logging.WARNING, "%s: %s (%d of %d tries); %s",
                    provider.lock_name, reason, attempt, tries,
                    _remaining(tries - attempt, time.monotonic() - started, retries))
            sleep(retries.client_wait_time_ms_between_retry / 1000)
    gave_up = f"; gave up after {tries} tries" if tries > 1 else ""
    if error is not None:
        raise HudiAssetsError(f"{provider.lock_name}: could not acquire the lock{gave_up}: {error}. "
                              f"Nothing was changed") from error
    raise TableBusyError(f"{provider.lock_name}: table is busy: the lock is held by "
                         f"{provider.owner() or 'another writer (owner unknown)'}{gave_up}. Nothing was "
                         f"changed; retry later")


def _remaining(left: int, last_try_seconds: float, retries: LockRetries) -> str:
    """How long the tries still to come take if each takes as long as the last one, for the log."""
    between = retries.client_wait_time_ms_between_retry / 1000
    total = left * (between + last_try_seconds)
    return (f"retrying {left} more time(s) {between:g}s apart, about {_duration(total)} more at this "
            f"pace ({opt.LOCK_ACQUIRE_CLIENT_NUM_RETRIES.key} and "
            f"{opt.LOCK_ACQUIRE_CLIENT_RETRY_WAIT_TIME_MS.key} set this)")


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{seconds:.1f}s"


@contextmanager
def holding(provider: LockProvider, retries: LockRetries) -> Iterator[LockProvider]:
    """Hold `provider`'s lock for the with-block: released and closed on every way out."""
    try:
        acquire(provider, retries)
        try:
            yield provider
        finally:
            _unlock(provider)
    finally:
        provider.close()


@contextmanager
def table_lock(table: HoodieTable, operation: str) -> Iterator[HeldLock]:
    """Hold the table's lock for the with-block, released on every way out: the configured Hudi lock
    provider, else hudi-assets' own. Re-entrant within one context, whichever lock it is: a step that
    runs inside another reuses the lock its caller holds; another thread takes it anew."""
    held = _HELD.get() or {}
    if table.base_path in held:
        yield held[table.base_path]
        return
    with holding(lock_provider(table, operation), LockRetries.from_config(table.write_config)) as lock:
        token = _HELD.set({**held, table.base_path: lock})
        try:
            yield lock
        finally:
            _HELD.reset(token)


def _unlock(provider: LockProvider) -> None:
    """Release without masking the error that ends the block: a failed release is logged."""
    try:
        provider.unlock()
    except Exception as exc:  # the lock expires or its session ends on its own
        log.warning("%s: could not release the lock (%s)", provider.lock_name, exc)
