"""Both engines give the same results; Spark executors open the table's storage themselves."""

from __future__ import annotations

import pytest

from hudi_assets.engine import LocalEngine, SparkEngine, create_engine
from hudi_assets.storage import Storage

pytestmark = pytest.mark.spark


@pytest.fixture(scope="session")
def spark_engine():
    engine = SparkEngine(master="local[2]")
    yield engine
    engine.session.stop()


def _square(x: int) -> int:
    return x * x


def test_engines_agree(spark_engine):
    items = list(range(50))
    for engine in (LocalEngine(4), spark_engine):
        assert engine.map(_square, items, parallelism=7) == [x * x for x in items]
        assert engine.flat_map(lambda x: [x] * (x % 3), items, 5) == [x for x in items for _ in range(x % 3)]
        assert engine.map(_square, []) == []


def test_executors_reopen_storage_and_write(spark_engine, tmp_path):
    storage = Storage(str(tmp_path))
    names = [f"p{i}/f{i}" for i in range(10)]
    spark_engine.foreach(lambda n: storage.write(n, n.encode()), names, parallelism=4)
    assert spark_engine.map(lambda n: storage.read(n).decode(), names) == names
    assert spark_engine.session.sparkContext.master == "local[2]"


def test_create_engine_rejects_unknown_kinds():
    assert isinstance(create_engine("local"), LocalEngine)
    with pytest.raises(ValueError, match="unknown engine"):
        create_engine("flink")
