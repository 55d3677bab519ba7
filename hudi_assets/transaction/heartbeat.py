"""A daemon thread that renews a held lock at a fixed interval until stopped or the lock is lost."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Heartbeat:
    """Calls `renew` every `interval_seconds`; `renew` returns False once the lock is lost, which ends
    the heartbeat (`lost` is then set). An exception from `renew` is logged and retried next beat."""

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
            except Exception:  # a network blip must not end the heartbeat: the next beat retries
                log.exception("%s: could not renew the lock; retrying", self._thread.name)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()


def stopped(heartbeat: Heartbeat | None) -> None:
    """Stop `heartbeat` if there is one; returns None for the holder's field (`x = stopped(x)`)."""
    if heartbeat is not None:
        heartbeat.stop()
