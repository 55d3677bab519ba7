"""`Engine`: where work that grows with the table runs (Hudi's HoodieEngineContext).

Functions handed to an engine must be picklable (module-level) and take everything they need as
arguments, so that the same call runs on a local thread pool or on Spark executors, which open
the table's storage themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Engine(Protocol):
    def map(self, fn: Callable[[T], R], items: Sequence[T], parallelism: int | None = None) -> list[R]:
        """Apply `fn` to every item; results come back in input order."""
        ...

    def flat_map(
        self, fn: Callable[[T], Iterable[R]], items: Sequence[T], parallelism: int | None = None
    ) -> list[R]: ...


class LocalEngine:
    """A thread pool: I/O-bound listing and deleting overlap well without a JVM."""

    def __init__(self, max_workers: int = 16):
        self.max_workers = max_workers

    def map(self, fn: Callable[[T], R], items: Sequence[T], parallelism: int | None = None) -> list[R]:
        workers = max(1, min(parallelism or self.max_workers, self.max_workers, len(items)))
        if workers == 1:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(fn, items))

    def flat_map(
        self, fn: Callable[[T], Iterable[R]], items: Sequence[T], parallelism: int | None = None
    ) -> list[R]:
        return [r for chunk in self.map(lambda item: list(fn(item)), items, parallelism) for r in chunk]
