"""`status --json` on a table with a metadata table: its lag and a compaction blocked by a pending
data instant, in the words of `metadata --services`; and what a table version 8 or 9 reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.builders import TableBuilder, ts
from support.calls import record_first_arguments
from support.refdata import table_zips
from support.stalled_metadata import uncleaned_metadata_table

from hudi_assets.archive import ArchiveConfig
from hudi_assets.archive.archiver_v2 import TimelineArchiverV2
from hudi_assets.clean.config import CleanConfig
from hudi_assets.cli import main
from hudi_assets.metadata import MetadataTable
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.history import LSMHistory

MAX_DELTA = ["--hoodie-conf", "hoodie.metadata.compact.max.delta.commits=3"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    return uncleaned_metadata_table(tmp_path_factory.mktemp("mdt"))


def _status(table: Path, capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main(["status", str(table), "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_metadata_compaction_blocked_by_a_pending_data_instant(pristine, tmp_path, capsys):
    table = Path(shutil.copytree(pristine, tmp_path / "t"))
    metadata = MetadataTable(str(table))
    latest = metadata.timeline.filter_completed().filter_actions({"deltacommit"}).last().timestamp
    earlier = metadata.data_timeline.filter_completed().timestamps[-2]
    blocker = f"{earlier[:-3]}999"
    (table / ".hoodie" / f"{blocker}.deltacommit.requested").write_bytes(b"")
    (table / ".hoodie" / f"{blocker}.deltacommit.inflight").write_bytes(b"")

    report = _status(table, capsys, *MAX_DELTA)
    mdt = report["metadata_table"]
    assert mdt["latest_deltacommit"] == latest and mdt["data_instants_behind"] == 0
    assert mdt["deltacommits_since_compaction"] == 3 and mdt["log_files"] > 0
    compaction = mdt["services"]["compaction"]
    assert compaction["due"] is True and compaction["blocked"] is True
    assert compaction["blocked_since"] == blocker
    assert any(f"data-table instant {blocker} (deltacommit) is inflight" in r and "no heartbeat" in r
               and f"`hudi-assets rollback {table} {blocker}` removes it" in r for r in compaction["reasons"])
    assert {"instant": blocker, "action": "deltacommit", "state": "INFLIGHT", "heartbeat": "none"}.items() \
        <= report["pending"][-1].items()


def test_the_metadata_archive_held_back_by_the_data_table(pristine, tmp_path, capsys):
    table = Path(shutil.copytree(pristine, tmp_path / "t"))
    first = MetadataTable(str(table)).data_timeline.filter_completed().timestamps[0]
    pending = f"{first[:-3]}000"
    (table / ".hoodie" / f"{pending}.deltacommit.requested").write_bytes(b"")
    keep = [a for kv in ("hoodie.keep.min.commits=5", "hoodie.keep.max.commits=6",
                         "hoodie.cleaner.commits.retained=4") for a in ("--hoodie-conf", kv)]
    archive = _status(table, capsys, *keep)["metadata_table"]["services"]["archive"]
    assert archive["due"] is True and archive["blocked_since"] == pending
    assert f"the data table's earliest pending instant {pending}: newer instants stay" in archive["reasons"]


def test_a_data_commit_the_metadata_table_has_not_seen(pristine, tmp_path, capsys):
    table = Path(shutil.copytree(pristine, tmp_path / "t"))
    latest = sorted(table.glob(".hoodie/*.deltacommit"))[-1]
    later = latest.name.replace(latest.name[:17], str(int(latest.name[:17]) + 1))
    shutil.copy(latest, table / ".hoodie" / later)
    mdt = _status(table, capsys)["metadata_table"]
    assert mdt["data_instants_behind"] == 1 and mdt["oldest_instant_behind"] == later[:17]


V8_V9 = table_zips(8) + table_zips(9)


@pytest.mark.skipif(not V8_V9, reason="../shared is absent: no table of version 8 or 9")
@pytest.mark.parametrize("name", V8_V9)
def test_versions_8_and_9_report_their_clean_and_archive(real_tables, capsys, name):
    report = _status(real_tables[name], capsys)
    assert report["table"]["table_version"] in (8, 9)
    for service in ("clean", "archive"):
        assert report[service]["due"] in (True, False) and report[service]["reasons"]
    assert report["timeline"]["active_instants"] > 0 or "empty" in name
    assert report["files"]["file_groups"] > 0 or "empty" in name


@pytest.mark.skipif(not table_zips(6), reason="../shared is absent: no Hudi-written table of version 6")
@pytest.mark.parametrize("name", table_zips(6))
def test_hudi_written_version_6_tables(real_tables, capsys, name):
    report = _status(real_tables[name], capsys)
    assert report["clean"]["due"] is not None and report["archive"]["due"] is not None
    assert report["timeline"]["active_instants"] > 0 or "empty" in name
    pending = {i["instant"] for i in report["pending"]}
    assert report["clean"]["pending"] == [] or set(report["clean"]["pending"]) <= pending


def test_status_reads_the_metadata_table_once(pristine, monkeypatch, capsys):
    """The report's lag and its services' status come from one read of the metadata table (the
    clean plan's listing through it is the other)."""
    opened = record_first_arguments(monkeypatch, MetadataTable, "__init__")
    assert _status(pristine, capsys)["metadata_table"]["latest_deltacommit"]
    assert len(opened) == 2


def test_status_reads_the_files_listing_once(pristine, monkeypatch, capsys):
    """The partitions' facts and the clean plan's decisions come from one read of the metadata
    table's files listing: no partition's record is looked up twice."""
    calls = record_first_arguments(monkeypatch, MetadataTable, "listed_in_partitions")
    report = _status(pristine, capsys, "--hoodie-conf", "hoodie.cleaner.commits.retained=1")
    looked_up = [partition for partitions in calls for partition in partitions]
    assert report["clean"]["files_to_delete"] > 0
    assert sorted(looked_up) == sorted(MetadataTable(str(pristine)).files_listing.partitions)


def test_status_counts_the_lsm_history_from_its_footers(tmp_path, monkeypatch, capsys):
    """On layout 2 the archived instants are counted from the history files' parquet footers, no row
    decoded, and the count is the archived timeline's."""
    b = TableBuilder(tmp_path, version=9)
    keep = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3),
                         timeline_compaction_batch_size=2)
    for run in range(4):  # several archivals: files of more than one layer
        for i in range(10):
            b.commit(ts(10 * run + i))
        TimelineArchiverV2(HoodieTable(str(tmp_path)), keep).archive()
    table = HoodieTable(str(tmp_path))
    archived = len(table.timeline_layout.load_archived_instants(table.storage, table.config))
    assert archived > 0
    decoded = []
    read_file = LSMHistory.read_file

    def recording(self, name, *args, **kwargs):
        decoded.append(name)
        return read_file(self, name, *args, **kwargs)

    monkeypatch.setattr(LSMHistory, "read_file", recording)
    assert _status(tmp_path, capsys)["timeline"]["archived_instants"] == archived
    assert decoded == []
