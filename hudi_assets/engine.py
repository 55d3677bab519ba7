"""`Engine`: where work that grows with the table runs (Hudi's HoodieEngineContext).

Functions handed to an engine must be picklable (cloudpickle: module-level functions, lambdas and
closures over picklable values) and take everything they need as arguments, so that the same call
runs in local threads or forked processes, or on Spark executors, which open the table's storage
themselves. Items and results travel pickled, so they must pickle too.

Spark runs embedded (`local[*]` by default, or any master), or behind a long-lived Spark Connect
server (`spark_remote`, `sc://HOST:PORT`; see `hudi_assets.spark_connect`), where no run starts a
JVM of its own. Spark Connect has no RDDs: there the same calls run through the DataFrame API.
"""

from __future__ import annotations

import functools
import gc
import logging
import multiprocessing
import os
import pickle
import socket
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from hudi_assets.extras import require

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_SPARK_MASTER = "local[*]"
# Spark's own names for the Spark Connect URL: a setting (props file, --spark-conf) and a variable.
SPARK_REMOTE_KEY = "spark.remote"
SPARK_REMOTE_ENV = "SPARK_REMOTE"
# The default of the library and the CLI: `auto`, Spark where a Spark master or a Spark Connect server
# is configured, else the local engine (`choose_engine`). No table size makes an embedded `local[*]`
# JVM pay: it shares this machine's cores with nothing gained, and its start costs seconds
# (bench/engine_choice_bench.py, bench/README.md).
DEFAULT_ENGINE = "auto"
ENGINES = ("auto", "spark", "local")
# The Spark Connect clients `remote_session` opened in this process (`spark_connect.close_clients`).
CONNECT_CLIENTS: weakref.WeakSet[Any] = weakref.WeakSet()


class Engine(Protocol):
    """Runs one function over many items, locally or on a cluster, and returns the results in
    order: the seam that lets listing, planning and deleting grow with the table."""

    def map(self, fn: Callable[[T], R], items: Sequence[T], parallelism: int | None = None) -> list[R]:
        """Apply `fn` to every item; results come back in input order."""
        ...

    def flat_map(
        self, fn: Callable[[T], Iterable[R]], items: Sequence[T], parallelism: int | None = None
    ) -> list[R]:
        """Apply `fn` to every item and concatenate the results, in input order."""
        ...

    def foreach(self, fn: Callable[[T], Any], items: Sequence[T], parallelism: int | None = None) -> None:
        """Apply `fn` to every item for its effect."""
        ...


class LocalEngine:
    """A thread pool for work that waits on a store (object stores overlap well without a JVM), and
    forked worker processes for work that is Python on every file of a local file system, where
    threads would only take turns holding the GIL (`store_map`)."""

    def __init__(self, max_workers: int = 16, processes: int | None = None, process_min_items: int = 32):
        self.max_workers = max_workers
        self.processes = available_cpus() if processes is None else processes
        self.process_min_items = process_min_items  # fewer items: forking costs more than it saves

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

    def foreach(self, fn: Callable[[T], Any], items: Sequence[T], parallelism: int | None = None) -> None:
        self.map(fn, items, parallelism)

    def map_in_processes(self, fn: Callable[[T], R], items: Sequence[T],
                         meanwhile: Callable[[], Any] | None = None,
                         before_fork: Callable[[], Any] | None = None) -> list[R]:
        """`map` in forked worker processes, results in input order; `meanwhile`, if given, is work
        of this process's own done while the workers run (after they forked, so they never see it);
        `before_fork`, work each worker would otherwise repeat (an import), done here once first and
        only when workers fork.

        Forking hands `fn` and everything it closes over to the workers as they are (nothing is
        pickled but the items and the results, so results should be compact: names and numbers).
        A chunk that fails in a worker is redone here and raises its error as if no worker had been
        involved, so the work must be free of effects, or give the same result when done again.
        Runs in this process when forking is not safe or not worth it: too few items or CPUs, no
        `fork`, inside a worker, or other threads running (a thread holding a lock at the fork
        would leave it held in the worker forever); this package's own lock-renewal thread is the
        one exception, as it holds no lock the workers take.
        """
        return list(self.imap_in_processes(fn, items, meanwhile=meanwhile, before_fork=before_fork))

    def imap_in_processes(self, fn: Callable[[T], R], items: Sequence[T], chunk_size: int | None = None,
                          meanwhile: Callable[[], Any] | None = None,
                          before_fork: Callable[[], Any] | None = None) -> Iterator[R]:
        """`map_in_processes` yielding each result in input order as soon as it is there (progress
        can be reported between them), `chunk_size` items per task (default: a few tasks per
        worker). When the caller stops early, tasks not yet started are cancelled."""
        return self._imap(fn, False, items, chunk_size, meanwhile, before_fork=before_fork)

    def map_chunks_in_processes(self, fn: Callable[[Sequence[T]], list[R]], items: Sequence[T],
                                most: int, before_fork: Callable[[], Any] | None = None) -> list[R]:
        """`map_in_processes` of a function of a whole chunk of items (a list of one result per item,
        in order), for work whose cost per call the items of a chunk share (one numpy pass over all
        their names): a few chunks per worker, of `most` items at most. Without workers, chunk by
        chunk here."""
        return list(self._imap(fn, True, items, most, None, before_fork=before_fork))

    def _imap(self, fn: Callable[[Any], Any], chunked: bool, items: Sequence[T], chunk_size: int | None,
              meanwhile: Callable[[], Any] | None, *,
              before_fork: Callable[[], Any] | None = None) -> Iterator[Any]:
        """`fn` of each item, or of each chunk when `chunked` (then `chunk_size` is a most)."""
        workers = min(self.processes, len(items))
        size = -(-len(items) // (max(workers, 1) * 4)) or 1  # a few chunks per worker even them out
        if chunk_size:
            size = min(size, chunk_size) if chunked else chunk_size
        # Workers get (start, end) of their chunk, not the items: they inherit those through the fork
        # (a plan from the metadata table: its partitions' tasks, and the metadata table's files).
        chunks = [(i, min(i + size, len(items))) for i in range(0, len(items), size)]
        run = fn if chunked else functools.partial(_each, fn)
        if workers < 2 or len(items) < self.process_min_items or not _can_fork():
            if meanwhile is not None:
                meanwhile()
            if not chunked:
                yield from map(fn, items)
                return
            for start, end in chunks:
                yield from run(items[start:end])
            return
        if before_fork is not None:
            before_fork()
        global _forked_fn, _forked_items
        _forked_fn, _forked_items = run, items
        pool = ProcessPoolExecutor(workers, multiprocessing.get_context("fork"), _enter_worker)
        done = 0
        try:
            try:
                payloads = pool.map(_run_forked, chunks)  # the workers are forked by now
                if meanwhile is not None:
                    meanwhile()
                for payload in payloads:
                    start, end = chunks[done]
                    done += 1
                    yield from pickle.loads(payload) if payload is not None else run(items[start:end])
            except BrokenProcessPool:  # a worker died (killed, out of memory): the rest is done here
                for start, end in chunks[done:]:
                    yield from run(items[start:end])
        finally:
            _forked_fn = _forked_items = None
            pool.shutdown(wait=True, cancel_futures=True)


def _each(fn: Callable[[T], R], chunk: Sequence[T]) -> list[R]:
    return [fn(item) for item in chunk]


_forked_fn: Callable[[Any], Any] | None = None  # what a forked worker runs on a chunk, set before forking
_forked_items: Sequence[Any] | None = None  # the items it runs on, set before forking too
_in_worker = False
OWN_THREAD_PREFIX = "hudi-assets-"  # threads of this package that hold no lock a forked worker takes


def available_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _can_fork() -> bool:
    if _in_worker or "fork" not in multiprocessing.get_all_start_methods():
        return False
    main = threading.main_thread()
    return all(t is main or t.name.startswith(OWN_THREAD_PREFIX) for t in threading.enumerate())


def _enter_worker() -> None:
    global _in_worker
    _in_worker = True


def _run_forked(chunk: tuple[int, int]) -> bytes | None:
    """One chunk (start, end) of the inherited items in a worker: its pickled results, or None to
    have the parent redo the chunk (an error, or a result that does not pickle, is raised there as
    the parent's own)."""
    start, end = chunk
    try:
        return pickle.dumps(_forked_fn(_forked_items[start:end]), pickle.HIGHEST_PROTOCOL)
    except Exception:
        return None


def store_map(engine: Engine, local_store: bool, fn: Callable[[T], R], items: Sequence[T],
              parallelism: int, *, meanwhile: Callable[[], Any] | None = None,
              before_fork: Callable[[], Any] | None = None) -> list[R]:
    """Work per directory of a store that is free of effects (listing and deciding). A local file
    system answers without latency to overlap, so on the local engine threads would only take turns
    holding the GIL over the per-file Python work (measured on a 1,000,000-file plan: 16 threads 30%
    slower than one): it runs in forked processes there. Object stores and Spark get the parallelism
    asked for; one item is done here, as a Spark job costs more than one directory's work (measured
    over Spark Connect: 0.2-0.6 s a job, three of them to find the partitions of a year/month/day
    table). `meanwhile`: work of this process's own, done while forked workers run (else first);
    `before_fork`: see `LocalEngine.map_in_processes`."""
    if local_store and isinstance(engine, LocalEngine):
        return engine.map_in_processes(fn, items, meanwhile, before_fork)
    if meanwhile is not None:
        meanwhile()
    if len(items) == 1:
        return [fn(items[0])]
    return engine.map(fn, items, parallelism)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of small acyclic objects are made (file
    names, slices, plan entries): it would rescan them over and over as they accumulate (measured:
    a tenth of a 1,000,000-file plan, more than half of building the file-system view). Forked
    workers inherit the pause, so they do not touch, and thereby copy, the parent's pages either."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def on_this_machine(master: str) -> bool:
    """True for local masters and for standalone masters on loopback, whose workers (they reach the
    master at 127.0.0.1) run on this machine too."""
    if master.startswith("local"):
        return True
    if not master.startswith("spark://"):
        return False
    hosts = [address.rpartition(":")[0] or address for address in master[len("spark://"):].split(",")]
    return all(host in ("127.0.0.1", "localhost", "[::1]") for host in hosts)


def spark_settings(master: str | None = None, conf: Mapping[str, str] | None = None) -> dict[str, str]:
    """Spark settings with our defaults (no UI, no console progress, loopback for masters on this
    machine).

    `master` defaults to `spark.master` in `conf`, then `local[*]`; any Spark setting in `conf` wins,
    so the same code runs on a standalone, YARN or Kubernetes cluster. For a master on this machine
    (`on_this_machine`) this also binds the driver to loopback. A pure function: see
    `use_this_python` for the one environment setting the executors' Python needs.
    """
    settings = dict(conf or {})
    settings.pop(SPARK_REMOTE_KEY, None)  # pyspark would open a Spark Connect session instead
    master = master or settings.pop("spark.master", None) or DEFAULT_SPARK_MASTER
    defaults = {"spark.master": master, "spark.app.name": "hudi-assets", "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false"}
    if on_this_machine(master):
        defaults.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
    return {**defaults, **settings, "spark.master": master}


def use_this_python(settings: Mapping[str, str]) -> None:
    """Point the executors' Python workers at an interpreter whose environment has our package.

    A context started from Python takes the workers' interpreter only from `PYSPARK_PYTHON` (it
    ignores `spark.pyspark.python`), so that variable is set right before a session starts: to
    `spark.pyspark.python` when the settings give one (Spark documents it as winning over the
    variable), else, for a master on this machine and unless the user set the variable, to this
    interpreter.
    """
    python = settings.get("spark.pyspark.python")
    if python:
        os.environ["PYSPARK_PYTHON"] = python
    elif on_this_machine(settings["spark.master"]):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def spark_session(master: str | None = None, conf: Mapping[str, str] | None = None,
                  remote: str | None = None):
    """Get or start an embedded Spark session with `spark_settings`, or, given `remote`, open a new
    session on that Spark Connect server (see `remote_session`)."""
    if remote:
        return remote_session(remote, conf)
    from pyspark.sql import SparkSession

    settings = spark_settings(master, conf)
    use_this_python(settings)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    with _variables_hidden(SPARK_REMOTE_ENV):  # pyspark would take it over the master asked for
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session


def remote_session(remote: str, conf: Mapping[str, str] | None = None):
    """A session of its own on the Spark Connect server at `remote` (`sc://HOST:PORT`), even where
    this process has other sessions (pyspark's `getOrCreate` would hand back any active one).

    The server's settings are fixed when it starts (master, executors, their Python: see
    `hudi_assets.spark_connect`); of `conf`, what the server lets a session change (`spark.sql.*`)
    is set, and each other setting is logged as not applied.
    """
    require("grpc", "connect", "Spark Connect (spark_remote)")
    from pyspark.errors import PySparkException
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    _refuse_unanswered(remote)
    session = RemoteSparkSession.builder.remote(remote).create()
    CONNECT_CLIENTS.add(session.client)
    for key, value in (conf or {}).items():
        if key in (SPARK_REMOTE_KEY, "spark.master"):
            continue
        try:
            session.conf.set(key, value)
        except PySparkException as exc:
            log.warning("Spark Connect server %s: %s=%s not applied (%s)", remote, key, value,
                        str(exc).splitlines()[0])
    return session


def _refuse_unanswered(remote: str) -> None:
    """Refuse a URL no server answers at, at once: the Connect client would retry for minutes."""
    from hudi_assets.exceptions import InvalidConfigError

    address = urlsplit(remote)
    if address.scheme != "sc" or not address.hostname:
        raise InvalidConfigError(f"spark_remote={remote!r}: expected a Spark Connect URL, sc://HOST:PORT")
    port = address.port or 15002  # Spark Connect's default
    try:
        socket.create_connection((address.hostname, port), timeout=5).close()
    except OSError as exc:
        raise InvalidConfigError(
            f"spark_remote={remote!r}: no Spark Connect server answers at {address.hostname}:{port} "
            f"({exc.strerror or exc}); start one with: python -m hudi_assets.spark_connect start") from exc


@contextmanager
def _variables_hidden(*names: str) -> Iterator[None]:
    saved = {name: os.environ.pop(name) for name in names if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def spark_remote(remote: str | None = None, master: str | None = None,
                 conf: Mapping[str, str] | None = None) -> str | None:
    """The Spark Connect URL to use, or None for an embedded session: `remote` when given, else,
    unless a master is given, `spark.remote` from `conf`, else the `SPARK_REMOTE` variable (the
    names Spark itself reads). A remote and a master given together contradict each other."""
    if remote and master:
        from hudi_assets.exceptions import InvalidConfigError

        raise InvalidConfigError(f"spark_remote={remote!r} and spark_master={master!r}: give one of them")
    if remote or master:
        return remote or None
    return (conf or {}).get(SPARK_REMOTE_KEY) or os.environ.get(SPARK_REMOTE_ENV) or None


# Spark's tuning advice: two to three tasks per core of the application.
TASKS_PER_CORE = 3


class SparkEngine:
    """Runs items as Spark tasks: at most `parallelism` of them, and at most `TASKS_PER_CORE` per core
    of the application, since each task costs its launch whatever it does (measured on local[2]: 200
    tasks of nothing 5.4 s, 20 tasks 0.6 s); results come back in input order either way.

    Embedded (a master), the items are an RDD. On a Spark Connect server (`remote`), which has no
    RDDs, they are rows of a DataFrame (index, pickled item) spread over the tasks by a round-robin
    repartition, and `mapInArrow` applies the function on the executors."""

    def __init__(self, session=None, master: str | None = None, conf: Mapping[str, str] | None = None,
                 remote: str | None = None):
        if session is None:
            require("pyspark", "spark", "the Spark engine")
        self._session = session
        self._master = master
        self._conf = dict(conf or {})
        self._remote = remote
        self._cores: int | None = None

    @property
    def session(self):
        if self._session is None:
            self._session = spark_session(self._master, self._conf, self._remote)
        return self._session

    @property
    def is_remote(self) -> bool:
        """Whether the session is a Spark Connect session (the DataFrame path)."""
        return is_connect_session(self.session)

    def default_parallelism(self) -> int:
        """The application's cores: the context's default parallelism; over Spark Connect, where
        there is no context, `spark.default.parallelism` when the server sets it, else the number
        of splits Spark gives a range without a count (its default parallelism), asked once."""
        if self._cores is None:
            if not self.is_remote:
                self._cores = self.session.sparkContext.defaultParallelism
            else:
                self._cores = _remote_parallelism(self.session)
        return self._cores

    def _slices(self, count: int, parallelism: int | None) -> int:
        return max(1, min(count, parallelism or count, TASKS_PER_CORE * self.default_parallelism()))

    def _rdd(self, items: Sequence[T], parallelism: int | None):
        return self.session.sparkContext.parallelize(list(items), self._slices(len(items), parallelism))

    def _remote_map(self, fn: Callable[[T], R], items: Sequence[T], parallelism: int | None) -> list[R]:
        import pyarrow as pa

        rows = pa.table({"i": pa.array(range(len(items)), pa.int64()),
                         "item": pa.array([pickle.dumps(item, pickle.HIGHEST_PROTOCOL) for item in items],
                                          pa.binary())})
        frame = self.session.createDataFrame(rows)
        if len(items) > 1:  # one row is one task already: no shuffle stage for it
            frame = frame.repartition(self._slices(len(items), parallelism))
        out = frame.mapInArrow(functools.partial(_apply_to_batches, fn), "i long, result binary").toArrow()
        order = sorted(range(out.num_rows), key=out.column("i").to_pylist().__getitem__)
        results = out.column("result").to_pylist()
        return [pickle.loads(results[row]) for row in order]

    def map(self, fn: Callable[[T], R], items: Sequence[T], parallelism: int | None = None) -> list[R]:
        if not items:
            return []
        if self.is_remote:
            return self._remote_map(fn, items, parallelism)
        return self._rdd(items, parallelism).map(fn).collect()

    def flat_map(
        self, fn: Callable[[T], Iterable[R]], items: Sequence[T], parallelism: int | None = None
    ) -> list[R]:
        if not items:
            return []
        if self.is_remote:
            return [r for chunk in self._remote_map(lambda item: list(fn(item)), items, parallelism)
                    for r in chunk]
        return self._rdd(items, parallelism).flatMap(fn).collect()

    def foreach(self, fn: Callable[[T], Any], items: Sequence[T], parallelism: int | None = None) -> None:
        if not items:
            return
        if self.is_remote:
            self._remote_map(functools.partial(_for_effect, fn), items, parallelism)
        else:
            self._rdd(items, parallelism).foreach(fn)


def is_connect_session(session) -> bool:
    """Whether `session` is a Spark Connect client's (it has no SparkContext, hence no RDDs)."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def _remote_parallelism(session) -> int:
    configured = session.conf.get("spark.default.parallelism", None)
    if configured:
        return int(configured)
    # SQL text, not pyspark.sql.functions: those take a process with a Connect session for classic.
    splits = session.range(0, 1 << 12).selectExpr("spark_partition_id() AS split").agg({"split": "max"})
    return int(splits.collect()[0][0]) + 1


def _for_effect(fn: Callable[[Any], Any], item: Any) -> None:
    fn(item)  # the result stays on the executor


def _apply_to_batches(fn: Callable[[Any], Any], batches: Iterable[Any]) -> Iterator[Any]:
    """On an executor: `fn` over each pickled item of each Arrow batch, the result pickled beside
    the item's index."""
    import pyarrow as pa

    for batch in batches:
        results = [pickle.dumps(fn(pickle.loads(item)), pickle.HIGHEST_PROTOCOL)
                   for item in batch.column(1).to_pylist()]
        yield pa.record_batch([batch.column(0), pa.array(results, pa.binary())], names=["i", "result"])


def choose_engine(master: str | None = None, conf: Mapping[str, str] | None = None,
                  remote: str | None = None) -> str:
    """What `auto` runs on: `spark` when a master (`master`, `spark.master` in `conf`) or a Spark
    Connect server (`spark_remote`) is configured, where Spark brings machines or a warm JVM; else
    `local`. Both make the same plan."""
    if master or (conf or {}).get("spark.master") or spark_remote(remote, master, conf):
        return "spark"
    return "local"


def create_engine(kind: str = DEFAULT_ENGINE, master: str | None = None,
                  conf: Mapping[str, str] | None = None, remote: str | None = None) -> Engine:
    """`auto` (the default: `choose_engine`), `spark` (embedded, `local[*]` unless a master is given;
    or on the Spark Connect server that `spark_remote` finds) or `local` (threads and processes)."""
    from hudi_assets.exceptions import InvalidConfigError

    if kind == "auto":
        kind = choose_engine(master, conf, remote)
    if kind == "local":
        if remote:
            raise InvalidConfigError(f"spark_remote={remote!r} needs engine='spark', not 'local'")
        return LocalEngine()
    if kind == "spark":
        return SparkEngine(master=master, conf=conf, remote=spark_remote(remote, master, conf))
    raise InvalidConfigError(f"engine={kind!r}: expected one of {', '.join(ENGINES)}")
