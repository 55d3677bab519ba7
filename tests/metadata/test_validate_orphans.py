"""`metadata --validate` on a merge-on-read table whose crashed append no rollback names (issue 22's
soak): the orphan is named, not taken for drift of the metadata table, before and after the archive
passes its slice's base instant; a committed file the metadata table misses still fails it."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hudi_assets.cli import main
from hudi_assets.demo.generator import _Generator, default_partition_values
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.validate import ORPHAN, Validation, validate
from hudi_assets.ownership import load_ownership
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import MERGE_ON_READ
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import DELTA_COMMIT

# Archive down to the last 2 commits (no data compaction fence, the cleaner retains 1); compact the
# metadata table at once.
ARCHIVE = ["--hoodie-conf", "hoodie.keep.min.commits=2", "--hoodie-conf", "hoodie.keep.max.commits=3",
           "--hoodie-conf", "hoodie.cleaner.commits.retained=1",
           "--hoodie-conf", "hoodie.compact.inline.max.delta.commits=1"]
MDT_COMPACT = ["--hoodie-conf", "hoodie.metadata.compact.max.delta.commits=1"]


def _crashed_append(root: Path, unsynced: bool = False) -> tuple[str, str, list[str]]:
    """A MOR table with a metadata table whose write `failed` died after appending to a slice that
    three later deltacommits appended to as well (the first of them, when `unsynced`, without its
    metadata deltacommit: drift); returns the failed instant, its log file and the later instants."""
    start = datetime(2024, 1, 1, tzinfo=UTC)
    writer = _Generator(
        Storage(str(root)), MERGE_ON_READ, name="orphaned",
        partition_values=default_partition_values(1, start, hive_style=False), partition_field="dt",
        hive_style=False, commits=3, start_time=start, interval=timedelta(minutes=1), seed=5, fast=False,
        files_per_partition=1, records_per_file=4, update_fraction=0.5, bloom_entries=100, savepoint=False,
        insert_overwrite=False, pending_compaction=False, failed_write=True, metadata_table=True)
    demo = writer.run()
    [failed_log] = [p for p in demo.failed_files if ".log." in p]
    [group] = [g for g in writer._live_groups() if g.file_id in failed_log]
    later, metadata_writer = [], writer.metadata
    for index in range(3):
        writer.metadata = None if unsynced and index == 0 else metadata_writer
        commit = writer._begin(DELTA_COMMIT, "UPSERT")
        writer._write_commit(commit, lambda c: writer._plan_updates(c, [group]))
        later.append(commit.ts)
    return demo.failed_instant, failed_log, later


def _archive_past_the_slice(base: Path) -> None:
    """Archive the data table down to its last 2 commits (the metadata table compacted first: its
    latest compaction fences the data table's archive)."""
    assert main(["metadata", str(base), "--compact", "--no-active-writer", *MDT_COMPACT]) == 0
    assert main(["archive", str(base), *ARCHIVE]) == 0


def _validate(capsys, base: Path) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["metadata", str(base), "--validate", "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_crashed_append_no_rollback_names_is_an_orphan_not_drift(tmp_path, capsys):
    base = tmp_path / "t"
    failed, failed_log, _ = _crashed_append(base)
    assert main(["rollback", str(base), failed]) == 0
    # As Hudi 0.15 for a marker naming the base file: the command block went to the slice's latest
    # log file, a later deltacommit's, and the failed write's own file stays, named by no rollback.
    assert (base / failed_log).exists()
    assert failed_log not in load_ownership(HoodieTable(str(base))).owned
    orphan = {"partition": failed_log.rpartition("/")[0], "file": failed_log.rpartition("/")[2]}

    code, report = _validate(capsys, base)
    assert code == 0 and report["differences"] == []
    [found] = report["orphans"]
    assert {k: found[k] for k in orphan} == orphan and found["problem"].startswith(ORPHAN)

    _archive_past_the_slice(base)
    base_instant = failed_log.rpartition("/")[2].split("_")[1].split(".")[0]
    assert MetadataTable(str(base)).data_timeline.is_before_timeline_starts(base_instant)
    code, report = _validate(capsys, base)  # this was drift: "written by completed instant <base>"
    assert code == 0, report
    assert [{k: o[k] for k in orphan} for o in report["orphans"]] == [orphan]

    # Once repair moved it (an hour old: past the minimum age), nothing is left to say.
    hour_ago = time.time() - 3600
    os.utime(base / failed_log, (hour_ago, hour_ago))
    assert main(["repair", "orphans", str(base), "--min-age", "10m"]) == 0
    assert not (base / failed_log).exists()
    assert validate(MetadataTable(str(base))) == Validation([], [])


def test_a_committed_log_file_the_metadata_table_misses_is_drift_after_the_archive(tmp_path, capsys):
    """A deltacommit that completed without its metadata deltacommit: its log file is drift, before
    and after the archive takes the deltacommit (its writer then named from the archived timeline),
    beside the orphan."""
    base = tmp_path / "t"
    failed, failed_log, later = _crashed_append(base, unsynced=True)
    assert main(["rollback", str(base), failed]) == 0
    active = HoodieTable(str(base)).active_timeline
    [missed] = [p for p in metadata.written_paths(active, active.filter_completed().get(later[0])) if p]
    partition, _, name = missed.rpartition("/")
    drift = [{"partition": partition, "file": name,
              "problem": f"written by completed instant {later[0]}, on storage but not listed"}]
    code, report = _validate(capsys, base)
    assert (code, report["differences"]) == (1, drift)

    _archive_past_the_slice(base)
    assert MetadataTable(str(base)).data_timeline.is_before_timeline_starts(later[0])
    code, report = _validate(capsys, base)
    assert (code, report["differences"]) == (1, drift)
    assert [o["file"] for o in report["orphans"]] == [failed_log.rpartition("/")[2]]
