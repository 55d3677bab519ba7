"""Start-up: `import hudi_assets`, `hudi-assets --help` and a clean's dry run of a 10-file table with
the default engine, each a whole process, against `python -c pass` (the interpreter's own start) in
the same rounds. Medians of interleaved runs, wall and CPU (user + system of the child), the load.

    .venv/bin/python bench/startup_bench.py [--runs 15]

Runs with bytecode (`PYTHONDONTWRITEBYTECODE` removed from the children's environment, one warm-up
run each first), as an installed package starts. Targets: the import <= 20 ms and `--help` <= 0.15 s
above the floor, the dry run <= 0.3 s in all.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchlib import build_table, load

ROOT = Path(__file__).resolve().parent
SCRIPT = str(Path(sys.executable).with_name("hudi-assets"))


def variants(table: Path) -> dict[str, list[str]]:
    return {
        "python -c pass (floor)": [sys.executable, "-c", "pass"],
        "import hudi_assets": [sys.executable, "-c", "import hudi_assets"],
        "hudi-assets --help": [SCRIPT, "--help"],
        "clean --dry-run, 10 files, default engine": [
            SCRIPT, "clean", str(table), "--dry-run", "--hoodie-conf", "hoodie.cleaner.commits.retained=1"],
    }


def run_once(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr.decode()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    table = ROOT / "out" / "startup_table_10"
    build_table(table, partitions=1, groups=5, commits=2)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "SPARK_REMOTE")}
    commands = variants(table)
    for command in commands.values():  # the warm-up writes the bytecode
        run_once(command, env)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    names = list(commands)
    for n in range(args.runs):
        for name in names[n % len(names):] + names[:n % len(names)]:  # rotate who runs first
            times[name].append(run_once(commands[name], env))
    floor_wall = statistics.median(w for w, _ in times[names[0]])
    floor_cpu = statistics.median(c for _, c in times[names[0]])
    print(f"medians of {args.runs} interleaved runs; {load()}")
    for name, runs in times.items():
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        print(f"{name:45s} wall {wall * 1000:7.1f} ms ({(wall - floor_wall) * 1000:+7.1f} ms, "
              f"{wall / floor_wall:5.2f}x floor)  "
              f"CPU {cpu * 1000:7.1f} ms ({(cpu - floor_cpu) * 1000:+7.1f} ms)")


if __name__ == "__main__":
    main()
