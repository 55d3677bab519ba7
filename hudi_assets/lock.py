"""`TableLock`: the exclusive maintenance lock a clean or archive run holds on its table.

Two archive runs at once archived instants twice, and with merging on one run's merge recovery
deleted the other's merged file. When no Hudi lock provider is configured (`hudi_assets.transaction`),
hudi-assets runs exclude each other with their own lock file, `.hoodie/.aux/hudi-assets.lock`. Not
`.hoodie/.aux/lock`: that is Hudi's FileSystemBasedLockProvider file as Flink configures it
(`getLockConfig`: one-minute expiry), which a Flink writer deletes once it looks expired. Hudi
writers never take this lock.

The file is created whole and only if absent and names its owner (host, pid, operation, times) and a
random token. A daemon thread pushes its expiry forward while it is held, so a crashed owner blocks
the table only until the expiry, or, on the same host, until its pid is seen dead. Releasing and
renewing touch the file only while its token is ours. Local and mounted file systems exclude for
real; object stores have no atomic create-if-absent through pyarrow, so there the lock is written for
operators to see but cannot keep a second run out (a WARNING says so).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from hudi_assets.exceptions import HudiAssetsError, TableBusyError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.timeline import METAFOLDER

log = logging.getLogger(__name__)

LOCK_FILE = f"{METAFOLDER}/.aux/hudi-assets.lock"
DEFAULT_EXPIRY_SECONDS = 300.0
DEFAULT_RENEW_INTERVAL_SECONDS = 60.0
_ATTEMPTS = 3  # create/take-over rounds per try: the lock may vanish or change between two reads


def _iso(epoch_seconds: float) -> str:
    return datetime.fromtimestamp(epoch_seconds, UTC).isoformat(timespec="milliseconds")


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def _pid_namespace() -> str | None:
    """Linux pid namespace of this process: pids of two containers with one hostname differ."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def _pid_alive(pid: int) -> bool:
    if os.name != "posix" or pid <= 0:
        return True  # cannot tell: leave it to the expiry
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class LockOwner:
    """Who holds the lock, as written in the lock file (JSON, times in UTC)."""

    host: str
    pid: int
    pid_namespace: str | None
    operation: str
    acquired: float
    expires: float
    token: str

    @classmethod
    def new(cls, operation: str, expiry_seconds: float) -> LockOwner:
        now = time.time()
        return cls(socket.gethostname(), os.getpid(), _pid_namespace(), operation, now,
                   now + expiry_seconds, uuid.uuid4().hex)

    def encode(self) -> bytes:
        return json.dumps({"owner": "hudi-assets", "host": self.host, "pid": self.pid,
                           "pid_namespace": self.pid_namespace, "operation": self.operation,
                           "acquired": _iso(self.acquired), "expires": _iso(self.expires),
                           "token": self.token}, indent=2).encode()

    @classmethod
    def decode(cls, data: bytes) -> LockOwner:
        """Raises ValueError when `data` is not a lock file we wrote."""
        try:
            obj = json.loads(data)
            return cls(str(obj["host"]), int(obj["pid"]), obj.get("pid_namespace"), str(obj["operation"]),
                       _epoch(obj["acquired"]), _epoch(obj["expires"]), str(obj["token"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a hudi-assets lock file ({exc})") from exc

    @property
    def expired(self) -> bool:
        return time.time() >= self.expires

    @property
    def process_gone(self) -> bool:
        """True only when the owner ran in this host's pid namespace and its pid no longer exists."""
        return (self.host == socket.gethostname() and self.pid_namespace == _pid_namespace()
                and not _pid_alive(self.pid))

    @property
    def stale(self) -> bool:
        return self.expired or self.process_gone

    def __str__(self) -> str:
        return (f"{self.operation} by pid {self.pid} on host {self.host} since {_iso(self.acquired)}, "
                f"expires {_iso(self.expires)}")


class TableLock:
    """The held maintenance lock of one table; get one only through `TableLock.acquire`."""

    def __init__(self, storage: Storage, operation: str, expiry_seconds: float,
                 renew_interval_seconds: float):
        if not 0 < renew_interval_seconds < expiry_seconds:
            raise ValueError(f"renew interval {renew_interval_seconds}s must be > 0 and below the "
                             f"expiry {expiry_seconds}s")
        self.storage = storage
        self.operation = operation
        self.expiry_seconds = expiry_seconds
        self.renew_interval_seconds = renew_interval_seconds
        self.owner = LockOwner.new(operation, expiry_seconds)
        self._stop = threading.Event()
        self._renewal: threading.Thread | None = None

    @classmethod
    @contextmanager
    def acquire(cls, table: HoodieTable, operation: str, *,
                expiry_seconds: float = DEFAULT_EXPIRY_SECONDS,
                renew_interval_seconds: float = DEFAULT_RENEW_INTERVAL_SECONDS,
                wait_seconds: float = 0.0, retry_interval_seconds: float = 1.0) -> Iterator[TableLock]:
        """Hold the table's maintenance lock for the with-block; released on every way out.

        Raises `TableBusyError` naming the owner when a live run holds it past `wait_seconds`.
        """
        lock = cls(table.storage, operation, expiry_seconds, renew_interval_seconds)
        lock._acquire(wait_seconds, retry_interval_seconds)
        try:
            yield lock
        finally:
            lock._release()

    @property
    def uri(self) -> str:
        return self.storage.uri(LOCK_FILE)

    def check_held(self) -> None:
        """Raise unless the lock file is still ours and unexpired: call before a step that deletes."""
        current = self._read(LOCK_FILE)
        if current is None or current.token != self.owner.token or current.expired:
            raise HudiAssetsError(f"{self.uri}: lost the maintenance lock of this {self.operation} run "
                                  f"(lock now: {current or 'absent'}); stopped before changing more")

    # ------------------------------------------------------------------ acquiring
    def _acquire(self, wait_seconds: float, retry_interval_seconds: float) -> None:
        if not self.storage.is_local:
            log.warning("%s: %s:// has no atomic create-if-absent, so this maintenance lock cannot keep "
                        "a second clean or archive out; it is written for operators only. Run one "
                        "maintenance job per table at a time.", self.uri, self.storage.scheme)
        deadline = time.monotonic() + wait_seconds
        while True:
            acquired, holder = self._try_acquire()
            if acquired:
                break
            if time.monotonic() >= deadline:
                held_by = "another run (it changed hands while we looked)" if holder is None else (
                    f"{holder}{'; another run is taking it over' if holder.stale else ''}")
                raise TableBusyError(f"{self.uri}: table is busy: its maintenance lock is held by "
                                     f"{held_by}. Nothing was changed; retry later")
            time.sleep(retry_interval_seconds)
        log.debug("Acquired the maintenance lock %s for %s", self.uri, self.operation)
        self._renewal = threading.Thread(target=self._renew_loop, name="hudi-assets-lock-renewal",
                                         daemon=True)
        self._renewal.start()

    def _try_acquire(self) -> tuple[bool, LockOwner | None]:
        """Create the lock, taking over a stale one: (True, None) when it is ours, else who holds it."""
        holder: LockOwner | None = None
        for _ in range(_ATTEMPTS):
            self.owner = LockOwner.new(self.operation, self.expiry_seconds)
            if self.storage.create_if_absent(LOCK_FILE, self.owner.encode()):
                return True, None
            holder = self._read(LOCK_FILE)
            if holder is None:
                continue  # released between our create and our read
            if not holder.stale:
                return False, holder
            log.warning("%s: taking over the maintenance lock of %s (%s)", self.uri, holder,
                        "expired" if holder.expired else "its process is gone")
            if not self._take_over(holder):
                return False, self._read(LOCK_FILE) or holder
        return False, holder

    def _take_over(self, stale: LockOwner) -> bool:
        """Remove the stale lock; False when another run is taking it over or it changed meanwhile.

        One run per stale token gets the claim file, so two runs cannot both remove a lock and then
        each create one. The claimant re-reads the lock after claiming (a late claimant then sees the
        winner's lock and backs off), moves it aside and checks the token once more.
        """
        claims = self._claim(stale)
        if not claims:
            return False
        try:
            current = self._read(LOCK_FILE)
            if current is None:
                return True
            if current.token != stale.token:
                return False
            aside = f"{LOCK_FILE}.stale-{uuid.uuid4().hex}"
            try:
                self.storage.fs.move(self._fs_path(LOCK_FILE), self._fs_path(aside))
            except FileNotFoundError:
                return True
            moved = self._read(aside)
            if moved is not None and moved.token != stale.token:
                # the stale owner released and a new run locked in between: put its lock back
                self.storage.create_if_absent(LOCK_FILE, self.storage.read(aside))
                self.storage.delete_many([aside])
                return False
            self.storage.delete_many([aside])
            return True
        finally:
            self.storage.delete_many(claims)

    def _claim(self, stale: LockOwner) -> list[str]:
        """Claim the takeover of `stale`: the claim files up to and including ours, [] when taken.

        A claim older than the expiry was abandoned by a crashed claimant: the next generation is
        claimed instead of deleting it, so no two runs ever hold the same claim.
        """
        claims: list[str] = []
        while True:
            claim = f"{LOCK_FILE}.takeover-{stale.token}.{len(claims) + 1}"
            claims.append(claim)
            if self.storage.create_if_absent(claim, self.owner.encode()):
                return claims
            status = self.storage.status(claim)
            if status is None or status.mtime_ms / 1000 + self.expiry_seconds > time.time():
                return []  # being taken over right now, or just done

    # ------------------------------------------------------------- holding, releasing
    def _renew_loop(self) -> None:
        while not self._stop.wait(self.renew_interval_seconds):
            try:
                if not self._renew():
                    return
            except (OSError, HudiAssetsError):
                log.exception("%s: could not renew the maintenance lock; retrying", self.uri)

    def _renew(self) -> bool:
        """Push the expiry forward if the lock is still ours and unexpired; False once it is lost."""
        current = self._read(LOCK_FILE)
        if current is None or current.token != self.owner.token or current.expired:
            log.error("%s: lost the maintenance lock of this %s run (lock now: %s)", self.uri,
                      self.operation, current or "absent")
            return False
        renewed = replace(self.owner, expires=time.time() + self.expiry_seconds)
        self.storage.write(LOCK_FILE, renewed.encode())
        self.owner = renewed
        return True

    def _release(self) -> None:
        """Stop renewing, then delete the lock file if it is still ours; never raises."""
        self._stop.set()
        if self._renewal is not None:
            self._renewal.join()
        try:
            current = self._read(LOCK_FILE)
            if current is not None and current.token == self.owner.token:
                self.storage.delete_many([LOCK_FILE])
            else:
                log.warning("%s: the maintenance lock was no longer ours at release (lock now: %s); "
                            "left as it is", self.uri, current or "absent")
        except (OSError, HudiAssetsError) as exc:
            log.warning("%s: could not release the maintenance lock (%s); it expires at %s", self.uri,
                        exc, _iso(self.owner.expires))

    # ------------------------------------------------------------------- reading
    def _read(self, rel: str) -> LockOwner | None:
        """The owner recorded in a lock file; None when it is absent.

        A file we cannot decode counts as held by an unknown owner until its mtime plus the expiry.
        """
        try:
            data = self.storage.read(rel)
        except FileNotFoundError:
            return None
        try:
            return LockOwner.decode(data)
        except ValueError as exc:
            status = self.storage.status(rel)
            if status is None:
                return None
            written = status.mtime_ms / 1000
            log.warning("%s: %s", self.storage.uri(rel), exc)
            return LockOwner("unknown", 0, None, "unknown (unreadable lock file)", written,
                             written + self.expiry_seconds,
                             "unreadable-" + hashlib.sha256(data).hexdigest()[:16])

    def _fs_path(self, rel: str) -> str:
        """A path in the terms of `storage.fs`, for the one operation Storage lacks: rename."""
        return f"{self.storage.root}/{self.storage.relativize(rel)}"
