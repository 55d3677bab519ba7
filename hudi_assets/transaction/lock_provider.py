"""The `LockProvider` protocol: Hudi's `org.apache.hudi.common.lock.LockProvider`, as a run needs it."""

from __future__ import annotations

import os
import socket
from typing import Protocol

from hudi_assets.exceptions import CorruptFileError, HudiAssetsError
from hudi_assets.storage import Storage


class LockProviderError(HudiAssetsError):
    """A try to take the lock failed for another reason than the lock being held (Hudi's
    `HoodieLockException` from `tryLock`): the lock manager retries, as Hudi's does."""


class HeldLock(Protocol):
    """What a run holding the table's lock may ask of it."""

    def check_held(self) -> None:
        """Raise `HudiAssetsError` if the lock is known to be lost: call before a step that deletes."""


class LockProvider(HeldLock, Protocol):
    """One lock of one table; `try_lock` and `unlock` pair up as in Hudi's `LockManager`."""

    @property
    def lock_name(self) -> str:
        """What the lock is (Hudi's `getLock()`), for messages."""

    def try_lock(self, timeout_seconds: float) -> bool:
        """Take the lock, waiting up to `timeout_seconds` where the provider waits at all; False
        when it is held by another owner. Raises `LockProviderError` on any other failure."""

    def unlock(self) -> None:
        """Release the lock if this provider holds it; never releases another owner's lock."""

    def owner(self) -> str | None:
        """Who held the lock at the last try that failed, where the provider can tell."""

    def close(self) -> None:
        """Release connections and threads; the provider is not used again."""


def owner_name(operation: str) -> str:
    """How a hudi-assets run names itself to other lock holders."""
    return f"hudi-assets {operation} pid {os.getpid()} on host {socket.gethostname()}"


def read_lock_file(storage: Storage, rel: str) -> bytes | None:
    """A lock file's content; None when there is none. A directory in its place is refused
    (`CorruptFileError`, exit 2): no run could ever create the lock there, and none may delete it."""
    try:
        return storage.read(rel)
    except FileNotFoundError:
        return None
    except OSError as exc:
        status = storage.status(rel)
        if status is not None and status.is_dir:
            raise CorruptFileError(storage.uri(rel), "is a directory, not a lock file; remove it (no "
                                   "run can take the table's lock while it is there)") from exc
        raise
