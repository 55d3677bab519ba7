"""The table-version seam: which timeline layout and file-slicing rule a table gets, and that each
layout's names, commit metadata and folders are its own."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from support.builders import ts
from support.refdata import more_table_zips, params_or_skip, table_zips, unzip_table

import hudi_assets
from hudi_assets.avro import serialize_metadata
from hudi_assets.exceptions import CorruptFileError, UnsupportedTableError
from hudi_assets.fsview import BaseInstantSlicing, FileSystemView, data_file_key, file_slicing
from hudi_assets.storage import Storage
from hudi_assets.table_config import TableConfig, load_table_config
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import ACTIONS, Instant, State
from hudi_assets.timeline.layout import LAYOUT_1, LAYOUT_2, load_active_timeline, timeline_layout
from hudi_assets.timeline.layout1 import COMMIT_METADATA_SERDE_V1
from hudi_assets.timeline.layout2 import LayoutTwoTimeline, layout2_file_name, parse_layout2_name
from hudi_assets.timeline.timeline import ActiveTimeline

V6 = {"hoodie.table.name": "t", "hoodie.table.version": "6", "hoodie.timeline.layout.version": "1"}
V9 = {"hoodie.table.name": "t", "hoodie.table.version": "9", "hoodie.timeline.layout.version": "2",
      "hoodie.timeline.path": "timeline", "hoodie.timeline.history.path": "history"}


@pytest.mark.parametrize(("props", "layout"), [
    (V6, LAYOUT_1),
    (V9, LAYOUT_2),
    ({**V9, "hoodie.table.version": "8"}, LAYOUT_2),
    ({"hoodie.table.version": "5", "hoodie.timeline.layout.version": "0"}, LAYOUT_1),  # pre-0.5.1 layout
    ({"hoodie.table.version": "6"}, LAYOUT_1),  # no layout key: the table version's layout
    ({"hoodie.table.version": "8"}, LAYOUT_2),
])
def test_the_factory_picks_the_layout_of_the_table(props, layout):
    assert timeline_layout(TableConfig(props)) is layout


def test_an_unknown_layout_is_refused():
    with pytest.raises(UnsupportedTableError, match="timeline layout version 3"):
        timeline_layout(TableConfig({**V9, "hoodie.timeline.layout.version": "3"}))


def test_each_layout_names_its_own_folders():
    v6 = TableConfig(V6)
    v9 = TableConfig({**V9, "hoodie.timeline.path": "tl", "hoodie.timeline.history.path": "h"})
    assert LAYOUT_1.paths.timeline_path(v6) == ".hoodie"
    assert LAYOUT_1.paths.history_path(v6) == ".hoodie/archived"
    assert LAYOUT_2.paths.timeline_path(v9) == ".hoodie/tl"
    assert LAYOUT_2.paths.history_path(v9) == ".hoodie/tl/h"
    assert LAYOUT_2.paths.history_path(TableConfig({**V9, "hoodie.timeline.history.path": ""})) == \
        ".hoodie/timeline/history"


def _every_v6_instant() -> list[Instant]:
    return [Instant(ts(1), action, state) for action in ACTIONS for state in State
            if not (action in ("compaction", "logcompaction") and state is State.COMPLETED)
            and not (action == "savepoint" and state is State.REQUESTED)]


@pytest.mark.parametrize("instant", _every_v6_instant(), ids=str)
def test_layout_1_names_round_trip(instant):
    name = instant.file_name
    assert Instant.parse_file_name(name) == instant
    assert Instant.parse_file_name(name).file_name == name


@pytest.mark.parametrize(("name", "instant", "completed"), [
    ("100_200.deltacommit", Instant("100", "deltacommit"), "200"),
    ("100_200.commit", Instant("100", "commit"), "200"),  # a commit, or a compaction once completed
    ("100_200.replacecommit", Instant("100", "replacecommit"), "200"),
    ("100_200.clean", Instant("100", "clean"), "200"),
    ("100.inflight", Instant("100", "commit", State.INFLIGHT), None),
    ("100.commit.requested", Instant("100", "commit", State.REQUESTED), None),
    ("100.compaction.requested", Instant("100", "compaction", State.REQUESTED), None),
    ("100.rollback.inflight", Instant("100", "rollback", State.INFLIGHT), None),
    ("100.savepoint.inflight", Instant("100", "savepoint", State.INFLIGHT), None),
])
def test_layout_2_names_round_trip(name, instant, completed):
    assert parse_layout2_name(name) == (instant, completed)
    assert layout2_file_name(instant, completed) == name


def test_a_completed_layout_2_name_needs_its_completion_time():
    compaction = Instant("100", "compaction").with_state(State.COMPLETED)
    assert layout2_file_name(compaction, "150") == "100_150.commit"
    with pytest.raises(ValueError, match="completion time"):
        layout2_file_name(Instant("100", "deltacommit"))


def _timeline_folders(base: Path) -> list[Path]:
    """A table's base path and its metadata table's, where it has one."""
    return [p for p in (base, base / ".hoodie/metadata") if (p / ".hoodie/hoodie.properties").exists()]


@pytest.mark.parametrize("name", params_or_skip(
    table_zips(6) + table_zips(8) + table_zips(9) + more_table_zips(), "real tables"))
def test_every_java_written_state_file_name_regenerates_equal(name, tmp_path):
    """Loaded through the table's own layout, each state file's name comes back from its instant (and
    completion time), a pending clustering's included (LANCE tables: read past the gate's refusal)."""
    for base in _timeline_folders(unzip_table(name, tmp_path)):
        storage = Storage(str(base))
        config = load_table_config(storage)
        layout = timeline_layout(config)
        timeline = layout.load_active_timeline(storage, config)
        assert type(timeline) is layout.active_timeline
        for instant, status in timeline.state_files.items():
            completed = timeline.completion_times.get(instant.timestamp) if instant.is_completed else None
            parsed = parse_layout2_name(status.name) if layout is LAYOUT_2 else \
                (Instant.parse_file_name(status.name), None)
            assert parsed == (instant, completed if layout is LAYOUT_2 else None)
            regenerated = layout2_file_name(instant, completed) if layout is LAYOUT_2 else instant.file_name
            assert regenerated == status.name, (base, status.name)
            assert timeline.state_file_path(instant) == f"{layout.paths.timeline_path(config)}/{status.name}"


def test_commit_metadata_goes_through_the_layouts_serde(builder):
    table = builder().commit(ts(1)).table()
    instant = table.active_timeline.filter_completed().last()
    data = table.active_timeline.read_details(instant)
    assert type(table.active_timeline).commit_metadata_serde is COMMIT_METADATA_SERDE_V1
    parsed = metadata.commit_metadata(table.active_timeline, instant)
    assert LAYOUT_1.active_timeline.commit_metadata_serde.serialize(parsed) == data  # JSON, byte for byte


def test_layout_1_reads_json_commit_metadata_only_and_layout_2_reads_avro():
    avro = serialize_metadata("HoodieCommitMetadata",
                              {"extraMetadata": {"schema": "{}"}, "operationType": "INSERT"})
    read = LAYOUT_2.active_timeline.commit_metadata_serde.deserialize(avro, "100_200.commit")
    assert (read.operation_type, read.schema) == ("INSERT", "{}")
    with pytest.raises(CorruptFileError, match=r"100\.commit"):
        LAYOUT_1.active_timeline.commit_metadata_serde.deserialize(avro, "100.commit")


def test_the_table_resolves_its_layout_once_and_loads_through_it(builder):
    table = builder().commit(ts(1)).table()
    assert table.timeline_layout is LAYOUT_1
    assert type(table.active_timeline) is ActiveTimeline
    assert table.active_timeline.state_files == load_active_timeline(table.storage, table.config).state_files


def test_layout_2_loads_its_own_folder_and_an_absent_history(tmp_path):
    storage = Storage(str(tmp_path))
    for name in ("100.deltacommit.requested", "100.deltacommit.inflight", "100_200.deltacommit",
                 "300.clean.requested"):
        storage.write(f".hoodie/timeline/{name}", b"")
    storage.write(".hoodie/archived/.commits_.archive.1_1-0-1", b"")  # left by an upgrade: normal
    config = TableConfig(V9)
    timeline = load_active_timeline(storage, config)
    assert isinstance(timeline, LayoutTwoTimeline)
    assert [str(i) for i in timeline] == ["[100__deltacommit__COMPLETED]", "[300__clean__REQUESTED]"]
    assert timeline.completion_times == {"100": "200"}
    assert list(LAYOUT_2.load_archived_instants(storage, config)) == []


# ----------------------------------------------------------------------------- file slicing
def test_the_slicing_rule_follows_the_table_version(builder):
    table = builder().commit(ts(1)).table()
    assert file_slicing(table.config, table.active_timeline) == BaseInstantSlicing(".parquet")
    assert FileSystemView(table).slicing == BaseInstantSlicing(".parquet")
    with pytest.raises(UnsupportedTableError, match="table version 7"):
        file_slicing(TableConfig({**V9, "hoodie.table.version": "7"}), table.active_timeline)


def test_base_instant_slicing_keys_names_as_it_groups_them():
    names = ["f1_0-1-1_001.parquet", ".f1_001.log.1_0-1-1", ".f1_001.log.1_0-1-1.crc", "f2_0-1-1_002.parquet",
             ".hoodie_partition_metadata", "f1_0-1-1_003.parquet"]
    slicing = BaseInstantSlicing(".parquet")
    assert slicing.slice_keys(names) == [data_file_key(name, ".parquet") for name in names]
    groups = slicing.file_groups("p", names)
    assert {fid: set(g.slices) for fid, g in groups.items()} == {"f1": {"001", "003"}, "f2": {"002"}}
    # The planner's partition tasks carry the rule to forked workers and Spark executors.
    assert pickle.loads(pickle.dumps(slicing)) == slicing


def test_only_the_seam_knows_the_layouts():
    """Code above the seam asks the table's layout and slicing rule, never which layout it has."""
    package = Path(hudi_assets.__file__).parent
    # The layouts' own modules: ActiveTimeline and the archive-file reader are layout 1's classes.
    seam = {package / "table_config.py", package / "timeline/timeline.py", package / "timeline/archived.py",
            *(package / "timeline").glob("layout*.py")}
    words = ("timeline_layout_version", "timeline.layout1", "timeline.layout2", "LayoutTwoTimeline",
             "LAYOUT_1", "LAYOUT_2")
    found = [(path.relative_to(package), word) for path in sorted(package.rglob("*.py")) if path not in seam
             for word in words if word in path.read_text()]
    assert found == []
