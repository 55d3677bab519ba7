"""Hudi's `FileSystemBasedLockProvider`: the lock is the file `<lock directory>/lock`.

The directory is `hoodie.write.lock.filesystem.path`, else `<base>/.hoodie` (Flink's writer sets
`<base>/.hoodie/.aux`). The file is created only if absent and holds Hudi's `LockInfo` as Jackson's
pretty printer writes it (create time, thread name, stack). It counts as expired once its modification
time is older than `hoodie.write.lock.filesystem.expire` minutes (0: never); an expired file is deleted
by whoever tries next. Released by deleting it. As in Hudi, `try_lock` does not wait: the lock
manager's retries do.

Hudi never refreshes the file, so a Java writer holding it past the expiry loses it; a hudi-assets run
holds it for a whole clean or archive, so while held it rewrites the same content every quarter of the
expiry to keep the modification time fresh. Refused (as Hudi refuses) where the store has no atomic
create (`StorageSchemes.isAtomicCreationSupported`: S3, GCS, ...) unless `hoodie.fs.atomic_creation.support`
lists the scheme.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import traceback
from datetime import datetime
from pathlib import PurePosixPath

from hudi_assets import config_options as opt
from hudi_assets.exceptions import HudiAssetsError, HudiInputError, InvalidConfigError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.timeline import METAFOLDER
from hudi_assets.transaction.lock_provider import LockProviderError, owner_name, read_lock_file
from hudi_assets.transaction.renewal import Renewal, stopped

log = logging.getLogger(__name__)

LOCK_FILE_NAME = "lock"
# StorageSchemes whose supportAtomicCreation is true (Hudi 0.15).
ATOMIC_CREATION_SCHEMES = frozenset({"file", "hdfs", "viewfs", "dfs", "hopsfs"})


def lock_info(thread_name: str, created: datetime | None = None) -> bytes:
    """Hudi's `LockInfo.toString()`: Jackson's default pretty printer over its three fields, the
    time as `SimpleDateFormat("yyyy-MM-dd HH:mm:ss.SSS")` in local time, one stack line per frame
    as `class.method (file:line)`, innermost first."""
    moment = created or datetime.now()
    stack = [f"{PurePosixPath(f.filename).stem}.{f.name} ({PurePosixPath(f.filename).name}:{f.lineno})"
             for f in reversed(traceback.extract_stack())]
    values = ", ".join(json.dumps(line) for line in stack)
    return ("{\n"
            f'  "lockCreateTime" : {json.dumps(moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3])},\n'
            f'  "lockThreadName" : {json.dumps(thread_name)},\n'
            f'  "lockStacksInfo" : {"[ " + values + " ]" if stack else "[ ]"}\n'
            "}").encode("ascii")


def describe_owner(data: bytes) -> str:
    """The owner a lock file names: its thread and create time when it is `LockInfo` JSON."""
    try:
        info = json.loads(data)
        return f"thread {info['lockThreadName']!r} (lock created {info['lockCreateTime']})"
    except (ValueError, TypeError, KeyError, RecursionError):
        text = data.decode("utf-8", "replace").strip()
        return f"an owner that wrote {text[:200]!r}" if text else "an owner that left it empty"


class FileSystemBasedLockProvider:
    def __init__(self, storage: Storage, operation: str, expire_minutes: int):
        self.storage = storage
        self.operation = operation
        self.expire_seconds = expire_minutes * 60
        self._written: bytes | None = None
        self._owner: str | None = None
        self._renewal: Renewal | None = None
        self._io = threading.Lock()  # the renewal and the run never touch the file at once

    @classmethod
    def from_config(cls, table: HoodieTable, operation: str) -> FileSystemBasedLockProvider:
        config = table.write_config
        directory = config.get(opt.FILESYSTEM_LOCK_PATH) or f"{table.base_path}/{METAFOLDER}"
        expire = config.get(opt.FILESYSTEM_LOCK_EXPIRE)
        storage = Storage(directory, table.storage.options)
        custom = {s.strip() for s in config.get(opt.HOODIE_FS_ATOMIC_CREATION_SUPPORT).split(",")}
        if storage.scheme not in ATOMIC_CREATION_SCHEMES | custom:
            raise InvalidConfigError(
                f"{storage.uri(LOCK_FILE_NAME)}: FileSystemBasedLockProvider needs a store with atomic "
                f"create, as Hudi requires (StorageSchemes.isAtomicCreationSupported); "
                f"{storage.scheme}:// has none, so two writers could both take the lock. Configure "
                f"ZookeeperBasedLockProvider or DynamoDBBasedLockProvider on both sides")
        if not storage.is_local:
            log.warning("%s: on %s:// hudi-assets creates the lock file by a check, then a write; a "
                        "writer creating it in between is not detected", storage.uri(LOCK_FILE_NAME),
                        storage.scheme)
        return cls(storage, operation, expire)

    @property
    def lock_name(self) -> str:
        return self.storage.uri(LOCK_FILE_NAME)

    def _expired(self, mtime_ms: int) -> bool:
        return self.expire_seconds > 0 and time.time() - mtime_ms / 1000 > self.expire_seconds

    def _read(self) -> bytes | None:
        return read_lock_file(self.storage, LOCK_FILE_NAME)

    def try_lock(self, timeout_seconds: float) -> bool:
        try:
            status = self.storage.status(LOCK_FILE_NAME)
            if status is not None:
                held_by = self._describe(self._read())  # refuses a directory before any delete
                if not self._expired(status.mtime_ms):
                    self._owner = held_by
                    return False
                log.warning("%s: deleting the expired lock of %s", self.lock_name, held_by)
                self.storage.delete_many([LOCK_FILE_NAME])
            data = lock_info(owner_name(self.operation))
            if not self.storage.create_if_absent(LOCK_FILE_NAME, data):
                self._owner = self._describe(self._read())
                return False
        except HudiInputError:
            raise  # no retry mends it
        except (OSError, HudiAssetsError) as exc:
            raise LockProviderError(f"FAILED_TO_ACQUIRE lock at: {self.lock_name} ({exc})") from exc
        self._written = data
        if self.expire_seconds:
            self._renewal = Renewal(f"lock renewal {self.lock_name}", self.expire_seconds / 4,
                                        self._renew)
        return True

    def _describe(self, data: bytes | None) -> str:
        return "an owner that released it meanwhile" if data is None else describe_owner(data)

    def _still_ours(self) -> bool:
        status = self.storage.status(LOCK_FILE_NAME)
        return (status is not None and not self._expired(status.mtime_ms)
                and self._written is not None and self._read() == self._written)

    def _renew(self) -> bool:
        """Rewrite our lock file to refresh its modification time; False once it is not ours."""
        with self._io:
            if self._written is None:
                return False
            if not self._still_ours():
                log.error("%s: lost Hudi's lock (now %s)", self.lock_name, self._describe(self._read()))
                return False
            self.storage.write(LOCK_FILE_NAME, self._written)
            return True

    def check_held(self) -> None:
        with self._io:
            if not self._still_ours():
                raise HudiAssetsError(f"{self.lock_name}: lost Hudi's lock of this {self.operation} run "
                                      f"(now held by {self._describe(self._read())}); stopped before "
                                      f"changing more")

    def unlock(self) -> None:
        self._renewal = stopped(self._renewal)
        with self._io:
            if self._written is None:
                return
            if self._read() == self._written:
                self.storage.delete_many([LOCK_FILE_NAME])
            else:
                log.warning("%s: the lock was no longer ours at release (now held by %s); left as it is",
                            self.lock_name, self._describe(self._read()))
            self._written = None

    def owner(self) -> str | None:
        return self._owner

    def close(self) -> None:
        self._renewal = stopped(self._renewal)
