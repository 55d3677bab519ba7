"""The engine on a Spark standalone cluster (a master and two workers on 127.0.0.1, started from
pyspark's `spark-class`): executors in other processes run this package's Python, a clean deletes
exactly what the local engine deletes, and only the plan's names come back to the driver."""

from __future__ import annotations

import copy
import os
import sys
from datetime import UTC, datetime

import pytest
from support.spark_cluster import cluster_available, cluster_conf, standalone_cluster

from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.clean.planner import PartitionDecision
from hudi_assets.demo import generate_table
from hudi_assets.engine import LocalEngine, SparkEngine
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline import metadata

pytestmark = [pytest.mark.spark, pytest.mark.skipif(cluster_available() is not None,
                                                    reason=cluster_available() or "")]
SPEC = {"partitions": 5, "commits": 10, "files_per_partition": 4, "update_fraction": 0.6, "seed": 11,
        "fast": True}
CONFIG = CleanConfig(commits_retained=3)
NOW = datetime(2030, 1, 1, tzinfo=UTC)


class RecordingEngine(SparkEngine):
    """The cluster engine, keeping what each job returned to the driver."""

    def __init__(self, master: str, conf: dict[str, str]):
        super().__init__(master=master, conf=conf)
        self.returned: list = []

    def map(self, fn, items, parallelism=None):
        results = super().map(fn, items, parallelism)
        # A copy: the planner empties each decision's names as it turns them into paths.
        self.returned.extend(copy.deepcopy(results))
        return results


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from pyspark import SparkContext

    leftover = SparkContext._active_spark_context
    if leftover is not None:  # a session another module left: getOrCreate would hand that one back
        leftover.stop()
    # What an earlier local session set: the engine must choose the executors' Python by itself.
    preset = os.environ.pop("PYSPARK_PYTHON", None)
    with standalone_cluster(tmp_path_factory.mktemp("spark")) as master:
        engine = RecordingEngine(master, cluster_conf(cores=2))
        try:
            assert engine.session.sparkContext.master == master
            yield engine
        finally:
            engine.session.stop()
            if preset is not None:
                os.environ["PYSPARK_PYTHON"] = preset


def _data_files(path) -> set[str]:
    return {p.relative_to(path).as_posix() for p in path.rglob("*")
            if p.is_file() and ".hoodie" not in p.relative_to(path).parts}


def _completed_clean(table: HoodieTable) -> dict:
    timeline = table.reload_timeline()
    [clean] = timeline.clean_timeline().filter_completed()
    record = metadata.completed_metadata(timeline, clean)
    record.pop("timeTakenInMillis")
    return record


def test_executors_run_this_python(cluster):
    def where(_):
        import hudi_assets

        return sys.executable, hudi_assets.__file__, os.getpid()

    found = set(cluster.map(where, list(range(8)), parallelism=4))
    import hudi_assets

    assert {(python, module) for python, module, _ in found} == {(sys.executable, hudi_assets.__file__)}
    assert len({pid for *_, pid in found}) >= 2  # two executors' Python workers, not the driver
    assert os.getpid() not in {pid for *_, pid in found}


def test_cluster_clean_deletes_what_the_local_engine_deletes(cluster, tmp_path):
    local, remote = tmp_path / "local", tmp_path / "cluster"
    for path in (local, remote):
        generate_table(Storage(str(path)), "MERGE_ON_READ", **SPEC)
    assert _data_files(local) == _data_files(remote)
    before = _data_files(remote)

    local_result = Cleaner(HoodieTable(str(local)), CONFIG, LocalEngine(), clock=lambda: NOW).clean()
    cluster.returned.clear()
    cluster_result = Cleaner(HoodieTable(str(remote)), CONFIG, cluster, clock=lambda: NOW).clean()

    assert cluster_result.files_deleted == local_result.files_deleted > 0
    assert _data_files(remote) == _data_files(local) != before
    assert _completed_clean(HoodieTable(str(remote))) == _completed_clean(HoodieTable(str(local)))
    assert cluster.returned  # the plan and the deletes ran as cluster jobs


def test_only_the_plans_names_come_back_to_the_driver(cluster, tmp_path):
    path = tmp_path / "t"
    generate_table(Storage(str(path)), "COPY_ON_WRITE", **SPEC)
    cluster.returned.clear()
    plan = Cleaner(HoodieTable(str(path)), CONFIG, cluster).plan(with_sizes=True)
    decisions = [entry for _, entry, _ in cluster.returned if entry is not None]
    assert all(type(d) is PartitionDecision for d in decisions)
    returned = [name for d in decisions for name in d.files]
    assert all(type(name) is str for name in returned)
    assert all(type(size) is int for d in decisions for size in d.file_sizes or [])
    planned = [info.file_path.rpartition("/")[2] for infos in plan.file_paths_to_delete.values()
               for info in infos]
    assert sorted(returned) == sorted(planned) and 0 < len(returned) < len(_data_files(path))
