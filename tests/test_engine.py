"""Both engines give the same results; Spark executors open the table's storage themselves."""

from __future__ import annotations

import os
import sys

import pytest

from hudi_assets.engine import (
    LocalEngine,
    SparkEngine,
    create_engine,
    spark_settings,
    store_map,
    use_this_python,
)
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.storage import Storage

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")  # stopped before another module starts a session of its own
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
    assert spark_engine.session.sparkContext.master.startswith("local")  # the session tests share


def test_spark_settings_master_precedence_and_defaults():
    standalone = "spark://127.0.0.1:7077"
    assert spark_settings(conf={"spark.master": standalone})["spark.master"] == standalone
    assert spark_settings("yarn", {"spark.master": "local[1]"})["spark.master"] == "yarn"
    local = spark_settings(conf={"spark.executor.memory": "2g", "spark.ui.enabled": "true"})
    assert local["spark.master"] == "local[*]" and local["spark.driver.host"] == "127.0.0.1"
    assert local["spark.executor.memory"] == "2g" and local["spark.ui.enabled"] == "true"
    assert spark_settings("yarn")["spark.ui.showConsoleProgress"] == "false"
    assert "spark.driver.host" not in spark_settings("yarn")
    assert spark_settings("spark://127.0.0.1:7077")["spark.driver.bindAddress"] == "127.0.0.1"
    assert "spark.driver.host" not in spark_settings("spark://10.1.2.3:7077")


def test_executors_python_on_this_machine_or_as_configured(monkeypatch):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    use_this_python(spark_settings("spark://10.1.2.3:7077"))  # workers elsewhere: their own Python
    assert "PYSPARK_PYTHON" not in os.environ
    use_this_python(spark_settings("spark://localhost:7077"))
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    use_this_python(spark_settings("yarn", {"spark.pyspark.python": "/opt/env/bin/python"}))
    assert os.environ["PYSPARK_PYTHON"] == "/opt/env/bin/python"  # else ignored from Python


def test_one_directory_is_listed_here_not_as_a_spark_job():
    engine = SparkEngine(master="local[1]")
    assert store_map(engine, False, lambda d: d.upper(), ["year=2024"], 8) == ["YEAR=2024"]
    assert engine._session is None  # no session was started for it


def test_create_engine_rejects_unknown_kinds():
    assert isinstance(create_engine("local"), LocalEngine)
    with pytest.raises(InvalidConfigError, match="engine='"):
        create_engine("flink")
