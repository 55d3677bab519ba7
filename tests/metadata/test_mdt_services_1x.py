"""The metadata table's services on Hudi 1.x tables (table versions 8 and 9, issue 25 item 5), on
copies of the Java-written tables: `--run-services` compacts at a fresh instant time (not `<t>001`),
writes the plan, an empty inflight and `<t>_<c>.commit` as Hudi 1.x does, keeps every record of the
merged view and what hudi-rs reads; the clean takes a fresh time too, the archive moves instants into
the metadata table's LSM history; SIGKILL at the compaction's steps leaves the table readable and the
next run completes the same compaction."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.refdata import table_zips, unzip_table

from hudi_assets.avro import deserialize_metadata
from hudi_assets.cli import main
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.clean_records import refuse_unknown_partitions
from hudi_assets.metadata.compaction import (
    compaction_due,
    compaction_plan,
    execute_compaction,
    merged_records,
    schedule_compaction,
)
from hudi_assets.metadata.payloads import partition_files_record
from hudi_assets.metadata.writer import MetadataTableWriter
from hudi_assets.metadata_services import MetadataServices
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, Instant, State
from hudi_assets.timeline.instant_time import (
    format_instant_time,
    new_instant_time,
    now_in_zone,
    parse_instant_time,
)

COMPACT_AT_3 = ["--hoodie-conf", "hoodie.metadata.compact.max.delta.commits=3"]
TABLES = {"v9_mor": "mor__avro__v9_txns_simple_meta", "v8_mor": "mor__avro__v8_trips_8i3u1d"}
# The v8 table has one deltacommit since Java's compaction: it completed after the compaction was
# requested (by completion time it counts, and its log files are in the latest slice).
COMPACT_AT = {"v9_mor": COMPACT_AT_3,
              "v8_mor": ["--hoodie-conf", "hoodie.metadata.compact.max.delta.commits=1"]}


def _zip(suffix: str) -> str:
    name = next((n for n in table_zips(8) + table_zips(9) if n.endswith(suffix)), None)
    if name is None:
        pytest.skip(f"../shared is absent: no table *{suffix}")
    return name


@pytest.fixture(scope="module")
def unzipped(tmp_path_factory):
    root = tmp_path_factory.mktemp("mdt_1x")
    cache: dict[str, Path] = {}

    def get(key: str) -> Path:
        if key not in cache:
            cache[key] = unzip_table(_zip(TABLES[key]), root / key)
        return cache[key]
    return get


def _copy(unzipped, key: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(unzipped(key), tmp_path / "t"))


def _merged_view(base: Path) -> dict[str, dict[str, dict]]:
    """Metadata partition -> key -> record, merged as a reader (and the compactor) merges them."""
    metadata = MetadataTable(str(base))
    view = {}
    for partition in metadata.partitions:
        records: dict[str, dict] = {}
        for file_slice in metadata.file_slices(partition):
            records.update(merged_records(metadata.storage, file_slice, metadata.block_filter)[0])
        view[partition] = {k: {f: v for f, v in r.items() if f != "_hoodie_file_name"}
                           for k, r in records.items()}
    return view


def _rows(base: Path) -> list[str]:
    """The data table's rows as hudi-rs (an independent reader) reads them."""
    hudi = pytest.importorskip("hudi")
    batches = hudi.HudiTableBuilder.from_base_uri(str(base)).build().read()
    return sorted(repr(sorted(r.items())) for batch in batches for r in batch.to_pylist())


def _timeline_files(base: Path) -> list[str]:
    return sorted(p.name for p in (base / ".hoodie/metadata/.hoodie/timeline").iterdir() if p.is_file())


@pytest.mark.parametrize("key", sorted(TABLES))
def test_run_services_compacts_a_1x_metadata_table_at_a_fresh_time(unzipped, tmp_path, capsys, key):
    base = _copy(unzipped, key, tmp_path)
    before_view, rows = _merged_view(base), _rows(base)
    before = MetadataTable(str(base))
    times_before = [*before.timeline.timestamps, *before.timeline.completion_times.values()]
    conf = COMPACT_AT[key]
    assert main(["metadata", str(base), "--services", *conf]) == 0
    assert "compaction: due at " in capsys.readouterr().out

    assert main(["metadata", str(base), "--run-services", "--no-active-writer", *conf]) == 0
    after = MetadataTable(str(base))
    [compaction] = [i for i in after.timeline.filter_actions({COMMIT}) if i.timestamp not in times_before]
    t = compaction.timestamp
    assert len(t) == 17 and t > max(times_before)  # a fresh time, not the latest deltacommit's + 001
    files = _timeline_files(base)
    assert f"{t}.compaction.requested" in files
    assert (base / f".hoodie/metadata/.hoodie/timeline/{t}.compaction.inflight").stat().st_size == 0
    [completed] = [f for f in files if f.startswith(f"{t}_") and f.endswith(".commit")]
    plan = deserialize_metadata((base / f".hoodie/metadata/.hoodie/timeline/{t}.compaction.requested")
                                .read_bytes(), "HoodieCompactionPlan", "plan")
    assert plan["operations"] and plan["extraMetadata"] == {}
    commit = after.timeline.commit_metadata_serde.deserialize(
        after.timeline.read_details(compaction), completed)
    assert commit.operation_type == "COMPACT" and commit.compacted
    written = {s.path for s in commit.write_stats}
    assert written and all(p.endswith(f"_{t}.hfile") and (base / ".hoodie/metadata" / p).exists()
                           for p in written)

    assert after.deltacommits_since(after.latest_compaction()) == []
    assert not after.timeline.filter_pending()
    assert _merged_view(base) == before_view
    assert _rows(base) == rows
    assert main(["metadata", str(base), "--validate"]) == 0, capsys.readouterr()
    assert main(["metadata", str(base), "--run-services", "--no-active-writer", *conf]) == 0
    assert MetadataTable(str(base)).latest_compaction().timestamp == t  # nothing new to compact


def _more_deltacommits(base: Path, count: int) -> None:
    """`count` metadata deltacommits that change nothing (a files record of a partition with no file
    added or deleted), at fresh times, as a writer's do."""
    data = HoodieTable(str(base))
    writer = MetadataTableWriter(data)
    partition = next(iter(MetadataTable(str(base)).files_listing.partitions))
    for _ in range(count):
        timeline = writer.open().reload_timeline()
        instant_time = new_instant_time([*timeline.timestamps, *timeline.completion_times.values()],
                                        data.config.timeline_timezone)
        writer.commit(instant_time, [partition_files_record(partition, {})])


def test_run_services_cleans_and_archives_a_v9_metadata_table(unzipped, tmp_path, capsys):
    base = _copy(unzipped, "v9_mor", tmp_path)
    rows = _rows(base)
    assert main(["metadata", str(base), "--run-services", "--no-active-writer", *COMPACT_AT_3]) == 0
    metadata = MetadataTable(str(base))
    compaction = metadata.latest_compaction()
    compacted = {s.file_id for s in metadata.timeline.commit_metadata_serde.deserialize(
        metadata.timeline.read_details(compaction), "commit").write_stats}
    compaction = compaction.timestamp
    # The logs of the slices the compaction replaced (a slice with no record got no new base file).
    old_logs = {p for p in (base / ".hoodie/metadata").rglob(".*.log.*")
                if p.name[1:].split("_")[0] in compacted}
    _more_deltacommits(base, 24)
    conf = ["--hoodie-conf", "hoodie.metadata.compact.max.delta.commits=100",
            "--hoodie-conf", "hoodie.keep.min.commits=2", "--hoodie-conf", "hoodie.keep.max.commits=3",
            "--hoodie-conf", "hoodie.cleaner.commits.retained=1"]
    capsys.readouterr()
    assert main(["metadata", str(base), "--run-services", "--no-active-writer", *conf]) == 0
    out = capsys.readouterr().out
    mdt = HoodieTable(str(base / ".hoodie/metadata"))
    timeline = mdt.reload_timeline()
    [clean] = timeline.filter_actions({CLEAN}).filter_completed()
    assert len(clean.timestamp) == 17 and clean.timestamp > compaction  # 1.x: a fresh time, not +002
    assert old_logs and not any(p.exists() for p in old_logs)  # the slices before the compaction
    archived = re.search(r"archived (\d+) instants", out)
    assert archived and int(archived.group(1)) > 0, out
    history = base / ".hoodie/metadata/.hoodie/timeline/history"
    assert list(history.glob("*_0.parquet")) and (history / "_version_").exists()
    assert not timeline.filter_actions({DELTA_COMMIT}).filter(lambda i: i.timestamp < "00000000000000005")
    assert main(["metadata", str(base), "--validate"]) == 0, capsys.readouterr()
    assert _rows(base) == rows


COMPACTION_STEPS = ["COMPACTION_REQUESTED", "COMPACTION_INFLIGHT", "COMPACTION_BASE_FILE_WRITTEN:2",
                    "COMPACTION_COMPLETED"]


@pytest.mark.parametrize("step", COMPACTION_STEPS)
def test_kill_9_during_a_v9_metadata_compaction_then_the_next_run_completes_it(unzipped, tmp_path, capsys,
                                                                              step):
    base = _copy(unzipped, "v9_mor", tmp_path)
    view, rows = _merged_view(base), _rows(base)
    times_before = set(MetadataTable(str(base)).timeline.timestamps)
    script = Path(__file__).parents[1] / "support" / "kill_metadata_services.py"
    run = subprocess.run([sys.executable, str(script), str(base), step,
                          "hoodie.metadata.compact.max.delta.commits=3"], capture_output=True, timeout=300)
    assert run.returncode == -9, run.stderr.decode()
    assert main(["metadata", str(base), "--validate"]) == 0, capsys.readouterr()
    assert _rows(base) == rows
    killed = {i.timestamp for i in MetadataTable(str(base)).timeline.filter_actions({COMPACTION, COMMIT})}
    [started] = killed - times_before

    assert main(["metadata", str(base), "--run-services", "--no-active-writer", *COMPACT_AT_3]) == 0
    after = MetadataTable(str(base))
    compactions = {i.timestamp for i in after.timeline.filter_actions({COMPACTION, COMMIT})} - times_before
    assert compactions == {started}  # the same compaction finished, never a second one beside it
    assert after.latest_compaction() == Instant(started, COMMIT, State.COMPLETED)
    assert not after.timeline.filter_pending()
    assert _merged_view(base) == view
    assert _rows(base) == rows
    assert main(["metadata", str(base), "--validate"]) == 0, capsys.readouterr()


def test_a_pending_data_instant_puts_the_1x_compaction_just_before_it(unzipped, tmp_path):
    """Hudi 1.x's `compactIfNecessary`: a data instant pending whose metadata deltacommit completed
    does not block the compaction (as on version 6) but sets its time 1 ms before that instant; the
    plan leaves out its log files (completed after the compaction's time), so they stay in the latest
    slice, still ignored by readers until the data instant completes (or is rolled back)."""
    base = _copy(unzipped, "v9_mor", tmp_path)
    data_timeline = base / ".hoodie/timeline"
    [last] = sorted(data_timeline.glob("*_*.deltacommit"))[-1:]
    pending = last.name.split("_")[0]
    last.unlink()  # the data instant is inflight again; its metadata deltacommit stays completed
    metadata = MetadataTable(str(base))
    assert pending in metadata.timeline.filter_completed().timestamps
    instant_time = compaction_due(metadata, 3)
    assert instant_time == format_instant_time(parse_instant_time(pending) - timedelta(milliseconds=1))
    planned = {name for op in compaction_plan(metadata, instant_time)["operations"]
               for name in op["deltaFilePaths"]}
    assert planned and not [n for n in planned if f"_{pending}.log." in n]
    listing = metadata.files_listing.partitions
    schedule_compaction(metadata, instant_time)
    execute_compaction(MetadataTable(str(base)), instant_time)
    after = MetadataTable(str(base))
    assert after.files_listing.partitions == listing
    kept = [f for p in after.partitions for s in after.file_slices(p) for f in s.log_files
            if s.base_file is not None and s.base_file.instant == instant_time]
    assert any(f.instant == pending for f in kept)
    assert all(after.timeline.completion_times[f.instant] > instant_time for f in kept)


def _instant_ahead(base: Path, minutes: int) -> str:
    """A completed metadata deltacommit renamed to an instant time `minutes` ahead of the clock (a
    writer whose clock runs ahead)."""
    timeline = base / ".hoodie/metadata/.hoodie/timeline"
    last = sorted(timeline.glob("*_*.deltacommit"))[-1]
    ahead = format_instant_time(now_in_zone("UTC") + timedelta(minutes=minutes))
    last.rename(timeline / f"{ahead}_{ahead}.deltacommit")
    return ahead


def test_the_metadata_tables_times_allow_for_the_data_tables_clock_skew(unzipped, tmp_path, capsys):
    """Hudi 1.x's metadata writer makes the metadata table's times with the data write config's time
    generator settings: an instant within the data table's allowed skew ahead of the clock is one the
    fresh compaction time must sort after."""
    base = _copy(unzipped, "v9_mor", tmp_path)
    ahead = _instant_ahead(base, 10)
    wide = ["--hoodie-conf", "hoodie.time.generator.max_expected_clock_skew_ms=3600000"]
    assert main(["metadata", str(base), "--services", *COMPACT_AT_3, *wide]) == 0
    [due] = re.findall(r"compaction: due at (\d+)", capsys.readouterr().out)
    assert due > ahead  # with the default 200 ms, `status` refuses the instant as ahead of the clock

    skewed = HoodieTable(str(base), hoodie_conf={"hoodie.time.generator.max_expected_clock_skew_ms": 0})
    assert skewed.active_timeline.clock_skew_ms == 0  # the data table's completion times wait 0 ms
    assert MetadataTableWriter(skewed).open().reload_timeline().clock_skew_ms == 0  # and the writer's


def test_the_1x_status_names_the_compaction_time_by_the_services_clock(unzipped, tmp_path):
    """The status judges and shows the fresh compaction time as of the service's clock (the one
    its run would compact by), not the wall clock."""
    base = _copy(unzipped, "v9_mor", tmp_path)
    table = HoodieTable(str(base), hoodie_conf={"hoodie.metadata.compact.max.delta.commits": 3})
    later = datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC)
    compaction = MetadataServices(table, clock=lambda: later).status().compaction
    assert compaction.due and compaction.instant == format_instant_time(
        now_in_zone(table.config.timeline_timezone, later))


def test_the_metadata_table_a_clean_or_rollback_writes_through_allows_for_the_data_tables_skew(unzipped,
                                                                                                tmp_path):
    """A clean and a rollback hand the writer the metadata table their refusal checks opened (the 1.x
    rollback sink rolls its deltacommit back through it): that one takes the data table's skew too,
    not the 200 ms default."""
    base = _copy(unzipped, "v9_mor", tmp_path)
    skewed = HoodieTable(str(base), hoodie_conf={"hoodie.time.generator.max_expected_clock_skew_ms": 0})
    opened = refuse_unknown_partitions(skewed, "clean")
    assert opened.reload_timeline().clock_skew_ms == 0
    assert MetadataTableWriter(skewed, metadata_table=opened).open().reload_timeline().clock_skew_ms == 0
