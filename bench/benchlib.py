"""Shared pieces of the benches: the generated table, the floors, timing and the plan digest."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def build_table(base: Path, partitions: int, groups: int, commits: int) -> None:
    """A COW table of `partitions` x `groups` file groups with one slice per commit (every upsert
    rewrites every group), written once by the demo generator's fast mode (empty data files, real
    timeline and commit metadata) and reused by later runs."""
    from hudi_assets.demo import generate_table
    from hudi_assets.storage import Storage

    if (base / ".hoodie" / "hoodie.properties").exists():
        return
    print(f"building {partitions} partitions x {groups} groups, {commits} commits in {base} ...", flush=True)
    elapsed, _ = timed(lambda: generate_table(
        Storage(str(base)), "COPY_ON_WRITE", name="bench", partitions=partitions,
        files_per_partition=groups, commits=commits, update_fraction=1.0, fast=True,
        savepoint=False, insert_overwrite=False, failed_write=False))
    print(f"built in {elapsed:.1f} s", flush=True)


def scandir_walk(path: str, stat: bool) -> int:
    """The floor of any listing: one `os.scandir` per directory, a `stat` per file if asked."""
    files = 0
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                files += scandir_walk(entry.path, stat)
            else:
                if stat:
                    entry.stat(follow_symlinks=False)
                files += 1
    return files


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def cpu_timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process and its finished children, result). CPU time is
    what a loaded machine disturbs least: on a shared machine the wall-time ratio swings with the
    other processes, the CPU-time ratio much less."""
    def cpu() -> float:
        mine = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime

    start_cpu, start = cpu(), time.perf_counter()
    result = fn()
    return time.perf_counter() - start, cpu() - start_cpu, result


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def report(name: str, ours: list[float], floor: list[float], target: float, what: str = "wall") -> float:
    mine, base = statistics.median(ours), statistics.median(floor)
    ratio = mine / base
    verdict = "ok" if ratio <= target else "ABOVE TARGET"
    print(f"{name}, {what} time: median {mine:.2f} s vs floor {base:.2f} s = {ratio:.2f}x "
          f"(target <= {target}) {verdict}; {load()}", flush=True)
    return ratio


def interleaved(name: str, target: float, runs: int, floor: tuple[str, Callable[[], Any]],
                ours: tuple[str, Callable[[], Any]]) -> tuple[Any, Any]:
    """Runs the floor and ours alternately `runs` times, printing each run, then the ratio of the
    medians (wall and CPU) against `target`. Returns the last result of each, for the caller's
    checks that both did the same work."""
    (floor_name, floor_fn), (ours_name, ours_fn) = floor, ours
    walls: tuple[list[float], list[float]] = ([], [])
    cpus: tuple[list[float], list[float]] = ([], [])
    results: list[Any] = [None, None]
    for run in range(runs):
        line = []
        for i, (label, fn) in enumerate(((floor_name, floor_fn), (ours_name, ours_fn))):
            wall, cpu, results[i] = cpu_timed(fn)
            walls[i].append(wall)
            cpus[i].append(cpu)
            line.append(f"{label} {wall:.2f} s ({cpu:.2f} s CPU)")
        print(f"run {run + 1}: {', '.join(line)}", flush=True)
    report(name, walls[1], walls[0], target)
    report(name, cpus[1], cpus[0], target, "CPU")
    return results[0], results[1]


def plan_digest(plan: dict[str, Any]) -> str:
    """sha256 of a plan's decisions in their order: policy, ECTR, last completed commit, the file
    names per partition (plan order) and the partitions to delete. Names, not paths: a planned file
    lies directly in its partition, and a digest must not change with where the table was built."""
    canonical = {
        "policy": plan["policy"],
        "ectr": plan["ectr"],
        "last_completed_commit": plan["last_completed_commit"],
        "partitions": [[p["partition"], [f["path"].rpartition("/")[2] for f in p["files"]]]
                       for p in plan["partitions"]],
        "partitions_to_delete": plan["partitions_to_delete"],
    }
    return hashlib.sha256(json.dumps(canonical, separators=(",", ":")).encode()).hexdigest()


def cleaner_plan_digest(plan: Any) -> str:
    """`plan_digest` of a `CleanerPlan` as the library returns it."""
    ectr = plan.earliest_instant_to_retain
    return plan_digest({
        "policy": plan.policy, "ectr": ectr.timestamp if ectr else None,
        "last_completed_commit": plan.last_completed_commit_timestamp,
        "partitions": [{"partition": p, "files": [{"path": f.file_path} for f in files]}
                       for p, files in plan.file_paths_to_delete.items()],
        "partitions_to_delete": plan.partitions_to_delete,
    })
