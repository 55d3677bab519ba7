"""`bash scripts/ui.sh`: the Dagster UI on a prepared instance, stopped cleanly.

Prepares DAGSTER_HOME (telemetry off, one run per table, the Spark pool: `instance.prepare_dagster_home`),
starts the warm engine the runs share (a Spark Connect server, `hudi_assets.spark_connect`, exported as
`HUDI_ASSETS_SPARK_REMOTE`) unless the engine is local or a server is given, runs `dagster dev` in its own
process group, and on Ctrl-C or SIGTERM stops the whole group: SIGTERM,
then SIGKILL of whatever is left after `GRACE_SECONDS`, all within `STOP_SECONDS`.

Why a launcher: started from a non-interactive shell (`cmd &`, a CI step, a service manager),
`dagster dev` inherits SIGINT ignored, and Dagster maps SIGTERM to its SIGINT handling, so it ignores
SIGTERM as well; a SIGKILL then orphans its webserver and daemon, which keep the port. This process
installs handlers before starting it (a handled signal is reset to the default in the child, an
ignored one would stay ignored) and forwards the stop to the child's whole process group.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hudi_assets.orchestration.instance import prepare_dagster_home

GRACE_SECONDS = 6.0
STOP_SECONDS = 9.0


class ProcessGroup:
    """A command in a process group of its own, stopped as a group."""

    def __init__(self, argv: list[str], env: dict[str, str]):
        self.process = subprocess.Popen(argv, env=env, start_new_session=True)

    def alive(self) -> bool:
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def stop(self) -> None:
        """SIGTERM to the group, SIGKILL to what is left after the grace period; returns once it is empty
        (or `STOP_SECONDS` passed)."""
        start = time.monotonic()
        for sig, until in ((signal.SIGTERM, GRACE_SECONDS), (signal.SIGKILL, STOP_SECONDS)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            while time.monotonic() - start < until:
                self.process.poll()  # reaps the leader, so that an exited group reads as gone
                if not self.alive():
                    return
                time.sleep(0.1)


def run(argv: list[str], env: dict[str, str]) -> int:
    """Runs `argv` as a group until it exits or this process is told to stop (SIGINT, SIGTERM)."""
    stopping: list[int] = []

    def stop(signum, _frame) -> None:
        stopping.append(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        group = ProcessGroup(argv, env)
        while not stopping and group.process.poll() is None:
            time.sleep(0.2)
        code = group.process.returncode
        group.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 + stopping[0] if stopping else (code or 0)


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The Dagster UI of the maintenance graph, on a prepared "
                                                 "instance; Ctrl-C or SIGTERM stops everything it started.")
    parser.add_argument("--home", default=os.environ.get("DAGSTER_HOME") or ".dagster_home",
                        help="DAGSTER_HOME to prepare and use (default: $DAGSTER_HOME, else ./.dagster_home)")
    parser.add_argument("--definitions", default="definitions.py", help="the Dagster definitions file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument("--no-warm-spark", action="store_true",
                        help="do not start a Spark Connect server: each Spark run starts its own JVM")
    options = parser.parse_args(args)
    home = prepare_dagster_home(Path(options.home).resolve())
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    server = None
    if not (options.no_warm_spark or env.get("HUDI_ASSETS_SPARK_REMOTE")
            or env.get("HUDI_ASSETS_ENGINE", "spark").strip().lower() == "local"):
        from hudi_assets.spark_connect import start_server

        server = start_server(port=0, log=home / "spark-connect" / "server.log")
        env["HUDI_ASSETS_SPARK_REMOTE"] = server.url
        print(f"warm Spark: a Spark Connect server at {server.url}", file=sys.stderr, flush=True)
    print(f"DAGSTER_HOME={home} (one run per table, one Spark run at a time); UI at "
          f"http://{options.host}:{options.port}", file=sys.stderr, flush=True)
    try:
        return run([sys.executable, "-m", "dagster", "dev", "-f", options.definitions, "-h", options.host,
                    "-p", str(options.port)], env)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
