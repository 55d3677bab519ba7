"""Clean benchmarks on a generated 1,000-partition, 1,000,000-file COW table (100 file groups x 10
slices per partition; commits.retained=2 leaves 700,000 files to delete), each against its floor
measured in the same run, medians of interleaved runs, with the machine's load:

    plan         `hudi-assets clean --dry-run --engine local` (whole process, the package's bytecode
                 cached, its output into a file) vs an `os.scandir` + `stat` walk of the same tree;
                 checks the plan digest of `--dry-run --json` against the library's plan and the
                 recorded one (`EXPECTED_DIGEST`, or `--expect DIGEST`)
    memory       peak RSS of that dry-run process with --json (ru_maxrss of the child) at each of
                 --memory-partitions (default 200, 1,000, 2,000: the tables the other modes use, and
                 2M files, the size of apache/hudi #11248's table)
    incremental  plan after one more commit touching 10 partitions (incremental mode) vs the full
                 plan of the same table, in-process
    delete       `hudi-assets clean --engine local` executing a requested plan (validation included)
                 on a hard-linked copy vs `xargs rm` of the same list plus one listing of the planned
                 partitions; on --delete-partitions (default 200: 140,000 deletes) to stay repeatable
    digest       the plan digest computed by the library only (runs on any version of the code)
    versions     the dry run of the table at version 6 vs the same table written as Hudi 1.1 would
                 (version 9: layout-2 timeline, Avro commit metadata), interleaved; the same plan
                 digest on both (target: version 9 within 1.1x of version 6)

    .venv/bin/python bench/clean_plan_bench.py plan [--runs 3] [--partitions 1000]

Tables are written once by the demo generator's fast mode under bench/out/ and reused.
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from benchlib import (
    build_table,
    cleaner_plan_digest,
    cpu_timed,
    interleaved,
    load,
    plan_digest,
    report,
    scandir_walk,
    timed,
)

ROOT = Path(__file__).resolve().parent
CLI = [sys.executable, "-m", "hudi_assets.cli"]
# The plan digests (`benchlib.plan_digest`) of the tables this bench builds, by partitions: the
# generator's names are fixed by its seed and the digest takes file names, not absolute paths.
EXPECTED_DIGEST = {1000: "5d1867dd6f19d19285b1f310aec79f1a82998c7c855f45d1384f1a483dc1d325",
                   2000: "aef2154a7cc1c7cfdc0addfda05c5e3415520a441c58e3d74681dfa2ad498ab1"}
# Peak RSS of the dry run at 2,000 partitions (2M files; 1.4M planned), issue 29's goal.
PEAK_TARGET_MB = {2000: 700}
RETAINED = ["--hoodie-conf", "hoodie.cleaner.commits.retained=2"]


def table_path(partitions: int) -> Path:
    path = ROOT / "out" / f"clean_table_{partitions}"
    build_table(path, partitions, groups=100, commits=10)
    return path


def v9_table_path(partitions: int) -> Path:
    """The plan table written as Hudi 1.1 would (the same file names, timeline layout 2); built once."""
    from hudi_assets.demo import generate_table
    from hudi_assets.storage import Storage

    path = ROOT / "out" / f"clean_table_{partitions}_v9"
    if not (path / ".hoodie" / "hoodie.properties").exists():
        print(f"building the version 9 copy in {path} ...", flush=True)
        elapsed, _ = timed(lambda: generate_table(
            Storage(str(path)), "COPY_ON_WRITE", name="bench", partitions=partitions, files_per_partition=100,
            commits=10, update_fraction=1.0, fast=True, savepoint=False, insert_overwrite=False,
            failed_write=False, table_version=9))
        print(f"built in {elapsed:.1f} s", flush=True)
    return path


def _config(*overrides: str):
    from hudi_assets.clean.config import CleanConfig
    from hudi_assets.config import WriteConfig
    from hudi_assets.table import HoodieTable

    def make(table: HoodieTable) -> CleanConfig:
        conf = ["hoodie.cleaner.commits.retained=2", *overrides]
        return CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, conf))
    return make


def library_digest(path: Path) -> str:
    """The digest of the plan as the library returns it (no CLI involved)."""
    from hudi_assets.clean.cleaner import Cleaner
    from hudi_assets.engine import LocalEngine
    from hudi_assets.table import HoodieTable

    table = HoodieTable(str(path))
    return cleaner_plan_digest(Cleaner(table, _config()(table), LocalEngine()).plan())


def dry_run(path: Path, *extra: str) -> IO[bytes]:
    """The dry run's output in a temporary file, read after the timing: through a pipe, this process's
    reading of a 115 MB plan counted as the dry run's CPU (0.1-0.2 s)."""
    output = tempfile.TemporaryFile()  # noqa: SIM115 (handed to the caller, which reads it)
    subprocess.run([*CLI, "clean", str(path), "--dry-run", "--engine", "local", *RETAINED, *extra],
                   check=True, stdout=output, stderr=subprocess.DEVNULL)
    output.seek(0)
    return output


def with_bytecode() -> None:
    """The package's bytecode written once, as an installed package has it (installers compile it):
    where PYTHONDONTWRITEBYTECODE is set, every dry run would compile the package (0.14 s CPU)."""
    import hudi_assets

    compileall.compile_dir(Path(hudi_assets.__file__).parent, quiet=1)


def cmd_plan(args: argparse.Namespace) -> None:
    path = table_path(args.partitions)
    with_bytecode()
    scandir_walk(str(path), stat=True)  # warm the page cache before anything is measured
    files, output = interleaved("plan (dry run vs scandir+stat walk)", 1.3, args.runs,
                                ("scandir+stat", lambda: scandir_walk(str(path), stat=True)),
                                ("dry run", lambda: dry_run(path, "--json")))
    print(f"the walk finds {files} files")
    plan = json.load(output)
    digest = plan_digest(plan)
    print(f"plan: {plan['totals']['files']} files in {len(plan['partitions'])} partitions, "
          f"digest {digest}")
    library = library_digest(path)
    assert digest == library, f"--json digest {digest} differs from the library's {library}"
    expected = args.expect or EXPECTED_DIGEST.get(args.partitions)
    if expected:
        assert digest == expected, f"digest {digest} differs from the expected {expected}"
        print("digest matches the expected one")


def peak_rss_mb(path: Path) -> float:
    """Peak RSS of one dry-run child; run in a fresh process so that RUSAGE_CHILDREN is its alone."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
            "stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, *CLI, "clean", str(path), "--dry-run", "--json",
                          "--engine", "local", *RETAINED], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[-1]) / 1024


def cmd_memory(args: argparse.Namespace) -> None:
    sizes = sorted(set(args.memory_partitions))
    paths = {n: table_path(n) for n in sizes}
    runs: dict[int, list[float]] = {n: [] for n in sizes}
    for run in range(args.runs):  # interleaved, as the timings are (the peaks vary by a few MB)
        for n in sizes:
            runs[n].append(peak_rss_mb(paths[n]))
        print(f"run {run + 1}: " + ", ".join(f"{n} partitions {runs[n][-1]:.0f} MB" for n in sizes)
              + f"; {load()}", flush=True)
    peaks = {n: statistics.median(found) for n, found in runs.items()}
    for n, peak in peaks.items():
        target = PEAK_TARGET_MB.get(n)
        verdict = f" (target <= {target} MB: {'met' if peak <= target else 'MISSED'})" if target else ""
        print(f"dry run of {n} partitions ({n * 1000:,} files): peak RSS {peak:.0f} MB (median)"
              f"{verdict}")
    for small, big in itertools.pairwise(sizes):
        growth = (peaks[big] - peaks[small]) / ((big - small) * 1000) * 100_000
        print(f"growth {small} -> {big} partitions: {growth:.1f} MB per 100,000 files")
    print(load())


# ------------------------------------------------------------------------------ incremental
def _add_commit(path: Path, instant: str, partitions: list[str]) -> None:
    """One more completed commit writing a new slice of every file group of `partitions`."""
    from hudi_assets.timeline.commit_metadata import WriteStat

    stats: dict[str, list[dict]] = {}
    for partition in partitions:
        folder = path / partition
        file_ids = sorted({n.partition("_")[0] for n in os.listdir(folder) if n.endswith(".parquet")})
        stats[partition] = []
        for file_id in file_ids:
            name = f"{file_id}_0-1-0_{instant}.parquet"
            (folder / name).write_bytes(b"")
            stat = WriteStat.new(fileId=file_id, path=f"{partition}/{name}", partitionPath=partition)
            stats[partition].append(stat.fields)
    body = json.dumps({"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {},
                       "operationType": "UPSERT"}).encode()
    hoodie = path / ".hoodie"
    (hoodie / f"{instant}.commit.requested").write_bytes(b"")
    (hoodie / f"{instant}.inflight").write_bytes(b"")
    (hoodie / f"{instant}.commit").write_bytes(body)


def _add_completed_clean(path: Path, instant: str, ectr: str) -> None:
    """A completed clean whose metadata records `ectr` (all incremental planning reads of it)."""
    from hudi_assets.clean.plan import CleanerPlan, clean_metadata_record, serialize_clean_metadata
    from hudi_assets.timeline.instant import COMMIT, Instant

    plan = CleanerPlan(Instant(ectr, COMMIT), ectr, "KEEP_LATEST_COMMITS")
    hoodie = path / ".hoodie"
    (hoodie / f"{instant}.clean.requested").write_bytes(plan.serialize())
    (hoodie / f"{instant}.clean.inflight").write_bytes(plan.serialize())
    (hoodie / f"{instant}.clean").write_bytes(serialize_clean_metadata(
        clean_metadata_record(instant, 1, plan, [])))


def incremental_table(partitions: int) -> Path:
    """The plan table plus: commits C11 and C12 touching 10 partitions, a clean after C12 (ECTR C11),
    then C13 touching the same 10: the next incremental plan scans the partitions of [C11, C12)."""
    path = ROOT / "out" / f"incremental_table_{partitions}"
    if not (path / ".hoodie" / "hoodie.properties").exists():
        source = table_path(partitions)
        print(f"copying {source} (hard links) ...", flush=True)
        shutil.rmtree(path, ignore_errors=True)
        subprocess.run(["cp", "-al", str(source), str(path)], check=True)
        shutil.rmtree(path / ".hoodie")
        shutil.copytree(source / ".hoodie", path / ".hoodie")
        touched = sorted(p.parent.relative_to(path).as_posix()
                         for p in path.glob("*/*/*/.hoodie_partition_metadata"))[:10]
        _add_commit(path, "20240102000000000", touched)
        _add_commit(path, "20240102000100000", touched)
        _add_completed_clean(path, "20240102000150000", "20240102000000000")
        _add_commit(path, "20240102000200000", touched)
    return path


def cmd_incremental(args: argparse.Namespace) -> None:
    from hudi_assets.clean.cleaner import Cleaner
    from hudi_assets.engine import LocalEngine
    from hudi_assets.table import HoodieTable

    path = incremental_table(args.partitions)

    def plan(*overrides: str) -> int:
        table = HoodieTable(str(path))
        found = Cleaner(table, _config(*overrides)(table), LocalEngine()).plan()
        return len(found.file_paths_to_delete)

    scandir_walk(str(path), stat=False)
    incremental, full = [], []
    for run in range(args.runs):
        took_inc, parts_inc = timed(plan)
        took_full, parts_full = timed(lambda: plan("hoodie.cleaner.incremental.mode=false"))
        incremental.append(took_inc)
        full.append(took_full)
        print(f"run {run + 1}: incremental {took_inc:.3f} s ({parts_inc} partitions with files), "
              f"full {took_full:.2f} s ({parts_full})", flush=True)
    report("incremental plan vs full plan", incremental, full, 0.05)


# ----------------------------------------------------------------------------------- delete
def _copy(source: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run(["cp", "-al", str(source), str(target)], check=True)
    shutil.rmtree(target / ".hoodie")
    shutil.copytree(source / ".hoodie", target / ".hoodie")


def cmd_delete(args: argparse.Namespace) -> None:
    from hudi_assets.clean.cleaner import Cleaner
    from hudi_assets.engine import LocalEngine
    from hudi_assets.table import HoodieTable

    source = table_path(args.delete_partitions)
    ours, ours_cpu, floors, floors_cpu = [], [], [], []
    work = ROOT / "out" / "delete_work"
    for run in range(args.runs):
        _copy(source, work)
        table = HoodieTable(str(work))
        cleaner = Cleaner(table, _config()(table), LocalEngine())
        plan = cleaner.plan()
        instant = cleaner.request(plan)
        rels = [table.storage.relativize(f.file_path) for files in plan.file_paths_to_delete.values()
                for f in files]
        took, took_cpu, _ = cpu_timed(lambda: subprocess.run(
            [*CLI, "clean", str(work), "--engine", "local", *RETAINED], check=True, capture_output=True))
        assert not any((work / rel).exists() for rel in rels[:1000]), "planned files still exist"
        ours.append(took)
        ours_cpu.append(took_cpu)
        _copy(source, work)
        partitions = list(plan.file_paths_to_delete)
        data = "".join(f"{work}/{rel}\0" for rel in rels).encode()
        listing, listing_cpu, _ = cpu_timed(lambda: [os.listdir(work / p) for p in partitions])  # noqa: B023
        removing, removing_cpu, _ = cpu_timed(lambda: subprocess.run(
            ["xargs", "-0", "rm", "-f"], input=data, check=True))  # noqa: B023
        floors.append(listing + removing)
        floors_cpu.append(listing_cpu + removing_cpu)
        print(f"run {run + 1}: {len(rels)} files of plan {instant} | clean {took:.2f} s ({took_cpu:.2f} s "
              f"CPU), listing {listing:.2f} s + xargs rm {removing:.2f} s ({listing_cpu + removing_cpu:.2f} "
              "s CPU)", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    report(f"delete {len(rels)} files (clean vs rm + listing)", ours, floors, 1.3)
    report(f"delete {len(rels)} files (clean vs rm + listing)", ours_cpu, floors_cpu, 1.3, "CPU")


def cmd_versions(args: argparse.Namespace) -> None:
    paths = {6: table_path(args.partitions), 9: v9_table_path(args.partitions)}
    with_bytecode()
    for path in paths.values():
        scandir_walk(str(path), stat=True)
    v6, v9 = interleaved("plan at table version 9 vs version 6 (dry run)", 1.1, args.runs,
                         ("dry run v6", lambda: dry_run(paths[6], "--json")),
                         ("dry run v9", lambda: dry_run(paths[9], "--json")))
    digests = {version: plan_digest(json.load(out)) for version, out in ((6, v6), (9, v9))}
    assert digests[9] == digests[6], f"version 9 plans {digests[9]}, version 6 {digests[6]}"
    print(f"the same plan on both: digest {digests[6]}")


def cmd_digest(args: argparse.Namespace) -> None:
    print(library_digest(table_path(args.partitions)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("plan", "memory", "incremental", "delete", "digest", "versions",
                                            "all"))
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--delete-partitions", type=int, default=200)
    parser.add_argument("--memory-partitions", type=int, nargs="+", default=[200, 1000, 2000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--expect", help="the expected plan digest (default: the one recorded for "
                        "the table of --partitions)")
    args = parser.parse_args()
    started = time.perf_counter()
    print(load(), flush=True)
    commands = {"plan": cmd_plan, "memory": cmd_memory, "incremental": cmd_incremental,
                "delete": cmd_delete, "digest": cmd_digest, "versions": cmd_versions}
    for name in (commands if args.command == "all" else [args.command]):
        if name != "digest" or args.command == "digest":
            commands[name](args)
    print(f"done in {time.perf_counter() - started:.0f} s; {load()}")


if __name__ == "__main__":
    main()
