"""Savepoint create (issue 28 item 1): what it lists equals hudi-rs's file slices as of the instant,
it decodes with Hudi's own schema, and the refusals come before anything is written; on table
version 6 and on 9 (Hudi 1.x: slices by completion time, the clean's metadata and plan in Avro)."""

from __future__ import annotations

import io
import json
import re

import fastavro
import pytest
from hudi import HudiReadOptions, HudiTableBuilder
from support.refdata import shared_path

from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.demo import generate_table
from hudi_assets.exceptions import HudiInputError
from hudi_assets.savepoint import Savepointer
from hudi_assets.savepoint.files import latest_files_as_of, listing_view
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import SAVEPOINT, Instant, State


@pytest.fixture(params=[6, 9], ids=["v6", "v9"])
def version(request) -> int:
    return request.param


def demo(tmp_path, table_type="COPY_ON_WRITE", version=6, **shape):
    storage = Storage(str(tmp_path / "t"))
    shape = {"partitions": 2, "commits": 8, "seed": 3, "savepoint": False, **shape}
    return generate_table(storage, table_type, table_version=version, **shape)


def hudi_rs_slices(base: str, instant: str) -> dict[str, set[str]]:
    """Partition -> base and log file names of hudi-rs's file slices as of `instant`."""
    table = HudiTableBuilder.from_base_uri(base).build()
    files: dict[str, set[str]] = {}
    for s in table.get_file_slices(HudiReadOptions().with_as_of_timestamp(instant)):
        names = files.setdefault(s.partition_path, set())
        names.update([s.base_file_name] if s.base_file_name else [])
        names.update(s.log_file_names)
    return files


def state_files(storage: Storage) -> list[str]:
    return sorted(s.path for s in storage.list(".hoodie", recursive=True) if not s.is_dir)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_savepoint_lists_the_slices_hudi_rs_reads_as_of_each_commit(tmp_path, table_type, version):
    made = demo(tmp_path, table_type, version)  # MOR: a compaction pending after the last commit
    table = HoodieTable(made.storage)
    service = Savepointer(table)
    for instant in made.completed_commits:
        savepoint = service.create(instant, user="ana", comment=f"as of {instant}")
        written = {p: set(names) for p, names in savepoint.files.items() if names}
        assert written == hudi_rs_slices(made.base_path, instant), instant
    assert table.reload_timeline().filter_actions({SAVEPOINT}).timestamps == made.completed_commits


def test_savepoint_covers_the_one_the_demo_writer_makes(tmp_path):
    """The demo generator knows which deltacommit wrote each log file and lists only those written by
    the savepointed instant; Hudi 0.15 (and so this) cannot tell them apart by name and lists every log
    file of the slice. Base files are the same; ours holds the demo's."""
    made = demo(tmp_path, "MERGE_ON_READ", savepoint=True)
    view = listing_view(HoodieTable(made.storage), None, metadata_enabled=False)
    ours = latest_files_as_of(view, made.savepoint)
    assert ours.keys() == made.savepointed_files.keys()
    for partition, names in made.savepointed_files.items():
        assert set(names) <= set(ours[partition])
        base_files = {n for n in ours[partition] if not n.startswith(".")}
        assert {n for n in names if not n.startswith(".")} == base_files
    assert any(set(ours[p]) - set(made.savepointed_files[p]) for p in ours)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_listing_from_the_metadata_table_equals_the_storage_listing(tmp_path, table_type, version):
    made = demo(tmp_path, table_type, version, commits=6, metadata_table=True, pending_compaction=False,
                failed_write=False)
    table = HoodieTable(made.storage)
    assert table.config.has_metadata_table
    instant = made.completed_commits[-2]
    from_mdt = latest_files_as_of(listing_view(table, None, metadata_enabled=True), instant)
    from_storage = latest_files_as_of(listing_view(table, None, metadata_enabled=False), instant)
    assert from_mdt == from_storage
    assert sum(map(len, from_mdt.values())) > 0


def test_the_savepoint_decodes_with_hudis_schema(tmp_path, version):
    """Hudi 1.x writes the same Avro record as 0.15 (its HoodieSavepointMetadata did not change), into
    `<t>_<completion>.savepoint`."""
    avsc = shared_path("reference", "avro", "HoodieSavePointMetadata.avsc")
    text = re.sub(r"/\*.*?\*/", "", avsc.read_text(), flags=re.DOTALL)
    schema = fastavro.parse_schema(json.loads(text))
    made = demo(tmp_path, version=version)
    instant = made.completed_commits[-1]
    table = HoodieTable(made.storage)
    savepoint = Savepointer(table, clock=lambda: _at(1700000000123)).create(
        instant, user="ana", comment="before the backfill")
    timeline = table.active_timeline
    path = timeline.state_file_path(Instant(instant, SAVEPOINT))
    data = made.storage.read(path)
    [record] = fastavro.reader(io.BytesIO(data), reader_schema=schema)
    assert record["savepointedBy"] == "ana" and record["comments"] == "before the backfill"
    assert record["savepointedAt"] == 1700000000123 and record["version"] == 1
    listed = {p: tuple(m["savepointDataFile"]) for p, m in record["partitionMetadata"].items()}
    assert listed == dict(savepoint.files)
    assert all(p == m["partitionPath"] for p, m in record["partitionMetadata"].items())
    assert made.storage.read(timeline.state_file_path(Instant(instant, SAVEPOINT, State.INFLIGHT))) == b""
    if version == 9:  # named by a completion time taken after every other time of the timeline
        completion = path.rpartition("/")[2].removesuffix(".savepoint").partition("_")[2]
        assert completion > max(*timeline.timestamps, *(t for i, t in timeline.completion_times.items()
                                                          if i != instant))
        assert timeline.completion_times[instant] < completion  # the commit's, not the savepoint's


def _at(epoch_ms: int):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch_ms / 1000, UTC)


def test_latest_commit_by_default(tmp_path, version):
    made = demo(tmp_path, version=version, failed_write=True)
    savepoint = Savepointer(HoodieTable(made.storage)).create()
    assert savepoint.instant == made.completed_commits[-1]
    assert (savepoint.savepointed_by, savepoint.comments) == ("default", "default")


def test_refusals_write_nothing(tmp_path, version):
    made = demo(tmp_path, "MERGE_ON_READ", version, commits=10, failed_write=True)
    table = HoodieTable(made.storage)
    service = Savepointer(table)
    before = state_files(made.storage)
    with pytest.raises(HudiInputError, match="not on the active timeline"):
        service.create("20200101000000000")
    with pytest.raises(HudiInputError, match=r"deltacommit \(inflight\)|deltacommit \(requested\)"):
        service.create(made.failed_instant)
    assert state_files(made.storage) == before
    service.create(made.completed_commits[-1])
    with pytest.raises(HudiInputError, match="savepointed already"):
        service.create(made.completed_commits[-1])


@pytest.mark.parametrize("clean_state", ["completed", "requested"])
def test_refused_before_the_earliest_commit_the_last_clean_retained(tmp_path, version, clean_state):
    """From the last clean's metadata, or a pending clean's plan (on 1.x in its requested file: the
    inflight one is empty)."""
    made = demo(tmp_path, version=version, commits=8, failed_write=False)
    table = HoodieTable(made.storage)
    cleaner = Cleaner(table, CleanConfig(commits_retained=2, max_commits=1))
    if clean_state == "completed":
        assert cleaner.clean().scheduled
    else:
        assert cleaner.request(cleaner.plan()) is not None
    ectr = made.completed_commits[-2]
    before = state_files(made.storage)
    with pytest.raises(HudiInputError, match=f"before {ectr}, the earliest commit to retain"):
        Savepointer(table).create(made.completed_commits[-3])
    assert state_files(made.storage) == before
    assert Savepointer(table).create(ectr).instant == ectr
