"""Runs the live writer or a `hudi-assets` command in this process, auditing Hudi's lock.

`python live_writer_launcher.py AUDIT writer|cli ARGS...`: every time this process takes the
FileSystemBasedLockProvider lock it appends `acquire <pid> <ns> <operation>` to AUDIT right after
taking it, and `release ...` right before releasing it, so the lines are written while the lock is
held. The lock code itself runs unchanged; the test checks that holds never overlap.
"""

from __future__ import annotations

import os
import sys
import time

from hudi_assets.transaction.filesystem import FileSystemBasedLockProvider


def _append(audit: str, event: str, operation: str) -> None:
    line = f"{event} {os.getpid()} {time.time_ns()} {operation.replace(' ', '_')}\n".encode()
    fd = os.open(audit, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)  # one O_APPEND write: lines of several processes never interleave
    finally:
        os.close(fd)


def audit_lock(audit: str) -> None:
    try_lock, unlock = FileSystemBasedLockProvider.try_lock, FileSystemBasedLockProvider.unlock

    def audited_try_lock(self: FileSystemBasedLockProvider, timeout_seconds: float) -> bool:
        taken = try_lock(self, timeout_seconds)
        if taken:
            _append(audit, "acquire", self.operation)
        return taken

    def audited_unlock(self: FileSystemBasedLockProvider) -> None:
        if self._written is not None:
            _append(audit, "release", self.operation)
        unlock(self)

    FileSystemBasedLockProvider.try_lock = audited_try_lock
    FileSystemBasedLockProvider.unlock = audited_unlock


def main(argv: list[str]) -> int:
    audit, face, *rest = argv
    audit_lock(audit)
    if face == "writer":
        from hudi_assets.demo.streaming import main as writer_main

        return writer_main(rest)
    from hudi_assets.cli import main as cli_main

    return cli_main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
