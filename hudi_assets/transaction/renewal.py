"""`Renewal`: a daemon thread that renews something held (a lock's expiry, a heartbeat file) at a
fixed interval until stopped or until the holder learns it lost it.

Hudi's providers call the same thing a heartbeat (the DynamoDB lock client's `sendHeartbeat`); it is
named for what it does here, so it is not confused with a writer's heartbeat file
(`hudi_assets.heartbeat`), which it may be used to renew.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Renewal:
    """Calls `renew` every `interval_seconds`; `renew` returns False once what it renews is lost,
    which ends the renewal (`lost` is then set). An exception from `renew` is logged and retried at
    the next interval."""

    def __init__(self, name: str, interval_seconds: float, renew: Callable[[], bool]):
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._renew = renew
        self._interval = interval_seconds
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                if not self._renew():
                    self.lost.set()
                    return
            except Exception:  # a network blip must not end the renewal: the next interval retries
                log.exception("%s: could not renew; retrying", self._thread.name)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()


def stopped(renewal: Renewal | None) -> None:
    """Stop `renewal` if there is one; returns None for the holder's field (`x = stopped(x)`)."""
    if renewal is not None:
        renewal.stop()
