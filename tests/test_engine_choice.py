"""The default engine `auto`: Spark where a master or a Spark Connect server is configured, the local
engine otherwise; `--engine spark|local` still forces either, and every choice makes the same plan."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hudi_assets.cli import main
from hudi_assets.demo import generate_table
from hudi_assets.engine import DEFAULT_ENGINE, LocalEngine, choose_engine, create_engine
from hudi_assets.extras import installed
from hudi_assets.storage import Storage

RETAIN = ["--hoodie-conf", "hoodie.cleaner.commits.retained=2"]


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "t"
    generate_table(Storage(str(path)), "COPY_ON_WRITE", name="t", partitions=3, files_per_partition=4,
                   commits=6, seed=5)
    return path


def test_auto_is_spark_only_where_spark_is_configured(monkeypatch):
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    assert DEFAULT_ENGINE == "auto"
    assert choose_engine() == "local"
    assert choose_engine(conf={"spark.executor.memory": "2g"}) == "local"
    assert choose_engine(master="spark://10.1.2.3:7077") == "spark"
    assert choose_engine(conf={"spark.master": "yarn"}) == "spark"
    assert choose_engine(conf={"spark.remote": "sc://a:1"}) == "spark"
    assert choose_engine(remote="sc://a:1") == "spark"
    monkeypatch.setenv("SPARK_REMOTE", "sc://from-env:1")
    assert choose_engine() == "spark"
    monkeypatch.delenv("SPARK_REMOTE")
    assert isinstance(create_engine(), LocalEngine) and isinstance(create_engine("auto"), LocalEngine)


@pytest.mark.skipif(not installed("pyspark"), reason="pyspark (the spark extra) is not installed")
def test_auto_with_a_master_is_the_spark_engine():
    from hudi_assets.engine import SparkEngine

    engine = create_engine("auto", master="local[2]")
    assert isinstance(engine, SparkEngine) and engine._session is None  # no JVM until first used


def test_default_dry_run_starts_no_jvm(table):
    """With pyspark installed the default used to be an embedded Spark: a JVM for a 3-partition table."""
    code = (f"import sys; from hudi_assets.cli import main; "
            f"code = main(['clean', {str(table)!r}, '--dry-run', *{RETAIN!r}]); "
            "print(code, sorted(m for m in sys.modules if m == 'pyspark' or m.startswith('py4j')))")
    env = {"PATH": "/usr/bin:/bin"}  # no SPARK_REMOTE or other Spark settings from the caller
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.splitlines()[-1] == "0 []", done.stderr


@pytest.mark.spark
def test_every_engine_choice_plans_the_same(table, capsys, monkeypatch):
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    plans = []
    for engine in ([], ["--engine", "local"], ["--engine", "spark", "--spark-master", "local[2]"],
                   ["--spark-master", "local[2]"]):
        assert main(["clean", str(table), "--dry-run", "--json", *RETAIN, *engine]) == 0
        plans.append(json.loads(capsys.readouterr().out))
    assert plans[0]["totals"]["files"] > 0
    assert all(plan == plans[0] for plan in plans)
