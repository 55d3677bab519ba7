"""Metadata-table services without a data write (issue 22): what blocks them, and a run that
compacts, cleans and archives `.hoodie/metadata` as Hudi 0.15's writer would after a commit."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.stalled_metadata import uncleaned_metadata_table

from hudi_assets.avro import deserialize_metadata
from hudi_assets.cli import main
from hudi_assets.demo import generate_table
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.compaction import merged_records
from hudi_assets.metadata_services.services import MetadataServices
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable

MAX_DELTA = ["--hoodie-conf", "hoodie.metadata.compact.max.delta.commits=3"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """30 data commits: the demo writer compacted its metadata table every 10 deltacommits and never
    cleaned or archived it."""
    return uncleaned_metadata_table(tmp_path_factory.mktemp("mdt"))


@pytest.fixture
def table(pristine, tmp_path) -> Path:
    import shutil

    return Path(shutil.copytree(pristine, tmp_path / "t"))


def _services(table: Path, capsys, *args: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["metadata", str(table), *args, "--json", *MAX_DELTA])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


def _merged(metadata: MetadataTable) -> dict[str, dict]:
    return {p: {k: {**v, "_hoodie_file_name": None} for s in metadata.file_slices(p)
                for k, v in merged_records(metadata.storage, s, metadata.block_filter)[0].items()}
            for p in metadata.partitions}


def test_services_name_the_blocking_inflight_and_run_after_its_rollback(table, capsys):
    metadata = MetadataTable(str(table))
    earlier = metadata.data_timeline.filter_completed().timestamps[-2]
    blocker = f"{earlier[:-3]}999"
    (table / ".hoodie" / f"{blocker}.deltacommit.requested").write_bytes(b"")
    (table / ".hoodie" / f"{blocker}.deltacommit.inflight").write_bytes(b"")

    code, status = _services(table, capsys, "--services")
    assert code == 0
    compaction = status["compaction"]
    assert compaction["due"] is False and status["deltacommits_since_compaction"] == 3
    [found] = compaction["blocked_by"]
    assert (found["instant"], found["action"]) == (blocker, "deltacommit")
    assert f"`hudi-assets rollback {table} {blocker}` removes it" in found["reason"]
    assert "no heartbeat" in found["reason"]
    assert status["clean"]["due"] is True
    assert status["log_files"] == sum(g["log_files"] for g in status["file_groups"]) > 0
    assert status["retention"] == {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS",
                                   "hoodie.cleaner.commits.retained": "20", "hoodie.keep.min.commits": "21",
                                   "hoodie.keep.max.commits": "31"}
    # Who else may be compacting: no lock provider and no --no-active-writer, or a pending data instant.
    assert main(["metadata", str(table), "--run-services", *MAX_DELTA]) == 2
    assert main(["metadata", str(table), "--run-services", "--no-active-writer", *MAX_DELTA]) == 2
    assert "pending" in capsys.readouterr().err

    assert main(["rollback", str(table), blocker]) == 0
    before = MetadataTable(str(table))
    records, listing = _merged(before), before.files_listing.partitions
    files_before = len(list((table / ".hoodie" / "metadata" / "files").iterdir()))
    code, dry = _services(table, capsys, "--run-services", "--dry-run")
    assert code == 0 and dry["dry_run"] and dry["compacted"] == [] and dry["after"] is None
    assert dry["before"]["compaction"]["due"] and not dry["before"]["compaction"]["blocked_by"]
    assert len(list((table / ".hoodie" / "metadata" / "files").iterdir())) == files_before

    code, result = _services(table, capsys, "--run-services", "--no-active-writer")
    assert code == 0
    assert result["compacted"] == [dry["before"]["compaction"]["instant"]]
    assert result["cleaned"] == [dry["before"]["clean"]["instant"]] and result["files_cleaned"] > 0
    assert result["instants_archived"] > 0
    after = result["after"]
    assert after["deltacommits_since_compaction"] == 0 and after["log_files"] == 0
    compacted = MetadataTable(str(table))
    assert compacted.files_listing.partitions == listing and _merged(compacted) == records
    for partition in compacted.partitions:
        assert all(not s.log_files for s in compacted.file_slices(partition))
    assert main(["metadata", str(table), "--validate"]) == 0
    # With the metadata table's retention (KEEP_LATEST_COMMITS, 20 retained, from the data settings'
    # derivation), the slices older than the 20 latest commits are gone.
    assert len(list((table / ".hoodie" / "metadata" / "files").iterdir())) < files_before
    clean = compacted.timeline.filter_actions({"clean"}).last()
    cleaned = deserialize_metadata(compacted.storage.read(compacted.timeline.state_file_path(clean)),
                                   "HoodieCleanMetadata", "clean")
    assert cleaned["totalFilesDeleted"] == result["files_cleaned"]
    assert (table / ".hoodie" / "metadata" / ".hoodie" / "archived").is_dir()


def test_each_service_alone_and_the_api(table, capsys):
    data = HoodieTable(str(table), hoodie_conf={"hoodie.metadata.compact.max.delta.commits": 3})
    outcome = data.maintenance.metadata_services(dry_run=True)
    assert outcome.dry_run and outcome.before.clean.due and outcome.before.compaction.due
    outcome = MetadataServices(data).run(("clean",), no_active_writer=True)
    assert outcome.files_cleaned > 0 and outcome.compacted == [] and outcome.archived == 0
    code, result = _services(table, capsys, "--compact", "--no-active-writer")
    assert code == 0 and len(result["compacted"]) == 1 and result["cleaned"] == [] \
        and result["instants_archived"] == 0
    # Right after a compaction the writer waits 3 instants before cleaning (readers' buffer).
    [held] = result["after"]["clean"]["blocked_by"]
    assert held["instant"] == result["compacted"][0] and "after 3" in held["reason"]
    code, result = _services(table, capsys, "--compact", "--no-active-writer")
    assert result["compacted"] == []  # nothing new since: not due
    code, result = _services(table, capsys, "--archive", "--no-active-writer")
    assert code == 0 and result["instants_archived"] > 0
    assert main(["metadata", str(table), "--validate"]) == 0


def test_a_shared_lock_provider_or_a_quiet_timeline_lets_the_services_run(table, tmp_path, capsys):
    provider = "hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock." \
               "FileSystemBasedLockProvider"
    code, result = _services(table, capsys, "--compact", "--hoodie-conf", provider)
    assert code == 0 and len(result["compacted"]) == 1
    # A write completed minutes ago: --no-active-writer is not believed.
    recent = generate_table(Storage(str(tmp_path / "recent")), "MERGE_ON_READ", commits=4, bloom_entries=100,
                            seed=3, metadata_table=True, pending_compaction=False, failed_write=False,
                            start_time=datetime.now(UTC) - timedelta(minutes=10))
    assert main(["metadata", recent.base_path, "--run-services", "--no-active-writer"]) == 2
    assert "completed in the last hour" in capsys.readouterr().err


def test_the_archive_names_the_data_table_fence_when_it_holds_instants_back(table, capsys):
    """The metadata table's archive stops at the data table's earliest commit or earliest pending
    instant (`getEarliestInstantForMetadataArchival`), named when it holds back instants the keep
    range would archive."""
    keep = ["--hoodie-conf", "hoodie.keep.min.commits=5", "--hoodie-conf", "hoodie.keep.max.commits=6",
            "--hoodie-conf", "hoodie.cleaner.commits.retained=4"]
    first = MetadataTable(str(table)).data_timeline.filter_completed().timestamps[0]
    _, status = _services(table, capsys, "--services", *keep)
    [fence] = status["archive"]["blocked_by"]
    assert fence["instant"] == first and "earliest commit" in fence["reason"]
    assert status["archive"]["detail"].endswith("held back")
    pending = f"{first[:-3]}000"
    (table / ".hoodie" / f"{pending}.deltacommit.requested").write_bytes(b"")
    _, status = _services(table, capsys, "--services", *keep)
    [fence] = status["archive"]["blocked_by"]
    assert fence["instant"] == pending and "earliest pending instant" in fence["reason"]
