"""`KillAt`: the listener of the crash tests' scripts (`kill_*.py`), which SIGKILLs its own process
at a step. Imported by the scripts as a sibling module (run as a script, their folder is on sys.path).

`STEP[:N]` names a `listener.Step` and N (default 1): die when the step's own count (files deleted,
blocks or base files written, files moved so far) reaches N, or, for a step that carries no count,
the Nth time it is reached.
"""

from __future__ import annotations

import os
import signal

from hudi_assets.listener import Listener, Step


class KillAt(Listener):
    def __init__(self, wanted: str):
        name, _, count = wanted.partition(":")
        self.step = Step[name]
        self.count = int(count) if count else 1
        self.times = 0

    def reached(self, step: Step, count: int = 0) -> None:
        if step is self.step:
            self.times += 1
            if (count or self.times) >= self.count:
                os.kill(os.getpid(), signal.SIGKILL)
