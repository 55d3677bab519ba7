"""A Spark standalone cluster on 127.0.0.1 (a master and workers started from pyspark's own
`spark-class`), for tests and benches that run the engine on executors in other processes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

MASTER_URL = re.compile(r"Starting Spark master at (spark://\S+)")
REGISTERED = re.compile(r"(Successfully registered with master)")


def spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def cluster_available() -> str | None:
    """Why a standalone cluster cannot start here, or None."""
    if shutil.which("java") is None:
        return "needs java"
    if not spark_class().exists():
        return "needs pyspark's spark-class"
    return None


@contextmanager
def _daemon(args: list[str], log: Path, ready: re.Pattern, timeout: float = 120) -> Iterator[str]:
    """Run one Spark daemon until `ready` matches its log; yields the first group; stops it after."""
    # Loopback for every socket and web UI; no REST submission server (a fixed port, 6066).
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1",
           "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false"}
    with log.open("w") as out:
        process = subprocess.Popen([str(spark_class()), *args], stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + timeout
        while True:
            text = log.read_text(errors="replace")
            found = ready.search(text)
            if found:
                yield found.group(1)
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{args[0]} did not start:\n{text[-3000:]}")
            time.sleep(0.2)
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def standalone_cluster(workdir: Path, workers: int = 2, cores: int = 1, memory: str = "1g") -> Iterator[str]:
    """A master and `workers` workers of `cores` cores each; yields the master URL. Executors the
    workers start log and keep their files under `workdir`."""
    workdir.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        master = stack.enter_context(_daemon(
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0",
             "--webui-port", "0"], workdir / "master.log", MASTER_URL))
        for i in range(workers):
            stack.enter_context(_daemon(
                ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", str(cores),
                 "--memory", memory, "--webui-port", "0", "--work-dir", str(workdir / f"worker{i}"), master],
                workdir / f"worker{i}.log", REGISTERED))
        yield master


def cluster_conf(cores: int, executor_memory: str = "1g") -> dict[str, str]:
    """Application settings for a cluster of `standalone_cluster`: every core, small executors."""
    return {"spark.cores.max": str(cores), "spark.executor.cores": "1",
            "spark.executor.memory": executor_memory}
