"""`MaintenanceLockProvider`: hudi-assets' own table lock, the `LockProvider` a run uses when no Hudi
lock provider is configured.

Two archive runs at once archived instants twice, and with merging on one run's merge recovery
deleted the other's merged file. So hudi-assets runs exclude each other with their own lock file,
`.hoodie/.aux/hudi-assets.lock`. Not `.hoodie/.aux/lock`: that is Hudi's FileSystemBasedLockProvider
file as Flink configures it (`getLockConfig`: one-minute expiry), which a Flink writer deletes once it
looks expired. Hudi writers never take this lock.

The file is created whole and only if absent and names its owner (host, pid, operation, times) and a
random token. A `Renewal` thread pushes its expiry forward while it is held, so a crashed owner blocks
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
import time
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.timeline import METAFOLDER
from hudi_assets.transaction.lock_provider import read_lock_file
from hudi_assets.transaction.renewal import Renewal, stopped

log = logging.getLogger(__name__)

LOCK_FILE = f"{METAFOLDER}/.aux/hudi-assets.lock"
DEFAULT_EXPIRY_SECONDS = 300.0
DEFAULT_RENEW_INTERVAL_SECONDS = 60.0
_ATTEMPTS = 3  # create/take-over rounds per try_lock: the lock may vanish or change between two reads


def _iso(epoch_seconds: float) -> str:
    return datetime.fromtimestamp(epoch_seconds, UTC).isoformat(timespec="milliseconds")


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def pid_namespace() -> str | None:
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


def _process_id(value: object) -> int:
    """A pid as we write it: a JSON integer that fits a pid_t (not `1e400`, not `4.2`, not `true`)."""
    if type(value) is not int or not 0 <= value < 2**31:
        raise ValueError(f"pid {value!r} is not a process id")
    return value


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
        return cls(socket.gethostname(), os.getpid(), pid_namespace(), operation, now,
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
            return cls(str(obj["host"]), _process_id(obj["pid"]), obj.get("pid_namespace"),
                       str(obj["operation"]), _epoch(obj["acquired"]), _epoch(obj["expires"]),
                       str(obj["token"]))
        except KeyError as exc:
            raise ValueError(f"not a hudi-assets lock file (no {exc})") from exc
        except (TypeError, ValueError, AttributeError, OverflowError, RecursionError) as exc:
            raise ValueError(f"not a hudi-assets lock file ({exc})") from exc

    @property
    def expired(self) -> bool:
        return time.time() >= self.expires

    @property
    def process_gone(self) -> bool:
        """True only when the owner ran in this host's pid namespace and its pid no longer exists."""
        return (self.host == socket.gethostname() and self.pid_namespace == pid_namespace()
                and not _pid_alive(self.pid))

    @property
    def stale(self) -> bool:
        return self.expired or self.process_gone

    def __str__(self) -> str:
        return (f"{self.operation} by pid {self.pid} on host {self.host} since {_iso(self.acquired)}, "
                f"expires {_iso(self.expires)}")


class MaintenanceLockProvider:
    """hudi-assets' own lock of one table. `try_lock` does not wait (the lock manager tries once: a
    second run is refused at once); `ours` is the owner record this provider writes."""

    def __init__(self, storage: Storage, operation: str, expiry_seconds: float = DEFAULT_EXPIRY_SECONDS,
                 renew_interval_seconds: float = DEFAULT_RENEW_INTERVAL_SECONDS):
        if not 0 < renew_interval_seconds < expiry_seconds:
            raise ValueError(f"renew interval {renew_interval_seconds}s must be > 0 and below the "
                             f"expiry {expiry_seconds}s")
        self.storage = storage
        self.operation = operation
        self.expiry_seconds = expiry_seconds
        self.renew_interval_seconds = renew_interval_seconds
        self.ours = LockOwner.new(operation, expiry_seconds)
        self._holder: str | None = None
        self._renewal: Renewal | None = None

    @classmethod
    def from_config(cls, table: HoodieTable, operation: str) -> MaintenanceLockProvider:
        return cls(table.storage, operation)

    @property
    def lock_name(self) -> str:
        return self.storage.uri(LOCK_FILE)

    def check_held(self) -> None:
        """Raise unless the lock file is still ours and unexpired: call before a step that deletes."""
        current = self._read(LOCK_FILE)
        if current is None or current.token != self.ours.token or current.expired:
            raise HudiAssetsError(f"{self.lock_name}: lost the maintenance lock of this {self.operation} "
                                  f"run (lock now: {current or 'absent'}); stopped before changing more")

    def owner(self) -> str | None:
        return self._holder

    # ------------------------------------------------------------------ acquiring
    def try_lock(self, timeout_seconds: float) -> bool:
        """One round of create-or-take-over; `timeout_seconds` is not waited (the lock manager's
        retries are the only wait)."""
        if not self.storage.is_local:
            log.warning("%s: %s:// has no atomic create-if-absent, so this maintenance lock cannot keep "
                        "a second clean or archive out; it is written for operators only. Run one "
                        "maintenance job per table at a time.", self.lock_name, self.storage.scheme)
        acquired, holder = self._try_acquire()
        if not acquired:
            self._holder = "another run (it changed hands while we looked)" if holder is None else (
                f"{holder}{'; another run is taking it over' if holder.stale else ''}")
            return False
        log.debug("Acquired the maintenance lock %s for %s", self.lock_name, self.operation)
        self._renewal = Renewal("hudi-assets-lock-renewal", self.renew_interval_seconds, self._renew)
        return True

    def _try_acquire(self) -> tuple[bool, LockOwner | None]:
        """Create the lock, taking over a stale one: (True, None) when it is ours, else who holds it."""
        holder: LockOwner | None = None
        for _ in range(_ATTEMPTS):
            self.ours = LockOwner.new(self.operation, self.expiry_seconds)
            if self.storage.create_if_absent(LOCK_FILE, self.ours.encode()):
                return True, None
            holder = self._read(LOCK_FILE)
            if holder is None:
                continue  # released between our create and our read
            if not holder.stale:
                return False, holder
            log.warning("%s: taking over the maintenance lock of %s (%s)", self.lock_name, holder,
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
            if self.storage.create_if_absent(claim, self.ours.encode()):
                return claims
            status = self.storage.status(claim)
            if status is None or status.mtime_ms / 1000 + self.expiry_seconds > time.time():
                return []  # being taken over right now, or just done

    # ------------------------------------------------------------- holding, releasing
    def _renew(self) -> bool:
        """Push the expiry forward if the lock is still ours and unexpired; False once it is lost."""
        current = self._read(LOCK_FILE)
        if current is None or current.token != self.ours.token or current.expired:
            log.error("%s: lost the maintenance lock of this %s run (lock now: %s)", self.lock_name,
                      self.operation, current or "absent")
            return False
        renewed = replace(self.ours, expires=time.time() + self.expiry_seconds)
        self.storage.write(LOCK_FILE, renewed.encode())
        self.ours = renewed
        return True

    def unlock(self) -> None:
        """Stop renewing, then delete the lock file if it is still ours; never raises."""
        if self._renewal is None:
            return
        self._renewal = stopped(self._renewal)
        try:
            current = self._read(LOCK_FILE)
            if current is not None and current.token == self.ours.token:
                self.storage.delete_many([LOCK_FILE])
            else:
                log.warning("%s: the maintenance lock was no longer ours at release (lock now: %s); "
                            "left as it is", self.lock_name, current or "absent")
        except (OSError, HudiAssetsError) as exc:
            log.warning("%s: could not release the maintenance lock (%s); it expires at %s",
                        self.lock_name, exc, _iso(self.ours.expires))

    def close(self) -> None:
        self._renewal = stopped(self._renewal)

    # ------------------------------------------------------------------- reading
    def _read(self, rel: str) -> LockOwner | None:
        """The owner recorded in a lock file; None when it is absent.

        A file we cannot decode counts as held by an unknown owner until its mtime plus the expiry.
        """
        data = read_lock_file(self.storage, rel)
        if data is None:
            return None
        try:
            return LockOwner.decode(data)
        except ValueError as exc:
            status = self.storage.status(rel)
            if status is None:
                return None
            written = status.mtime_ms / 1000
            log.warning("%s: %s", self.storage.uri(rel), exc)
            return LockOwner("unknown", 0, None, f"unknown (unreadable lock file: {exc})", written,
                             written + self.expiry_seconds,
                             "unreadable-" + hashlib.sha256(data).hexdigest()[:16])

    def _fs_path(self, rel: str) -> str:
        """A path in the terms of `storage.fs`, for the one operation Storage lacks: rename."""
        return f"{self.storage.root}/{self.storage.relativize(rel)}"
