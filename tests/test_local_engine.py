"""The local engine's forked workers: results in order from other processes, errors raised as the
parent's own, and a clean plan identical to the one planned in a single process.

The engine does not fork while threads other than its own run, and a test session may hold some (a
Spark session's gateway): what must happen in workers is checked in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.demo import generate_table
from hudi_assets.engine import LocalEngine, store_map
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

FORKING = LocalEngine(processes=2, process_min_items=2)


def _square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def _fresh(code: str) -> str:
    """Run `code` in a new interpreter, where no foreign thread keeps the engine from forking."""
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout


def test_map_in_processes_returns_results_in_order_from_workers():
    out = _fresh("import json, os\n"
                 "from hudi_assets.engine import LocalEngine\n"
                 "engine = LocalEngine(processes=2, process_min_items=2)\n"
                 "results = engine.map_in_processes(lambda x: (x * x, os.getpid()), list(range(40)))\n"
                 "print(json.dumps({'parent': os.getpid(), 'results': results}))")
    found = json.loads(out)
    assert [r for r, _ in found["results"]] == [x * x for x in range(40)]
    assert found["parent"] not in {pid for _, pid in found["results"]}


def test_workers_inherit_the_items_instead_of_unpickling_them():
    """Items that do not pickle (a lock here; a metadata-table plan's names and sizes, which would
    cost a pickling each) reach the forked workers all the same: only chunk bounds are sent."""
    out = _fresh("import json, os, threading\n"
                 "from hudi_assets.engine import LocalEngine\n"
                 "engine = LocalEngine(processes=2, process_min_items=2)\n"
                 "items = [(n, threading.Lock()) for n in range(40)]\n"
                 "results = engine.map_in_processes(lambda item: (item[0], os.getpid()), items)\n"
                 "print(json.dumps({'parent': os.getpid(), 'results': results}))")
    found = json.loads(out)
    assert [n for n, _ in found["results"]] == list(range(40))
    assert found["parent"] not in {pid for _, pid in found["results"]}


def test_map_chunks_in_processes_hands_each_worker_whole_chunks_of_at_most_most_items():
    """A function of a chunk (one numpy pass over a chunk's names, in a metadata-table plan) runs on
    chunks of `most` items at most, a few per worker, in workers; its results come back in order.
    Without workers it runs here, chunk by chunk."""
    out = _fresh("import json, os\n"
                 "from hudi_assets.engine import LocalEngine\n"
                 "def squares(chunk):\n"
                 "    return [(x * x, len(chunk), os.getpid()) for x in chunk]\n"
                 "engines = [LocalEngine(processes=2, process_min_items=2), LocalEngine(processes=1)]\n"
                 "results = [e.map_chunks_in_processes(squares, list(range(40)), 3) for e in engines]\n"
                 "print(json.dumps({'parent': os.getpid(), 'results': results}))")
    found = json.loads(out)
    forked, alone = found["results"]
    for results in (forked, alone):
        assert [r for r, _, _ in results] == [x * x for x in range(40)]
        assert max(size for _, size, _ in results) == 3
    assert found["parent"] not in {pid for _, _, pid in forked}
    assert {pid for _, _, pid in alone} == {found["parent"]}
    few = LocalEngine(processes=2).map_chunks_in_processes(lambda chunk: [len(chunk)] * len(chunk),
                                                           list(range(16)), 100)
    assert few == [2] * 16  # a few chunks per worker even when `most` allows more


def _decode(x: int) -> int:
    if x == 7:
        raise CorruptFileError(f"p/{x}", "torn block")  # its two-argument init does not unpickle
    return x


@pytest.mark.parametrize("run", [lambda items: FORKING.map_in_processes(_decode, items),
                                 lambda items: FORKING.map_chunks_in_processes(
                                     lambda chunk: [_decode(x) for x in chunk], items, 3)],
                         ids=["items", "chunks"])
def test_a_failing_item_raises_the_parents_own_error(run):
    """Whether a worker runs one item or a chunk (a metadata-table plan reads a chunk of partitions'
    records), the parent raises the error itself, naming the file."""
    with pytest.raises(CorruptFileError) as raised:
        run(list(range(10)))
    assert (raised.value.path, raised.value.problem) == ("p/7", "torn block")


def test_a_result_that_does_not_pickle_is_made_in_the_parent():
    results = FORKING.map_in_processes(lambda x: (lambda: x), list(range(6)))
    assert [make() for make in results] == list(range(6))


def test_work_of_a_worker_that_dies_is_done_in_the_parent():
    parent = os.getpid()

    def fragile(x: int) -> int:
        if os.getpid() != parent:
            os._exit(1)  # as a worker killed for memory would vanish
        return x

    assert FORKING.map_in_processes(fragile, list(range(8))) == list(range(8))


def test_no_fork_while_other_threads_run_or_for_few_items():
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="someone-else")
    other.start()
    try:
        assert {pid for _, pid in FORKING.map_in_processes(_square_and_pid, [1, 2, 3])} == {os.getpid()}
    finally:
        stop.set()
        other.join()
    few = LocalEngine(processes=2, process_min_items=10)
    assert {pid for _, pid in few.map_in_processes(_square_and_pid, [1, 2, 3])} == {os.getpid()}
    assert {pid for _, pid in LocalEngine(processes=1).map_in_processes(_square_and_pid, [1, 2])} == \
        {os.getpid()}


def test_object_stores_keep_threads():
    pids = store_map(FORKING, False, _square_and_pid, list(range(8)), 4)
    assert {pid for _, pid in pids} == {os.getpid()}


PLAN_IN_WORKERS = """
import json, sys
from hudi_assets import engine as engines
from hudi_assets.clean import CleanConfig
from hudi_assets.clean.cleaner import Cleaner
from hudi_assets.table import HoodieTable
assert engines._can_fork()  # six partitions, two at least per worker: listed and planned in workers
engine = engines.LocalEngine(processes=2, process_min_items=2)
cleaner = Cleaner(HoodieTable(sys.argv[1]), CleanConfig(commits_retained=2), engine)
plan = cleaner.plan(with_sizes=True)
print(json.dumps([plan.to_record(), cleaner.planner.file_sizes]))
"""


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_plan_from_forked_workers_equals_the_single_process_plan(tmp_path, table_type):
    """A demo table with replaced file groups, a savepoint, a pending compaction (MOR) and a failed
    write: what the workers get by forking and return by pickling decides the same plan."""
    generate_table(Storage(str(tmp_path)), table_type, partitions=6, files_per_partition=3, commits=8,
                   fast=True)
    config = CleanConfig(commits_retained=2)
    cleaner = Cleaner(HoodieTable(str(tmp_path)), config, LocalEngine(processes=1))
    plan = cleaner.plan(with_sizes=True)
    here = [plan.to_record(), cleaner.planner.file_sizes]
    assert here[0]["filePathsToBeDeletedPerPartition"]  # the table has something to clean
    forked = json.loads(subprocess.run([sys.executable, "-c", PLAN_IN_WORKERS, str(tmp_path)], check=True,
                                       capture_output=True, text=True).stdout)
    assert forked == json.loads(json.dumps(here))
    assert list(forked[0]["filePathsToBeDeletedPerPartition"]) == \
        list(here[0]["filePathsToBeDeletedPerPartition"])


def test_imap_in_processes_yields_each_result_in_order_as_it_comes():
    out = _fresh("import json, os\n"
                 "from hudi_assets.engine import LocalEngine\n"
                 "engine = LocalEngine(processes=2, process_min_items=2)\n"
                 "results = []\n"
                 "for r in engine.imap_in_processes(lambda x: (x + 1, os.getpid()), list(range(12)), 1):\n"
                 "    results.append(r)\n"
                 "    if len(results) == 5: break  # the caller stops: the pool is shut down\n"
                 "print(json.dumps({'parent': os.getpid(), 'results': results}))")
    found = json.loads(out)
    assert [r for r, _ in found["results"]] == [1, 2, 3, 4, 5]
    assert found["parent"] not in {pid for _, pid in found["results"]}


CLEAN_IN_WORKERS = """
import json, os, sys
from hudi_assets import engine as engines
from dataclasses import replace
from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.clean.validation import PlanValidator
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import Instant
from hudi_assets.timeline.metadata import completed_metadata

config = CleanConfig(commits_retained=2)
one_file_per_batch = replace(config, delete_batch=1)  # a task per file: the deletes go to the workers
out = {}
for path, engine in zip(sys.argv[1:], [engines.LocalEngine(processes=1),
                                       engines.LocalEngine(processes=2, process_min_items=2)]):
    assert engines._can_fork()
    table = HoodieTable(path)
    plan = Cleaner(table, config, engine).plan()
    verdict = PlanValidator(table, config, engine=engine).validate([("9" * 17, "plan", plan)])
    result = Cleaner(HoodieTable(path), one_file_per_batch, engine).clean()
    table = HoodieTable(path)
    meta = completed_metadata(table.active_timeline, Instant(result.executed[0].instant, "clean"))
    left = sorted(os.path.relpath(os.path.join(d, n), path) for d, _, names in os.walk(path)
                  for n in names if "/.hoodie" not in d + "/")
    out[path] = {"validated": [[p.files, p.companions] for p in verdict.plans], "safe": verdict.safe,
                 "partitions": meta["partitionMetadata"], "deleted": meta["totalFilesDeleted"], "left": left}
print(json.dumps(list(out.values())))
"""


def test_clean_validated_and_deleted_in_forked_workers_equals_the_single_process_clean(tmp_path):
    """Two copies of one demo table: validation verdicts, the clean metadata (deleted and failed per
    file) and the files left are the same whether partitions are checked and files unlinked in
    forked workers or in one process."""
    tables = [tmp_path / "one", tmp_path / "forked"]
    for path in tables:
        generate_table(Storage(str(path)), "MERGE_ON_READ", partitions=6, files_per_partition=3, commits=8,
                       fast=True)
    one, forked = json.loads(subprocess.run([sys.executable, "-c", CLEAN_IN_WORKERS, *map(str, tables)],
                                            check=True, capture_output=True, text=True).stdout)
    assert one["safe"] and one["deleted"] > 2
    assert forked == one


MEANWHILE = """
import json, os
from hudi_assets.engine import LocalEngine, store_map
seen = []
engines = [LocalEngine(processes=2, process_min_items=2), LocalEngine(processes=1)]
out = []
for engine in engines:
    seen.clear()
    results = store_map(engine, True, lambda x: (len(seen), os.getpid()), list(range(20)), 4,
                        meanwhile=lambda: seen.append(os.getpid()))
    out.append({"seen": seen, "workers_saw": sorted({n for n, _ in results}),
                "pids": sorted({pid for _, pid in results} - {os.getpid()})})
print(json.dumps([out, os.getpid()]))
"""


def test_meanwhile_runs_once_in_the_parent_after_the_workers_forked():
    """The parent's own work runs once, in the parent; forked workers never see its effects (they
    forked before it ran); without workers it runs once too."""
    (forked, alone), parent = json.loads(_fresh(MEANWHILE))
    assert forked["seen"] == [parent] and forked["pids"] and forked["workers_saw"] == [0]
    assert alone["seen"] == [parent] and alone["pids"] == []


BEFORE_FORK = """
import json, os
from hudi_assets.engine import LocalEngine, store_map
seen = []
out = []
def each(engine, fn, items, before_fork):
    return store_map(engine, True, fn, items, 4, before_fork=before_fork)
def chunks(engine, fn, items, before_fork):
    return engine.map_chunks_in_processes(lambda chunk: list(map(fn, chunk)), items, 3, before_fork)
for way in (each, chunks):
    for engine in (LocalEngine(processes=2, process_min_items=2), LocalEngine(processes=1)):
        seen.clear()
        results = way(engine, lambda x: (len(seen), os.getpid()), list(range(20)),
                      lambda: seen.append(os.getpid()))
        out.append({"seen": list(seen), "workers_saw": sorted({n for n, _ in results}),
                    "pids": sorted({pid for _, pid in results} - {os.getpid()})})
print(json.dumps([out, os.getpid()]))
"""


def test_before_fork_runs_once_in_the_parent_and_the_workers_inherit_it():
    """What each worker would repeat (an import) runs once in the parent before the fork, so every
    worker starts with its effects; where nothing forks it does not run at all. Item by item
    (`store_map`) and chunk by chunk (`map_chunks_in_processes`) alike."""
    runs, parent = json.loads(_fresh(BEFORE_FORK))
    for forked, alone in (runs[:2], runs[2:]):
        assert forked["seen"] == [parent] and forked["pids"] and forked["workers_saw"] == [1]
        assert alone["seen"] == [] and alone["pids"] == []
