"""Exactness of the instants selected for archival against Hudi 0.15's rules (table-services.md 5)."""

from __future__ import annotations

import pytest
from support.builders import TableBuilder, ts

from hudi_assets.archive import ArchiveConfig, select_instants_to_archive
from hudi_assets.archive.selection_v2 import select_instants_to_archive_v2
from hudi_assets.avro import deserialize_metadata, serialize_metadata
from hudi_assets.clean.config import CleanConfig
from hudi_assets.config import WriteConfig
from hudi_assets.exceptions import CorruptFileError, InvalidConfigError
from hudi_assets.timeline.instant import State
from hudi_assets.timeline.instant_time import parse_instant_time

SMALL = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3))


def _times(instants):
    return [i.timestamp for i in instants]


def _commits(b: TableBuilder, n: int, skip=(), action="commit"):
    for i in range(n):
        if i not in skip:
            b.commit(ts(i), action=action)


def test_commits_and_cleans_by_their_own_min_max(tmp_path):
    b = TableBuilder(tmp_path)
    _commits(b, 40)
    for i in range(12):
        b.clean(ts(100 + i), ts(30))
    for i in range(9):
        b.rollback(ts(200 + i), ts(1))
    sel = select_instants_to_archive(b.table(), SMALL)
    assert _times(sel.commits) == [ts(i) for i in range(35)]
    # 12 cleans > max 8 -> oldest 7; 9 rollbacks > 8 -> oldest 4; rollback group first (HashMap order)
    assert _times(sel.clean_rollback) == [ts(200 + i) for i in range(4)] + [ts(100 + i) for i in range(7)]
    # every state file goes along: requested, inflight, completed
    assert len(sel.state_files) == 3 * (35 + 7 + 4)
    assert [i.state.name for i in sel.state_files[:3]] == ["REQUESTED", "INFLIGHT", "COMPLETED"]


def test_nothing_when_at_most_max(tmp_path):
    b = TableBuilder(tmp_path)
    _commits(b, 8)
    assert not select_instants_to_archive(b.table(), SMALL)


@pytest.mark.parametrize("parsable", [True, False])
def test_min_adjusted_by_cleaner_only_when_latest_commit_parses(tmp_path, parsable):
    """Trap 6: the cleaner-derived min exists only when the newest commit time parses as a date."""
    b = TableBuilder(tmp_path)
    times = [ts(i) for i in range(40)] if parsable else [f"{i + 1:08d}" for i in range(40)]
    for t in times:
        b.commit(t)
    config = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=10))
    sel = select_instants_to_archive(b.table(), config)
    if parsable:
        # ECTR = 31st commit; 9 commits after it + 2 = 11 -> min 11, max 14
        assert (sel.keep.min_commits, sel.keep.max_commits, sel.keep.adjusted) == (11, 14, True)
        assert _times(sel.commits) == times[:29]
    else:
        assert (sel.keep.min_commits, sel.keep.max_commits, sel.keep.adjusted) == (5, 8, False)
        assert _times(sel.commits) == times[:35]


@pytest.mark.parametrize("beyond", [False, True])
def test_savepoint(tmp_path, beyond):
    b = TableBuilder(tmp_path)
    _commits(b, 40)
    b.savepoint(ts(10))
    config = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3),
                           archive_beyond_savepoint=beyond)
    sel = select_instants_to_archive(b.table(), config)
    if beyond:
        assert _times(sel.commits) == [ts(i) for i in range(36) if i != 10]
    else:
        assert _times(sel.commits) == [ts(i) for i in range(10)]
    assert all(i.action != "savepoint" for i in sel.instants)


def test_pending_compaction_and_mor_delta_commits(tmp_path):
    b = TableBuilder(tmp_path, "MERGE_ON_READ")
    _commits(b, 40, action="deltacommit")
    b.compaction(ts(20) + "5")  # between ts(20) and ts(21)
    config = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig())
    sel = select_instants_to_archive(b.table(), config)
    # oldest pending = compaction -> retain from the completed commit before it, ts(20)
    assert _times(sel.commits) == [ts(i) for i in range(20)]


@pytest.mark.parametrize("max_delta, expected", [(10, 30), (40, 10), (0, 35), (-1, 35)])
def test_mor_compaction_fence(tmp_path, max_delta, expected):
    b = TableBuilder(tmp_path, "MERGE_ON_READ")
    _commits(b, 40, skip={10}, action="deltacommit")
    b.compaction(ts(10), state=State.COMPLETED)
    config = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig(commits_retained=3),
                           max_delta_commits=max_delta)
    sel = select_instants_to_archive(b.table(), config)
    assert _times(sel.commits) == [ts(i) for i in range(expected)]
    expanded = [i.file_name for i in sel.state_files if i.timestamp == ts(10)]
    assert expected == 10 or expanded == [
        f"{ts(10)}.compaction.requested", f"{ts(10)}.compaction.inflight", f"{ts(10)}.commit"]


def test_mor_compaction_fence_max_delta_commits_zero_after_the_last_compaction(tmp_path):
    """0 (or less) keeps from the newest delta commit; with none after the last compaction Hudi 0.15
    fails (an empty list's last element), so do we, with the key in the message."""
    b = TableBuilder(tmp_path, "MERGE_ON_READ")
    _commits(b, 39, action="deltacommit")
    b.compaction(ts(39), state=State.COMPLETED)
    config = ArchiveConfig(min_commits=5, max_commits=8, max_delta_commits=0, cleaner=CleanConfig())
    with pytest.raises(InvalidConfigError, match=r"hoodie\.compact\.inline\.max\.delta\.commits=0"):
        select_instants_to_archive(b.table(), config)


def test_pending_clustering_requested(tmp_path):
    b = TableBuilder(tmp_path)
    _commits(b, 40, skip={25})
    b.clustering(ts(25), state=State.REQUESTED)
    sel = select_instants_to_archive(b.table(), SMALL)
    # fences: pending ts(25) -> keep from ts(24); clustering -> first replacecommit ts(25). The pending
    # replacecommit also pins the cleaner's ECTR at ts(24): min = 14 later commits + 2 = 16 -> 39 - 16 = 23
    assert sel.keep.min_commits == 16
    assert _times(sel.commits) == [ts(i) for i in range(23)]


@pytest.mark.parametrize("with_clean", [True, False])
def test_inflight_clustering_and_last_clean_plan(tmp_path, with_clean):
    b = TableBuilder(tmp_path)
    _commits(b, 40, skip={5, 30})
    b.clustering(ts(5), state=State.COMPLETED)
    b.clustering(ts(30), state=State.INFLIGHT)
    if with_clean:
        b.clean(ts(50), ts(8))
    sel = select_instants_to_archive(b.table(), SMALL)
    if with_clean:
        # clean plan retains from ts(8): fence = first replacecommit >= it (ts 30), then the inflight
        # clustering pulls it to ts(29); cleaner-derived min 11 limits to 39 - 11 = 28 instants
        assert sel.keep.min_commits == 11
        assert _times(sel.commits) == [ts(i) for i in range(28)]
    else:
        # no clean: the first replacecommit (completed clustering at ts 5) is the fence
        assert _times(sel.commits) == [ts(i) for i in range(5)]


@pytest.mark.parametrize("version", [6, 9])
def test_an_empty_plan_of_the_last_clean_fails_the_selection_naming_the_file(tmp_path, version):
    """Hudi's archiver decodes the last clean's plan for the clustering fence and fails on an empty
    file; readers that take an empty requested file as no plan must not change that here."""
    b = TableBuilder(tmp_path, version=version)
    _commits(b, 40, skip={5})
    b.clustering(ts(5), state=State.COMPLETED)
    b.clean(ts(50), ts(8))
    b.state_file(f"{ts(50)}.clean.requested", b"")
    select = select_instants_to_archive if version == 6 else select_instants_to_archive_v2
    table = b.table()
    with pytest.raises(CorruptFileError, match=rf"{ts(50)}\.clean\.requested: not an Avro container file"):
        select(table, SMALL, table.active_timeline)


@pytest.mark.parametrize("savepointed", [True, False])
def test_1x_clustering_fence_starts_at_a_deleted_savepoint_the_last_clean_kept(tmp_path, savepointed):
    """ClusteringUtils (1.x): the last clean retained from ts(20) but kept files for savepoint ts(2),
    since deleted, and a clustering completed between them: the fence is that clustering."""
    b = TableBuilder(tmp_path, version=9)
    _commits(b, 40, skip={5})
    b.clustering(ts(5), state=State.COMPLETED)
    b.clean(ts(50), ts(20))
    if savepointed:
        requested = f"{ts(50)}.clean.requested"
        plan = deserialize_metadata((tmp_path / ".hoodie/timeline" / requested).read_bytes(),
                                    "HoodieCleanerPlan", requested)
        plan["extraMetadata"] = {"savepointed_timestamps": ts(2)}
        b.state_file(requested, serialize_metadata("HoodieCleanerPlan", plan))
    table = b.table()
    sel = select_instants_to_archive_v2(table, SMALL, table.active_timeline)
    fence = next(f for f in sel.fences if f.name == "clustering")
    if savepointed:
        assert fence.instant == ts(5) and f"kept files for savepoint {ts(2)}" in fence.reason
    else:
        assert fence.instant is None and f"retains from {ts(20)}" in fence.reason


def test_failed_write(tmp_path):
    b = TableBuilder(tmp_path)
    _commits(b, 40, skip={15})
    b.commit(ts(15), state=State.INFLIGHT)
    sel = select_instants_to_archive(b.table(), SMALL)
    # pending fence keeps from ts(14); the failed write pins the cleaner's ECTR at ts(14) too (trap 1):
    # min = 24 later commits + 2 = 26, so only 39 - 26 = 13 go
    assert sel.fences[1].instant == ts(14) and sel.keep.min_commits == 26
    assert _times(sel.commits) == [ts(i) for i in range(13)]


def test_metadata_table_never_compacted_archives_nothing(tmp_path):
    """Trap 7."""
    b = TableBuilder(tmp_path, props={"hoodie.table.metadata.partitions": "files"})
    _commits(b, 40)
    for i in range(12):
        b.clean(ts(100 + i), ts(30))
    b.metadata_table([], [ts(i) for i in range(40)])
    sel = select_instants_to_archive(b.table(), SMALL)
    assert sel.commits and sel.clean_rollback and not sel.instants and not sel.state_files


def test_metadata_table_fence_at_latest_compaction(tmp_path):
    b = TableBuilder(tmp_path, props={"hoodie.table.metadata.partitions": "files"})
    _commits(b, 40)
    for i in range(12):
        b.clean(ts(100 + i), ts(30))
    b.metadata_table([ts(12) + "001", ts(20) + "001"], [ts(i) for i in range(40)])
    sel = select_instants_to_archive(b.table(), SMALL)
    assert _times(sel.instants) == [ts(i) for i in range(21)]  # ts(20) < ts(20)001: archivable


@pytest.mark.parametrize("version", [6, 9])
def test_a_missing_metadata_table_the_config_lists_archives_nothing(tmp_path, version):
    """0.15 and 1.x share the metadata-table fence up to its latest compaction."""
    b = TableBuilder(tmp_path, version=version, props={"hoodie.table.metadata.partitions": "files"})
    b.archivable()
    select = select_instants_to_archive if version == 6 else select_instants_to_archive_v2
    table = b.table()
    sel = select(table, SMALL, table.active_timeline)
    fence = next(f for f in sel.fences if f.name == "metadata table")
    assert fence.instant == "" and fence.reason == (
        "hoodie.table.metadata.partitions lists 'files' but the metadata table at .hoodie/metadata is "
        "missing: nothing is archived")
    assert not sel.instants and not sel.state_files


@pytest.mark.parametrize("version", [6, 9])
def test_the_metadata_table_fence_takes_a_later_replacecommit_there_as_its_compaction(tmp_path, version):
    """Hudi's latest metadata-table compaction is the last completed commit or replacecommit there
    (0.15 getCommitTimeline, 1.x getCommitAndReplaceTimeline): dropping a metadata partition writes a
    replacecommit on the metadata table, and the fence moves to it."""
    b = TableBuilder(tmp_path, version=version, props={"hoodie.table.metadata.partitions": "files"})
    _commits(b, 40)
    mdt = TableBuilder(tmp_path / ".hoodie/metadata", "MERGE_ON_READ", partitioned=False, version=version,
                       props={"hoodie.table.name": "t_metadata"})
    compacted, dropped = ts(12)[:-5] + "15000", ts(20)[:-5] + "15000"
    mdt.compaction(compacted, state=State.COMPLETED)
    mdt.commit(dropped, {}, operation="DELETE_PARTITION", replaced={"column_stats": ["col-stats-0000"]})
    select = select_instants_to_archive if version == 6 else select_instants_to_archive_v2
    table = b.table()
    sel = select(table, SMALL, table.active_timeline)
    fence = next(f for f in sel.fences if f.name == "metadata table")
    assert fence.instant == (dropped if version == 6 else ts(20))
    assert f"latest metadata-table compaction {dropped}" in fence.reason
    assert _times(sel.instants) == [ts(i) for i in range(20 if version == 9 else 21)]


def test_config_sources_and_validation(tmp_path):
    b = TableBuilder(tmp_path, props={"hoodie.keep.min.commits": "7"})
    props = tmp_path / "p.properties"
    props.write_text("hoodie.keep.max.commits=12\nhoodie.keep.min.commits=8\n")
    config = WriteConfig.load(b.table().config.props, str(props), ["hoodie.keep.min.commits=9"])
    archive = ArchiveConfig.from_write_config(config)
    assert (archive.min_commits, archive.max_commits) == (9, 12)
    with pytest.raises(InvalidConfigError, match=r"Increase hoodie\.keep\.max\.commits=12"):
        ArchiveConfig.from_write_config(WriteConfig.load({}, str(props), ["hoodie.keep.min.commits=12"]))
    hours = ArchiveConfig.from_write_config(WriteConfig.load({}, None, ["hoodie.cleaner.hours.retained=5"]))
    assert hours.cleaner.policy == "KEEP_LATEST_BY_HOURS"


def test_parse_instant_time():
    assert parse_instant_time("20240101000000000") is not None
    assert parse_instant_time("20240101000000") is not None
    assert parse_instant_time("20240101000000000001") is not None
    assert parse_instant_time("00000008") is None
    assert parse_instant_time("1015") is None
    assert parse_instant_time("20241301000000000") is None
