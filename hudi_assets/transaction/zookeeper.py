"""Hudi's `ZookeeperBasedLockProvider`: Curator's `InterProcessMutex` on `<base_path>/<lock_key>`,
built on kazoo's primitives so that a Java writer and hudi-assets exclude each other.

The protocol (Curator 5 `LockInternals` with `StandardLockInternalsDriver`): each contender creates
an ephemeral sequential node `_c_<uuid>-lock-<seq>` under the lock path (parents created as needed);
the contender whose node sorts first by the text after `lock-` holds the lock; every other one watches
the node just before its own and, when its wait runs out, deletes its node. kazoo's own `Lock` recipe
names nodes differently, so a Curator client would not see it as a contender.

Settings as Hudi reads them: `hoodie.write.lock.zookeeper.url` is the whole connect string
(Hudi does not use `...zookeeper.port`: give `host:port` in the url), `...base_path` (required),
`...lock_key` (default: the table name), `...session_timeout_ms` (60 s), `...connection_timeout_ms`
(15 s); connection retries as Hudi's `BoundedExponentialBackoffRetry(wait_time_ms_between_retry,
max_wait_time_ms_between_retry, num_retries)`. The session ends with the run, and with it our node.

A try fails at once when no server of the connect string accepts a TCP connection (refused, unknown
host): waiting out the connection timeout cannot help there, and with Hudi's defaults (51 tries, 15 s
each) a closed port took 17 minutes to report.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry

from hudi_assets import config_options as opt
from hudi_assets.exceptions import HudiAssetsError, InvalidConfigError
from hudi_assets.table import HoodieTable
from hudi_assets.transaction.lock_provider import LockProviderError, owner_name

log = logging.getLogger(__name__)


LOCK_NAME = "lock-"  # InterProcessMutex.LOCK_NAME
PROTECTED_PREFIX = "_c_"  # Curator's CreateBuilder.withProtection()


def sequence_key(node: str) -> str:
    """Curator's `StandardLockInternalsDriver.fixForSorting`: the text after the last `lock-`."""
    index = node.rfind(LOCK_NAME)
    return node[index + len(LOCK_NAME):] if index >= 0 else node


class ZookeeperBasedLockProvider:
    def __init__(self, client: KazooClient, lock_path: str, operation: str, connection_timeout_s: float):
        self.client = client
        self.lock_path = lock_path
        self.operation = operation
        self.connection_timeout_s = connection_timeout_s
        self._node: str | None = None
        self._owner: str | None = None

    @classmethod
    def from_config(cls, table: HoodieTable, operation: str) -> ZookeeperBasedLockProvider:
        config = table.write_config
        url = config.get(opt.ZK_CONNECT_URL)
        base_path = config.get(opt.ZK_BASE_PATH)
        lock_key = config.get(opt.ZK_LOCK_KEY) or config.get(opt.TABLE_NAME)
        required = ((opt.ZK_CONNECT_URL, url), (opt.ZK_BASE_PATH, base_path), (opt.ZK_LOCK_KEY, lock_key))
        for key, value in ((option.key, value) for option, value in required):
            if not value:
                raise InvalidConfigError(f"{key} is not set: ZookeeperBasedLockProvider needs it, with the "
                                         f"same value as the writer's")
        if not base_path.startswith("/"):
            raise InvalidConfigError(f"{opt.ZK_BASE_PATH.key}={base_path!r}: a ZooKeeper path starts "
                                     "with '/'")
        retry = KazooRetry(
            max_tries=config.get(opt.LOCK_ACQUIRE_NUM_RETRIES),
            delay=config.get(opt.LOCK_ACQUIRE_RETRY_WAIT_TIME_MS) / 1000,
            max_delay=config.get(opt.LOCK_ACQUIRE_RETRY_MAX_WAIT_TIME_MS) / 1000,
            backoff=2, ignore_expire=False)
        session_timeout = config.get(opt.ZK_SESSION_TIMEOUT_MS) / 1000
        client = KazooClient(hosts=url, timeout=session_timeout, connection_retry=retry.copy(),
                             command_retry=retry.copy())
        timeout = config.get(opt.ZK_CONNECTION_TIMEOUT_MS) / 1000
        return cls(client, f"{base_path.rstrip('/')}/{lock_key}", operation, timeout)

    @property
    def lock_name(self) -> str:
        return f"ZooKeeper lock {self.lock_path} at {self._servers()}"

    def _servers(self) -> str:
        return ",".join(f"{host}:{port}" for host, port in self.client.hosts)

    def _connect(self) -> None:
        if self.client.connected:
            return
        self._check_reachable()
        try:
            self.client.start(timeout=self.connection_timeout_s)
        except KazooTimeoutError as exc:
            self.client.stop()
            raise LockProviderError(
                f"cannot connect to ZooKeeper within {self.connection_timeout_s:g}s") from exc

    def _check_reachable(self) -> None:
        """Raise `LockProviderError` unless some server accepts a TCP connection within the timeout."""
        deadline = time.monotonic() + self.connection_timeout_s
        problems: list[str] = []
        for host, port in self.client.hosts:
            try:
                with socket.create_connection((host, port), max(0.1, deadline - time.monotonic())):
                    return
            except OSError as exc:
                problems.append(f"{host}:{port}: {exc.strerror or exc}")
        raise LockProviderError(f"cannot connect to ZooKeeper ({'; '.join(problems)})")

    def try_lock(self, timeout_seconds: float) -> bool:
        self._connect()
        protected = f"{PROTECTED_PREFIX}{uuid.uuid4()}-"
        try:
            node = self.client.create(f"{self.lock_path}/{protected}{LOCK_NAME}",
                                      owner_name(self.operation).encode(), ephemeral=True, sequence=True,
                                      makepath=True)
        except KazooException as exc:
            self._delete_protected(protected)  # as Curator's protection: the create may have happened
            raise LockProviderError(f"cannot create the lock node under {self.lock_path}: {exc!r}") from exc
        try:
            if self._wait_until_first(node.rsplit("/", 1)[1], timeout_seconds):
                self._node = node
                return True
        except BaseException:
            self._delete(node)
            raise
        self._delete(node)
        return False

    def _wait_until_first(self, ours: str, timeout_seconds: float) -> bool:
        """Curator's `internalLockLoop`: hold once ours sorts first, else watch the predecessor."""
        deadline = time.monotonic() + timeout_seconds
        try:
            while True:
                children = sorted(self.client.get_children(self.lock_path), key=sequence_key)
                if ours not in children:
                    raise LockProviderError(f"our lock node {self.lock_path}/{ours} vanished (session lost)")
                index = children.index(ours)
                if index == 0:
                    return True
                self._owner = self._describe(children[0])
                changed = threading.Event()
                predecessor = f"{self.lock_path}/{children[index - 1]}"
                if self.client.exists(predecessor, watch=lambda _event, c=changed: c.set()) is None:
                    continue
                if not changed.wait(max(0.0, deadline - time.monotonic())):
                    return False
        except KazooException as exc:
            raise LockProviderError(f"lost ZooKeeper while waiting for {self.lock_path}: {exc!r}") from exc

    def _describe(self, node: str) -> str:
        """The holder's node and its data (a Curator client writes its IP address, we our name)."""
        try:
            data, _ = self.client.get(f"{self.lock_path}/{node}")
        except (NoNodeError, KazooException):
            return f"the owner of lock node {self.lock_path}/{node}"
        text = data.decode("utf-8", "replace") if data else ""
        return f"lock node {self.lock_path}/{node}" + (f" ({text})" if text else "")

    def _delete(self, node: str) -> None:
        with contextlib.suppress(NoNodeError):
            self.client.delete(node)

    def _delete_protected(self, protected: str) -> None:
        try:
            for child in self.client.get_children(self.lock_path):
                if child.startswith(protected):
                    self._delete(f"{self.lock_path}/{child}")
        except KazooException:
            log.warning("%s: could not look for a half-created lock node %s*; the session's end removes "
                        "it", self.lock_name, protected)

    def check_held(self) -> None:
        node = self._node
        try:
            held = node is not None and self.client.connected and self.client.exists(node) is not None
        except KazooException:
            held = False
        if not held:
            raise HudiAssetsError(f"{self.lock_name}: lost Hudi's lock of this {self.operation} run (our "
                                  f"node {node} is gone or ZooKeeper is unreachable); stopped before "
                                  f"changing more")

    def unlock(self) -> None:
        node, self._node = self._node, None
        if node is not None:
            self._delete(node)

    def owner(self) -> str | None:
        return self._owner

    def close(self) -> None:
        try:
            self.client.stop()
            self.client.close()
        except KazooException as exc:
            log.warning("%s: closing the ZooKeeper session failed (%s); it expires on its own",
                        self.lock_name, exc)
