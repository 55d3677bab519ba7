"""The local engine's forked workers: results in order from other processes, errors raised as the
parent's own, and a clean plan identical to the one planned in a single process."""

from __future__ import annotations

import os
import threading

import pytest

from hudi_assets.clean import CleanConfig
from hudi_assets.clean.workflow import plan_clean
from hudi_assets.demo import generate_table
from hudi_assets.engine import LocalEngine, store_map
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

FORKING = LocalEngine(processes=2, process_min_items=2)


def _square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def test_map_in_processes_returns_results_in_order_from_workers():
    results = FORKING.map_in_processes(_square_and_pid, list(range(40)))
    assert [r for r, _ in results] == [x * x for x in range(40)]
    assert os.getpid() not in {pid for _, pid in results}


def test_a_failing_item_raises_the_parents_own_error():
    def decode(x: int) -> int:
        if x == 7:
            raise CorruptFileError(f"p/{x}", "torn block")  # its two-argument init does not unpickle
        return x

    with pytest.raises(CorruptFileError) as raised:
        FORKING.map_in_processes(decode, list(range(10)))
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


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_plan_from_forked_workers_equals_the_single_process_plan(tmp_path, table_type):
    """A demo table with replaced file groups, a savepoint, a pending compaction (MOR) and a failed
    write: what the workers get by forking and return by pickling decides the same plan."""
    generate_table(Storage(str(tmp_path)), table_type, partitions=6, files_per_partition=3, commits=8,
                   fast=True)
    config = CleanConfig(commits_retained=2)
    plans = []
    for engine in (LocalEngine(processes=1), FORKING):
        plan, planner = plan_clean(HoodieTable(str(tmp_path)), config, engine, with_sizes=True)
        plans.append((plan.to_record(), planner.file_sizes))
    assert plans[0][0]["filePathsToBeDeletedPerPartition"]  # the table has something to clean
    assert plans[0] == plans[1]
    assert list(plans[0][0]["filePathsToBeDeletedPerPartition"]) == \
        list(plans[1][0]["filePathsToBeDeletedPerPartition"])
