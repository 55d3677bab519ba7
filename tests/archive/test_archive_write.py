"""Writing, deleting, merging, recovery, CLI and crash safety of HoodieTimelineArchiver."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import fastavro
import pytest
from support.builders import TableBuilder, base_file, ts
from support.refdata import shared_path

from hudi_assets.archive import ArchiveConfig, HoodieTimelineArchiver
from hudi_assets.archive.conversion import convert_commit_metadata, to_archived_entry
from hudi_assets.avro import deserialize_metadata, java_schema_json, serialize_metadata
from hudi_assets.avro.binary import Encoded, unencoded
from hudi_assets.clean.config import CleanConfig
from hudi_assets.cli import main
from hudi_assets.logformat.archived import archive_file_of_encoded, encode_archive_file
from hudi_assets.logformat.block import BlockType
from hudi_assets.logformat.reader import read_blocks
from hudi_assets.timeline.archived import MERGE_PLAN_FILE, ArchivedTimeline
from hudi_assets.timeline.instant import Instant, State

SMALL = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3))
CONF = ["--hoodie-conf", "hoodie.keep.min.commits=5", "--hoodie-conf", "hoodie.keep.max.commits=8",
        "--hoodie-conf", "hoodie.cleaner.commits.retained=3"]


def _keys(table):
    active = {i.comparable_key for i in table.reload_timeline()}
    archived = {i.comparable_key for i in ArchivedTimeline.load(table).instants()}
    return active, archived


def test_archive_writes_decodes_and_deletes(tmp_path):
    b = TableBuilder(tmp_path).archivable()
    (tmp_path / ".hoodie/.temp" / ts(0)).mkdir(parents=True)
    table = b.table()
    originals = {(i.timestamp, i.action, i.state): table.active_timeline.read_details(i)
                 for i in table.active_timeline.raw_instants}
    result = HoodieTimelineArchiver(table, SMALL).archive()
    assert result.records_written == 3 * (35 + 7) and result.markers_removed == 1
    assert not (tmp_path / ".hoodie/.temp" / ts(0)).exists()
    active, archived = _keys(table)
    assert sorted(t for t, _ in active if _ == "commit") == [ts(i) for i in range(35, 40)]
    assert len([a for a in active if a[1] == "clean"]) == 5 and len(archived) == 42
    data = (tmp_path / ".hoodie/archived/.commits_.archive.1_1-0-1").read_bytes()
    blocks = list(read_blocks(data))
    assert all(b.block_type == BlockType.AVRO_DATA for b in blocks) and len(blocks) == 13  # 126 / 10
    for entry in ArchivedTimeline.load(table).entries():
        i = entry.instant
        raw = originals[(i.timestamp, i.action, i.state)]
        assert entry.record["version"] is None and len(entry.record["stateTransitionTime"]) == 17
        if i.action == "commit" and i.state.name != "REQUESTED":
            assert entry.payload == unencoded(convert_commit_metadata(json.loads(raw)))
            assert entry.payload["extraMetadata"]["ROLLING_STAT"] == ""
        elif i.action == "commit":  # an empty requested file reads as an empty HoodieCommitMetadata
            assert entry.payload == {"partitionToWriteStats": {}, "extraMetadata": {"ROLLING_STAT": ""},
                                     "version": None, "operationType": "UNKNOWN"}
        elif i.state.name == "COMPLETED":
            assert entry.payload == deserialize_metadata(raw, "HoodieCleanMetadata", "x")
        else:
            assert entry.payload == deserialize_metadata(raw, "HoodieCleanerPlan", "x")
    # a second run has nothing to do and writes no file
    again = HoodieTimelineArchiver(b.table(), SMALL).archive()
    assert again.archive_file is None
    assert len(list((tmp_path / ".hoodie/archived").iterdir())) == 1


def test_entries_decode_with_hudi_schema(tmp_path):
    avro_dir = shared_path("reference", "avro")
    import re

    import fastavro

    texts = [json.loads(re.sub(r"/\*.*?\*/", "", p.read_text(), flags=re.DOTALL))
             for p in sorted(Path(avro_dir).glob("*.avsc"))]
    named: dict = {}
    pending = texts
    for _ in range(len(texts)):  # parse in dependency order
        failed = []
        for text in pending:
            try:
                fastavro.parse_schema(text, named_schemas=named)
            except Exception:
                failed.append(text)
        pending = failed
    schema = fastavro.parse_schema(next(t for t in texts if t["name"] == "HoodieArchivedMetaEntry"),
                                   named_schemas=named)
    b = TableBuilder(tmp_path).archivable()
    b.compaction(ts(3) + "5", state=State.COMPLETED)
    b.rollback(ts(300), ts(1))
    table = b.table()
    HoodieTimelineArchiver(table, SMALL).archive()
    count = 0
    import io
    for block in read_blocks((tmp_path / ".hoodie/archived/.commits_.archive.1_1-0-1").read_bytes()):
        content = io.BytesIO(block.content)
        content.read(4)
        n = int.from_bytes(content.read(4), "big")
        writer = json.loads(block.header[next(k for k in block.header if int(k) == 2)])
        for _ in range(n):
            size = int.from_bytes(content.read(4), "big")
            record = fastavro.schemaless_reader(io.BytesIO(content.read(size)), writer, schema)
            assert record["actionType"] in ("commit", "clean", "compaction")
            count += 1
    assert count > 100


def _archive_files(tmp_path):
    return sorted(p.name for p in (tmp_path / ".hoodie/archived").glob(".commits_.archive*"))


def test_merge_small_archive_files_and_recovery(tmp_path):
    b = TableBuilder(tmp_path)
    # FILE_VERSIONS: no earliest commit to retain, so min/max stay 1/2 and every run archives two.
    config = ArchiveConfig(min_commits=1, max_commits=2, merge_enable=True, merge_files_batch_size=3,
                           cleaner=CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS"))
    b.commit(ts(0))
    seen = []
    for run in range(4):
        b.commit(ts(2 * run + 1))
        b.commit(ts(2 * run + 2))
        HoodieTimelineArchiver(b.table(), config).archive()
        seen.append(_archive_files(tmp_path))
    # The third run's file makes three small files: merged into version 4, candidates deleted.
    assert seen == [[".commits_.archive.1_1-0-1"],
                    [".commits_.archive.1_1-0-1", ".commits_.archive.2_1-0-1"],
                    [".commits_.archive.4_1-0-1"],
                    [".commits_.archive.4_1-0-1", ".commits_.archive.5_1-0-1"]]
    files = seen[-1]
    table = b.table()
    active, archived = _keys(table)
    assert {t for t, _ in archived} == {ts(i) for i in range(8)} and not (active & archived)
    assert [i.timestamp for i in table.active_timeline] == [ts(8)]
    # recovery: a plan whose candidates all exist -> the partial merged file is removed
    storage = table.storage
    cands = [storage.uri(f".hoodie/archived/{f}") for f in files]
    storage.write(".hoodie/archived/.commits_.archive.99_1-0-1", b"#HUDI#garbage")
    storage.write(f".hoodie/archived/{MERGE_PLAN_FILE}", serialize_metadata("HoodieMergeArchiveFilePlan", {
        "version": 1, "candidate": cands, "mergedArchiveFileName": ".commits_.archive.99_1-0-1"}))
    assert len(ArchivedTimeline.load(table).instants()) == 8  # readers tolerate the half-written file
    HoodieTimelineArchiver(b.table(), config).archive()
    assert ".commits_.archive.99_1-0-1" not in _archive_files(tmp_path)
    assert not storage.exists(f".hoodie/archived/{MERGE_PLAN_FILE}")
    # unreadable plan -> deleted
    storage.write(f".hoodie/archived/{MERGE_PLAN_FILE}", b"junk")
    HoodieTimelineArchiver(b.table(), config).archive()
    assert not storage.exists(f".hoodie/archived/{MERGE_PLAN_FILE}")


def test_cli_dry_run_and_exit_codes(tmp_path, capsys):
    TableBuilder(tmp_path).archivable()
    assert main(["archive", str(tmp_path), "--dry-run", *CONF]) == 0
    out = capsys.readouterr().out
    assert "fence oldest pending write" in out and "35 commit instants selected" in out
    assert len(list((tmp_path / ".hoodie").glob("*.commit"))) == 40
    assert main(["archive", str(tmp_path), "--hoodie-conf", "hoodie.keep.max.commits=3"]) == 2
    assert main(["archive", str(tmp_path / "missing")]) == 2
    assert main(["archive", str(tmp_path), *CONF]) == 0
    assert len(list((tmp_path / ".hoodie").glob("*.commit"))) == 5
    assert main(["archive", str(tmp_path), *CONF]) == 0  # nothing to do


def test_an_undeletable_archived_state_file_stops_the_run_naming_it(tmp_path, immutable, capsys):
    """The deletes stop at the first file that stays (exit 1): no later instant is deleted, and the
    next run, once the file can go, completes."""
    TableBuilder(tmp_path).archivable()
    stuck = immutable(tmp_path / ".hoodie" / f"{ts(0)}.commit")
    assert main(["archive", str(tmp_path), *CONF]) == 1
    assert f"{stuck}: " in capsys.readouterr().err
    assert stuck.exists() and (tmp_path / ".hoodie" / f"{ts(1)}.commit").exists()
    subprocess.run(["chattr", "-i", str(stuck)], check=True)
    assert main(["archive", str(tmp_path), *CONF]) == 0
    assert len(list((tmp_path / ".hoodie").glob("*.commit"))) == 5


@pytest.mark.parametrize("step", ["ARCHIVE_BEFORE_WRITE", "ARCHIVE_AFTER_WRITE", "ARCHIVE_DELETING_COMPLETED",
                                  "MERGE_PLAN_WRITTEN", "MERGE_FILE_WRITTEN"])
def test_sigkill_then_next_run_completes(tmp_path, step):
    b = TableBuilder(tmp_path).archivable()
    conf = [*CONF, "--hoodie-conf", "hoodie.archive.merge.enable=true",
            "--hoodie-conf", "hoodie.archive.merge.files.batch.size=2"]
    if step.startswith("MERGE"):  # one earlier archive file, so the run after this one merges two
        b2 = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3))
        HoodieTimelineArchiver(b.table(), b2).archive()
        for i in range(40, 50):
            b.commit(ts(i))
    before_active, before_archived = _keys(b.table())
    everything = before_active | before_archived
    kill = [sys.executable, str(Path(__file__).parents[1] / "support/kill_archive.py"), str(tmp_path), step,
            *(pair for pair in conf if pair != "--hoodie-conf")]
    proc = subprocess.run(kill, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    table = b.table()
    active, archived = _keys(table)
    assert everything <= active | archived, "an instant was lost"
    assert main(["archive", str(tmp_path), *conf]) == 0
    active, archived = _keys(b.table())
    assert everything <= active | archived
    assert len([a for a in active if a[1] == "commit"]) == 5
    assert not (tmp_path / ".hoodie/archived" / MERGE_PLAN_FILE).exists()


def test_five_thousand_commits_archive_to_configured_size(tmp_path):
    b = TableBuilder(tmp_path)
    hoodie = tmp_path / ".hoodie"
    body = (json.dumps({"partitionToWriteStats": {}, "compacted": False, "extraMetadata": {},
                        "operationType": "UPSERT"})).encode()
    for i in range(5000):
        t = f"20240101{i:09d}"
        (hoodie / f"{t}.commit.requested").write_bytes(b"")
        (hoodie / f"{t}.inflight").write_bytes(body)
        (hoodie / f"{t}.commit").write_bytes(body)
    for i in range(200):
        b.clean(f"20240102{i:09d}", "20240101000004990")
    result = HoodieTimelineArchiver(b.table(), ArchiveConfig(cleaner=CleanConfig())).archive()
    active = b.table().reload_timeline()
    assert len(active.completed_commits_timeline(False)) == 20
    assert len(active.clean_timeline()) == 20
    assert result.records_written == 3 * (4980 + 180)


def test_version_1_clean_plans_are_archived_upgraded_to_version_2(tmp_path):
    from hudi_assets.archive.conversion import to_archived_entry

    b = TableBuilder(tmp_path)
    v1 = {"earliestInstantToRetain": {"timestamp": ts(1), "action": "commit", "state": "COMPLETED"},
          "lastCompletedCommitTimestamp": ts(2), "policy": "KEEP_LATEST_COMMITS", "version": 1,
          "filesToBeDeletedPerPartition": {"p1": ["f-0_0-1-1_001.parquet"]}}
    b.state_file(f"{ts(3)}.clean.requested", serialize_metadata("HoodieCleanerPlan", v1))
    table = b.table()
    entry = to_archived_entry(table.active_timeline, Instant(ts(3), "clean", State.REQUESTED))
    plan = entry["hoodieCleanerPlan"]
    assert plan["version"] == 2 and plan["filesToBeDeletedPerPartition"] == {}
    assert [f["filePath"] for f in plan["filePathsToBeDeletedPerPartition"]["p1"]] == [
        f"{table.storage.base_uri}/p1/f-0_0-1-1_001.parquet"]


@pytest.mark.parametrize(("content", "problem"), [
    (b'{"partitionToWriteStats" : {', "not valid commit metadata JSON"),
    (b"\x00garbage", "not valid commit metadata JSON"),
    (b'{"partitionToWriteStats" : ["p1"]}', "commit metadata has an unexpected shape"),
    (b'{"partitionToWriteStats" : {"p1" : [ {"numWrites" : "ten"} ]}}',
     "commit metadata has an unexpected shape"),
    (b"[ ]", "commit metadata must be a JSON object"),
])
def test_corrupt_commit_in_range_exits_2_and_changes_nothing(tmp_path, capsys, content, problem):
    TableBuilder(tmp_path).archivable()
    (tmp_path / ".hoodie" / ".temp" / ts(0)).mkdir(parents=True)
    (tmp_path / ".hoodie" / f"{ts(3)}.commit").write_bytes(content)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main(["archive", str(tmp_path), *CONF]) == 2
    err = capsys.readouterr().err
    assert f"{ts(3)}.commit" in err and problem in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # markers too


def test_completed_files_are_deleted_in_the_selections_order(tmp_path, monkeypatch):
    """0.15 deletes the pending files, then the completed ones one by one in the order it selected
    them: the rollback group, the clean group (HashMap order of the two), then the commits."""
    b = TableBuilder(tmp_path).archivable()
    for i in range(9):
        b.rollback(ts(200 + i), ts(1))
    table = b.table()
    deleted: list[str] = []
    delete_many = table.storage.delete_many

    def recording(paths):
        deleted.extend(p.rpartition("/")[2] for p in paths if not p.startswith(".hoodie/.aux/"))
        return delete_many(paths)

    monkeypatch.setattr(table.storage, "delete_many", recording)
    HoodieTimelineArchiver(table, SMALL).archive()
    completed = [n for n in deleted if not n.endswith((".requested", ".inflight"))]
    assert deleted[len(deleted) - len(completed):] == completed  # every pending file first
    assert completed == ([f"{ts(200 + i)}.rollback" for i in range(4)]
                         + [f"{ts(100 + i)}.clean" for i in range(7)]
                         + [f"{ts(i)}.commit" for i in range(35)])


def test_conversion_of_empty_and_pending_state_files_follows_create_meta_wrapper(tmp_path):
    from hudi_assets.archive.conversion import ArchiveConversionError, to_archived_entry

    b = TableBuilder(tmp_path)
    b.commit(ts(0))  # its requested file is empty
    b.state_file(f"{ts(1)}.commit.requested")
    b.state_file(f"{ts(1)}.commit")  # empty completed file: a crash between create and write
    b.compaction(ts(2), state=State.INFLIGHT)
    b.state_file(f"{ts(3)}.replacecommit.requested")
    b.state_file(f"{ts(3)}.replacecommit.inflight")
    b.state_file(f"{ts(4)}.clean.requested")  # an empty clean plan cannot be read
    timeline = b.table().active_timeline

    def entry(t, action, state):
        return to_archived_entry(timeline, Instant(t, action, state))

    payloads = ("hoodieCommitMetadata", "hoodieCompactionPlan", "hoodieRequestedReplaceMetadata",
                "HoodieInflightReplaceMetadata", "hoodieCleanerPlan")
    assert entry(ts(0), "commit", State.REQUESTED)["hoodieCommitMetadata"] == {
        "partitionToWriteStats": {}, "extraMetadata": {"ROLLING_STAT": ""}, "version": None,
        "operationType": "UNKNOWN"}
    empty_completed = entry(ts(1), "commit", State.COMPLETED)
    assert empty_completed["actionType"] == "commit" and not set(payloads) & set(empty_completed)
    assert entry(ts(2), "compaction", State.REQUESTED)["hoodieCompactionPlan"]["version"] == 2
    inflight_compaction = entry(ts(2), "compaction", State.INFLIGHT)
    assert inflight_compaction["actionType"] == "compaction"
    assert not set(payloads) & set(inflight_compaction)  # only the requested entry holds the plan
    for state in (State.REQUESTED, State.INFLIGHT):
        assert not set(payloads) & set(entry(ts(3), "replacecommit", state))
    with pytest.raises(ArchiveConversionError, match=f"{ts(4)}.clean.requested: empty file"):
        entry(ts(4), "clean", State.REQUESTED)


def test_merge_stops_on_a_corrupt_block_and_keeps_every_source(tmp_path, capsys):
    """Hudi fails the merge on a block it cannot cast to Avro data and keeps the sources; we never
    delete bytes we could not read, remove the plan at once, and say what the run did."""
    from hudi_assets.exceptions import ArchiveMergeError

    b = TableBuilder(tmp_path)
    config = ArchiveConfig(min_commits=1, max_commits=2, merge_enable=True, merge_files_batch_size=3,
                           cleaner=CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS"))
    b.commit(ts(0))
    for run in range(2):
        b.commit(ts(2 * run + 1))
        b.commit(ts(2 * run + 2))
        HoodieTimelineArchiver(b.table(), config).archive()
    archived = tmp_path / ".hoodie/archived"
    first = archived / ".commits_.archive.1_1-0-1"
    torn_at = first.stat().st_size
    first.write_bytes(first.read_bytes() + b"#HUDI#\x00\x00\x00\x00\x00\x00\x01\x00torn")
    b.commit(ts(5))
    b.commit(ts(6))
    with pytest.raises(ArchiveMergeError) as raised:
        HoodieTimelineArchiver(b.table(), config).archive()
    third = b.table().storage.uri(".hoodie/archived/.commits_.archive.3_1-0-1")
    assert str(raised.value) == (
        f"archived 2 instants to {third}, deleted 6 state files; merging stopped: "
        f"{b.table().storage.uri('.hoodie/archived/.commits_.archive.1_1-0-1')} holds a corrupt block at "
        f"offset {torn_at}; sources kept")
    sources = {p.name: p.read_bytes() for p in archived.iterdir()}
    assert sorted(sources) == [".commits_.archive.1_1-0-1", ".commits_.archive.2_1-0-1",
                               ".commits_.archive.3_1-0-1"]  # no merged file, no merge plan
    # The next run has nothing to archive and stops at the same block: exit 1, nothing touched.
    conf = ["--hoodie-conf", "hoodie.keep.min.commits=1", "--hoodie-conf", "hoodie.keep.max.commits=2",
            "--hoodie-conf", "hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS",
            "--hoodie-conf", "hoodie.archive.merge.enable=true",
            "--hoodie-conf", "hoodie.archive.merge.files.batch.size=3"]
    assert main(["archive", str(tmp_path), *conf]) == 1
    assert "nothing archived; merging stopped: " in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in archived.iterdir()} == sources


def test_entries_encoded_one_by_one_make_the_file_encoded_whole(tmp_path):
    """A run of 126 state files, each converted and encoded on its own, writes byte for byte the
    file encoded from all entries at once, and a file that cannot be converted is skipped
    (fail-on-timeline-archiving off) without taking its neighbours with it."""
    table = TableBuilder(tmp_path).archivable().table()
    (tmp_path / ".hoodie" / f"{ts(3)}.commit").write_bytes(b"\x00garbage")
    archiver = HoodieTimelineArchiver(table, replace(SMALL, fail_on_timeline_archiving=False))
    selection = archiver.plan()
    timeline = table.active_timeline
    here = [to_archived_entry(timeline, i) for i in selection.state_files if i.file_name != f"{ts(3)}.commit"]
    expected = encode_archive_file(here, java_schema_json("HoodieArchivedMetaEntry"), SMALL.archival_batch)
    result = archiver.archive(selection=selection)
    assert result.skipped == [f"{ts(3)}.commit"] and result.records_written == len(here) == 125
    assert (tmp_path / ".hoodie/archived/.commits_.archive.1_1-0-1").read_bytes() == expected


def test_commit_json_converts_as_jacksons_round_trip_into_the_avro_classes(tmp_path):
    """What survives of a commit file: the Avro fields only; numbers written as strings become longs,
    absent primitive longs 0, other extra metadata values strings; a null operation type is UNKNOWN,
    a compaction's is COMPACT; a replacecommit keeps its replaced file ids."""
    b = TableBuilder(tmp_path)
    stat = {"fileId": "f1", "path": "p1/f1.parquet", "prevCommit": "null", "numWrites": "12",
            "partitionPath": "p1", "fileSizeInBytes": 7, "cdcStats": None, "runtimeStats": {"x": 1}}
    commit = {"partitionToWriteStats": {"p1": [stat], "p2": None}, "compacted": True,
              "extraMetadata": {"schema": "s", "n": 5, "none": None}, "operationType": None, "other": 1}
    b.state_file(f"{ts(0)}.commit", json.dumps(commit).encode())
    replace = {**commit, "compacted": False, "operationType": "CLUSTER",
               "partitionToReplaceFileIds": {"p1": ["f0"]}}
    b.state_file(f"{ts(1)}.replacecommit", json.dumps(replace).encode())
    timeline = b.table().active_timeline
    converted = to_archived_entry(timeline, Instant(ts(0), "commit"))["hoodieCommitMetadata"]
    written = {"fileId": "f1", "path": "p1/f1.parquet", "prevCommit": "null", "numWrites": 12,
               "numDeletes": 0, "numUpdateWrites": 0, "totalWriteBytes": 0, "totalWriteErrors": 0,
               "partitionPath": "p1", "totalLogRecords": 0, "totalLogFiles": None,
               "totalUpdatedRecordsCompacted": 0, "numInserts": 0, "totalLogBlocks": 0,
               "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": 7}
    assert converted == {"partitionToWriteStats": {"p1": [written], "p2": []}, "version": None,
                         "extraMetadata": {"schema": "s", "n": "5", "none": None, "ROLLING_STAT": ""},
                         "operationType": "COMPACT"}
    replaced = to_archived_entry(timeline, Instant(ts(1), "replacecommit"))["hoodieReplaceCommitMetadata"]
    assert replaced["operationType"] == "CLUSTER" and replaced["partitionToReplaceFileIds"] == {"p1": ["f0"]}
    commit["compacted"] = False
    b.state_file(f"{ts(2)}.commit", json.dumps(commit).encode())
    entry = to_archived_entry(b.table().active_timeline, Instant(ts(2), "commit"))
    assert entry["hoodieCommitMetadata"]["operationType"] == "UNKNOWN"


def test_compaction_plan_copies_in_aux_go_with_their_archived_instants(tmp_path):
    """0.14/0.15's deleteAllInstantsOlderOrEqualsInAuxMetaFolder: the instant files directly under
    `.hoodie/.aux` up to the latest archived commit, of instants no longer active; never a subfolder,
    a lock file, or the copy of an instant still active."""
    b = TableBuilder(tmp_path).archivable()
    aux = tmp_path / ".hoodie/.aux"
    aux.mkdir(parents=True, exist_ok=True)
    archived_copies = [f"{ts(3)}.compaction.requested", f"{ts(7)}.compaction.inflight", f"{ts(2)}.commit"]
    kept = [f"{ts(36)}.compaction.requested",  # its instant stays active
            "lock", f"{ts(4)}.compaction.requested.bak", f"{ts(5)}.unknownaction"]
    for name in archived_copies + kept:
        (aux / name).write_bytes(b"plan")
    for folder in ("hudi-assets/discarded", ".bootstrap"):
        (aux / folder).mkdir(parents=True)
        (aux / folder / f"{ts(1)}.clean.requested").write_bytes(b"copy")
    result = HoodieTimelineArchiver(b.table(), SMALL).archive()
    assert result.aux_removed == len(archived_copies)
    left = sorted(str(p.relative_to(aux)) for p in aux.rglob("*") if p.is_file())
    assert left == sorted([*kept, f"hudi-assets/discarded/{ts(1)}.clean.requested",
                           f".bootstrap/{ts(1)}.clean.requested"])


@pytest.mark.parametrize("aux_copy", [False, True])
def test_an_archive_run_lists_the_timeline_once_before_it_selects(tmp_path, monkeypatch, aux_copy):
    """A run on a table just opened reads `.hoodie/` once to refuse and select (the future-instant
    refusal reads the timeline the selection is made from), and once more only when `.aux` holds
    copies of instants up to the last archived commit, to judge which are still active; the table's
    timeline is read again when next used."""
    table = TableBuilder(tmp_path).archivable().table()
    if aux_copy:
        (tmp_path / ".hoodie/.aux").mkdir(parents=True, exist_ok=True)
        (tmp_path / ".hoodie/.aux" / f"{ts(3)}.compaction.requested").write_bytes(b"")
    listed: list[str] = []
    listing = table.storage.list

    def recording(folder, *args, **kwargs):
        listed.append(folder)
        return listing(folder, *args, **kwargs)

    monkeypatch.setattr(table.storage, "list", recording)
    result = HoodieTimelineArchiver(table, SMALL).archive()
    assert result.records_written > 0 and result.aux_removed == aux_copy
    assert listed.count(".hoodie") == (2 if aux_copy else 1)
    assert set(table.active_timeline.timestamps).isdisjoint(i.timestamp for i in result.selection.instants)


def test_archive_file_of_commits_listing_many_files_is_fastavros(tmp_path):
    """Commits of 20 write stats (their stats encoded column by column; the inflight workload's null
    paths among them) archive to the bytes of an archive file whose entries fastavro encoded from the
    stats converted one by one."""
    b = TableBuilder(tmp_path)
    for i in range(12):
        b.commit(ts(i), {p: [base_file(f"f{n}-{p}", ts(i)) for n in range(10)] for p in ("p1", "p2")})
    table = b.table()
    archiver = HoodieTimelineArchiver(table, SMALL)
    selection = archiver.plan()
    timeline = table.active_timeline
    schema = json.loads(java_schema_json("HoodieArchivedMetaEntry"))
    entries = [to_archived_entry(timeline, i) for i in selection.state_files]
    assert any(type(v) is Encoded for e in entries if e.get("hoodieCommitMetadata")
               for v in e["hoodieCommitMetadata"]["partitionToWriteStats"].values())
    expected = []
    for entry in entries:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, fastavro.parse_schema(schema), unencoded(entry))
        expected.append(out.getvalue())
    result = archiver.archive(merge=False, selection=selection)
    assert result.records_written == len(entries) > 20
    written = (tmp_path / result.archive_file).read_bytes()
    assert written == archive_file_of_encoded(expected, java_schema_json("HoodieArchivedMetaEntry"),
                                              SMALL.archival_batch)
