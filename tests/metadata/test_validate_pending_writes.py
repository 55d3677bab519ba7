"""`metadata --validate` beside pending writes. On a version-9 merge-on-read demo table whose last
deltacommit is still pending after appending a log file: on Hudi 1.x every deltacommit writes new log
files named by its own instant (completion-time file slicing), so that write explains its own files
and nothing else; the version-6 rule (a pending deltacommit may be appending to any log file of a slice
since its base instant) must not hide an orphan or a grown log file of a completed deltacommit there.
On version 6 that rule stands, for pending deltacommits only: a pending compaction appends nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hudi_assets.cli import main
from hudi_assets.demo import generate_table
from hudi_assets.demo.metadata import max_commits_without_compaction
from hudi_assets.fsview import LogFile
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.validate import ORPHAN
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

SMALL = {"partitions": 2, "files_per_partition": 2, "records_per_file": 3, "bloom_entries": 100, "seed": 5,
         "table_version": 9, "metadata_table": True, "commits": max_commits_without_compaction(),
         "pending_compaction": False, "failed_write": True}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("v9-pending-append")
    return generate_table(Storage(str(root / "t")), "MERGE_ON_READ", **SMALL)


@pytest.fixture
def table(built, tmp_path) -> tuple[Path, str, str]:
    """A copy of the demo table, its pending deltacommit and the log file that write appended."""
    base = tmp_path / "t"
    shutil.copytree(built.base_path, base)
    [appended] = [p for p in built.failed_files if ".log." in p]
    return base, built.failed_instant, appended


def _validate(capsys, base: Path) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["metadata", str(base), "--validate", "--json"])
    return code, json.loads(capsys.readouterr().out)


def _completed_log(base: Path, pending: str) -> tuple[str, str, int]:
    """(partition, name, size) of a listed log file named by an instant before `pending`."""
    listing = MetadataTable(str(base)).files_listing.partitions
    for partition, files in sorted(listing.items()):
        for name, size in sorted(files.items()):
            log = LogFile.parse(name)
            if log is not None and log.base_instant < pending:
                return partition, name, size
    raise AssertionError("the demo table has no listed log file")


def test_the_pending_deltacommit_explains_its_own_log_file(table, capsys):
    base, pending, appended = table
    timeline = HoodieTable(str(base)).active_timeline
    assert (base / appended).exists() and LogFile.parse(appended.rpartition("/")[2]).base_instant == pending
    assert [i.timestamp for i in timeline.filter_pending()] == [pending]
    code, report = _validate(capsys, base)
    assert code == 0 and report["differences"] == [] and report["orphans"] == []


def test_a_grown_log_file_of_a_completed_deltacommit_is_drift(table, capsys):
    """No pending write appends to a file another deltacommit wrote: the size must match."""
    base, pending, _ = table
    partition, name, size = _completed_log(base, pending)
    _grow(base, partition, name)
    code, report = _validate(capsys, base)
    assert code == 1
    assert [(d["file"], d["problem"]) for d in report["differences"]] == [
        (name, f"listed with {size} bytes, {size + 1} on storage")]


def test_an_unlisted_log_file_of_a_completed_deltacommit_is_an_orphan(table, capsys):
    """A log file named by a completed deltacommit its write stats do not list (a retried task's
    leftover) is an orphan even while a later deltacommit is pending."""
    base, pending, _ = table
    partition, name, _ = _completed_log(base, pending)
    log = LogFile.parse(name)
    stray = name.replace(f"_{log.write_token}", "_9-9-9")
    shutil.copyfile(base / partition / name, base / partition / stray)
    code, report = _validate(capsys, base)
    assert code == 0 and report["differences"] == []
    assert [(o["file"], o["problem"].startswith(ORPHAN)) for o in report["orphans"]] == [(stray, True)]


def _grow(base: Path, partition: str, name: str) -> None:
    with open(base / partition / name, "ab") as grown:
        grown.write(b"x")


@pytest.mark.parametrize("pending", ["deltacommit", "compaction"])
def test_version_6_a_pending_deltacommit_may_grow_a_log_file_of_its_slice(tmp_path, capsys, pending):
    """A version-6 log file carries its slice's base instant: a deltacommit pending since then may be
    appending to it, a pending compaction (it writes base files) may not."""
    built = generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", **{
        **SMALL, "table_version": 6, "commits": 6, "failed_write": pending == "deltacommit",
        "pending_compaction": pending == "compaction"})
    base = Path(built.base_path)
    later = built.failed_instant or built.pending_compaction
    partition, name, size = _completed_log(base, later)
    _grow(base, partition, name)
    code, report = _validate(capsys, base)
    if pending == "deltacommit":
        assert code == 0 and report["differences"] == []
    else:
        assert code == 1 and [(d["file"], d["problem"]) for d in report["differences"]] == [
            (name, f"listed with {size} bytes, {size + 1} on storage")]
