"""A long-lived Spark Connect server from this environment's own pyspark, so that runs of the engine
(`--spark-remote sc://HOST:PORT`, `engine="spark", spark_remote=...`) start no JVM of their own.

The server is pyspark's `SparkConnectServer` (its jar ships among pyspark's jars), launched with
`spark-submit` in a process group of its own, bound to loopback, its executors running this
interpreter (so they import this package). From a shell:

    python -m hudi_assets.spark_connect start [--port 15002] [--master 'local[*]'] [--conf K=V]
                                              [--log FILE] [--pid-file FILE]
    python -m hudi_assets.spark_connect stop --pid-file FILE

`start` returns once the server listens and prints its URL (`--port 0` picks a free port); `stop`
ends the server's whole process group (Python workers included).

The URL names one session that every client shares (`sc://127.0.0.1:PORT/;session_id=UUID`, Spark
Connect's own syntax), which the server keeps however long it is idle. Spark 4.3 starts a Python
daemon per session and keeps it until the server stops (about 50 MB each, plus workers that import
this package anew): with one session, runs reuse one daemon and its warm workers instead of adding
one per run. Clients must therefore not stop (release) that session; settings one client sets on it
apply to all.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hudi_assets.engine import CONNECT_CLIENTS, DEFAULT_SPARK_MASTER, available_cpus, spark_settings
from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.extras import require

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DEFAULT_PORT = 15002  # Spark Connect's own default
HOST = "127.0.0.1"
SHARED_SESSION_TIMEOUT = "3650d"
STARTED = re.compile(r"Spark Connect server started at: \S*?:(\d+)")


class SparkConnectServerError(HudiAssetsError):
    """The Spark Connect server did not start (its log says why) or could not be stopped."""


@dataclass
class ConnectServer:
    """A running server: its URL (with the shared session), the process group it leads, its log."""

    url: str
    pid: int
    log: Path
    _process: subprocess.Popen | None = field(default=None, repr=False)

    def stop(self, timeout: float = 30) -> None:
        close_clients()
        stop_server(self.pid, timeout, self._process)


def spark_submit() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-submit"


def server_settings(port: int = DEFAULT_PORT, master: str = DEFAULT_SPARK_MASTER,
                    conf: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's Spark settings: the engine's defaults (`spark_settings`: no UI, loopback driver),
    the gRPC service on loopback at `port`, executors on this interpreter, sessions kept while idle
    (the shared one must outlive quiet nights), and, for a local master,
    its core count as the default parallelism (clients then need not ask for it). `conf` wins."""
    settings = spark_settings(master)
    settings.update({"spark.connect.grpc.binding.address": HOST,
                     "spark.connect.grpc.binding.port": str(port),
                     "spark.connect.session.manager.defaultSessionTimeout": SHARED_SESSION_TIMEOUT,
                     "spark.pyspark.python": sys.executable})
    local = re.fullmatch(r"local\[(\d+|\*)\]", master)
    if local:
        settings["spark.default.parallelism"] = str(available_cpus() if local[1] == "*" else local[1])
    settings.update(conf or {})
    return settings


def start_server(port: int = DEFAULT_PORT, master: str = DEFAULT_SPARK_MASTER,
                 conf: Mapping[str, str] | None = None, log: Path | None = None,
                 timeout: float = 120) -> ConnectServer:
    """Start a server and return once it listens (about 10 s here). Its working directory is the
    log's, where Spark may leave files of its own."""
    require("pyspark", "spark", "the Spark Connect server")
    log = log or Path(tempfile.mkdtemp(prefix="hudi-assets-spark-connect-")) / "server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [str(spark_submit()), "--class", SERVER_CLASS, "--name", "hudi-assets Spark Connect"]
    for key, value in server_settings(port, master, conf).items():
        command += ["--conf", f"{key}={value}"]
    env = {**os.environ, "SPARK_LOCAL_IP": HOST, "PYSPARK_PYTHON": sys.executable}
    env.pop("SPARK_REMOTE", None)  # the server's own session is embedded
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=log.parent,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while True:
        text = log.read_text(errors="replace")
        started = STARTED.search(text)
        if started:
            return ConnectServer(f"sc://{HOST}:{started[1]}/;session_id={uuid.uuid4()}", process.pid, log,
                                 process)
        if process.poll() is not None or time.monotonic() > deadline:
            stop_server(process.pid, process=process)
            raise SparkConnectServerError(f"the Spark Connect server did not start (log {log}):\n"
                                          f"{text[-3000:]}")
        time.sleep(0.2)


def close_clients() -> None:
    """Close the Spark Connect clients this process opened (`remote_session`) while their server is
    still up. An open client cleans up at interpreter exit with an RPC (`_on_exit`: its ML cache),
    which against a stopped server retries for about ten minutes (RETRIES_EXCEEDED) and holds the
    process open that long. `close()` waits for pending releases and closes the channel; it does
    not release the session the server keeps for every client."""
    for client in list(CONNECT_CLIENTS):
        if not client.is_closed:
            client.close()


def stop_server(pid: int, timeout: float = 30, process: subprocess.Popen | None = None) -> None:
    """End the server's process group (SIGTERM, then SIGKILL after `timeout` s) and return once no
    process of it is left (the JVM, its Python workers); a server already gone is fine. `process`:
    the server's `Popen` when this process started it (it must reap it)."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if process is not None:
                process.poll()
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
    raise SparkConnectServerError(f"the Spark Connect server (process group {pid}) did not stop")


@contextmanager
def connect_server(port: int = 0, master: str = DEFAULT_SPARK_MASTER, conf: Mapping[str, str] | None = None,
                   log: Path | None = None) -> Iterator[ConnectServer]:
    """A server for the time of a `with` block (a free port by default)."""
    server = start_server(port, master, conf, log)
    try:
        yield server
    finally:
        server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    from hudi_assets.config import parse_overrides

    parser = argparse.ArgumentParser(prog="python -m hudi_assets.spark_connect",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", help="start a server, wait until it listens, print its URL")
    start.add_argument("--port", type=int, default=DEFAULT_PORT,
                       help="gRPC port on 127.0.0.1 (0: any free one)")
    start.add_argument("--master", default=DEFAULT_SPARK_MASTER, help="the server's Spark master")
    start.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                       help="a Spark setting (repeat)")
    start.add_argument("--log", type=Path, help="the server's log file (default: a new temporary folder)")
    start.add_argument("--pid-file", type=Path, help="write the server's process id here (for stop)")
    stop = sub.add_parser("stop", help="stop the server whose process id the file holds")
    stop.add_argument("--pid-file", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "start":
            server = start_server(args.port, args.master, parse_overrides(args.conf), args.log)
            if args.pid_file:
                args.pid_file.write_text(f"{server.pid}\n")
            print(server.url)
        else:
            stop_server(int(args.pid_file.read_text()))
            args.pid_file.unlink()
    except (HudiAssetsError, OSError, ValueError) as exc:
        print(f"spark_connect: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
