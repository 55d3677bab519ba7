"""How far a wall-clock bound in a test may stretch on a machine busier than its cores: a process
that has to wait for a core takes longer in wall time for the same work. On a machine whose load is
within its cores the slack is 0 and a bound means what it says."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path


def scheduling_slack(seconds_per_excess: float = 1.0) -> float:
    """`seconds_per_excess` for each runnable process per core beyond one (1-minute load average)."""
    excess = os.getloadavg()[0] / (os.cpu_count() or 1) - 1
    return max(0.0, excess) * seconds_per_excess


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `condition` until it holds; AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(0.05)


def doomed(pid: int) -> bool:
    """Gone, a zombie, or killed already (SIGKILL pending: it exits when next scheduled). A stop judged
    on a busy machine may find a process it killed that has not run since."""
    try:
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                      if ":" in line)
    except FileNotFoundError:
        return True
    pending = int(status["SigPnd"], 16) | int(status["ShdPnd"], 16)
    return status["State"].split()[0] == "Z" or bool(pending >> (signal.SIGKILL - 1) & 1)
