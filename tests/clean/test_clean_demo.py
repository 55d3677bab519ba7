"""Acceptance: cleaning demo tables (many commits, inserts, updates, an insert_overwrite, a savepoint,
a failed write and, MOR, a pending compaction) deletes exactly the expected files, and hudi-rs reads
every instant at or after the ECTR and the latest snapshot with the same rows before and after: table
version 6, and version 9 (Hudi 1.1's layout, with and without its metadata table) with retained 1."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa
import pytest
from hudi import HudiReadOptions, HudiTable

from hudi_assets.avro import deserialize_metadata
from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.clean.plan import CleanerPlan
from hudi_assets.cli import main
from hudi_assets.config import WriteConfig
from hudi_assets.demo import generate_table
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import Instant, State
from hudi_assets.timeline.metadata import completed_metadata

ARGS = {"partitions": 3, "commits": 14, "files_per_partition": 2, "records_per_file": 4,
        "update_fraction": 0.4, "bloom_entries": 1000, "seed": 11}
POLICIES = {
    "commits": {"hoodie.cleaner.commits.retained": "4"},
    "hours": {"hoodie.cleaner.hours.retained": "1"},
    "versions": {"hoodie.cleaner.fileversions.retained": "1"},
}
RETAINED_1 = {**POLICIES, "commits": {"hoodie.cleaner.commits.retained": "1"}}
# Table version -> the demo's arguments and the policies' settings (version 9 with a metadata table:
# the demo's 6 commits, under the metadata table's compaction trigger).
VERSIONS = {
    "v6": ({"table_version": 6}, POLICIES),
    "v9": ({"table_version": 9}, RETAINED_1),
    "v9-metadata": ({"table_version": 9, "metadata_table": True, "commits": 6}, RETAINED_1),
}


def _read(table: HudiTable, as_of: str | None = None):
    options = HudiReadOptions() if as_of is None else HudiReadOptions().with_as_of_timestamp(as_of)
    batches = table.read(options)
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return sorted((r["id"], r["_hoodie_commit_time"], r["fare"]) for r in rows)


def _data_files(storage: Storage, partitions) -> set[str]:
    return {f"{p}/{s.name}" for p in partitions if storage.exists(p) for s in storage.list(p)
            if not s.is_dir and s.name != ".hoodie_partition_metadata"}


def _slice_of(name: str, base_instants: list[str], hudi_1x: bool) -> str:
    """The base instant of the slice a file is in: a base file's own; a log file's from its name on
    0.x, on 1.x (named by its deltacommit) the newest base file's written before it."""
    if not name.startswith("."):
        return name.rsplit("_", 1)[1].split(".")[0]
    instant = name[1:].split(".log.")[0].rsplit("_", 1)[1]
    if not hudi_1x:
        return instant
    return max((b for b in base_instants if b < instant), default=instant)


def _expected(demo, files: set[str], policy: str, ectr: str | None, keep: int, hudi_1x: bool) -> set[str]:
    """An independent reading of the rules over the demo's description: which listed files go."""
    replaced = {(p, fid): t for t, by in demo.replaced_file_ids.items()
                for p, ids in by.items() for fid in ids}
    saved = {n for names in demo.savepointed_files.values() for n in names}
    failed = set(demo.failed_files)
    compacted = set(demo.compaction_file_ids)
    by_group: dict[tuple[str, str], list[str]] = {}
    for path in files - failed:
        partition, _, name = path.rpartition("/")
        fid = name[1:].split(".log.")[0].rsplit("_", 1)[0] if name.startswith(".") else name.split("_")[0]
        by_group.setdefault((partition, fid), []).append(path)
    groups: dict[tuple[str, str], dict[str, list[str]]] = {}
    for key, paths in by_group.items():
        names = [p.rpartition("/")[2] for p in paths]
        bases = [_slice_of(n, [], False) for n in names if not n.startswith(".")]
        for path, name in zip(paths, names, strict=True):
            groups.setdefault(key, {}).setdefault(_slice_of(name, bases, hudi_1x), []).append(path)
    doomed: set[str] = set()
    for key, slices in groups.items():
        order = sorted(slices, reverse=True)
        kept_by_savepoint = {b for b in order if any(p.rpartition("/")[2] in saved for p in slices[b])}
        if key in replaced:
            if policy == "versions" or replaced[key] < ectr:
                doomed.update(p for b in order if b not in kept_by_savepoint for p in slices[b])
            continue
        if policy == "versions":
            # Under the demo's pending compaction the latest slice is needed by it and the keep
            # count drops by one: the same `keep` newest slices survive (the empty slice is not listed).
            survivors = order[:max(keep, 1)] if key[1] in compacted else order[:keep]
            doomed.update(p for b in order if b not in survivors and b not in kept_by_savepoint
                          for p in slices[b])
        else:
            before = [b for b in order if b < ectr]
            spare = {order[0], before[0] if before else None} | kept_by_savepoint
            doomed.update(p for b in order if b < ectr and b not in spare for p in slices[b])
    return doomed


@pytest.mark.parametrize("version", list(VERSIONS))
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("policy", list(POLICIES))
def test_clean_demo_table(tmp_path, table_type, policy, version, capsys):
    demo_args, policies = VERSIONS[version]
    demo = generate_table(Storage(str(tmp_path / "t")), table_type, name="t", **{**ARGS, **demo_args})
    table = HoodieTable(demo.base_path)
    hudi_1x = table.config.is_hudi_1x
    conf = dict(policies[policy])
    # BY_HOURS: "now" one hour after the 10th commit (the 5th of 6), so the window holds the last
    # commits only.
    now = None
    if policy == "hours":
        from hudi_assets.timeline.instant_time import parse_instant_time
        tenth = parse_instant_time(demo.completed_commits[min(9, len(demo.completed_commits) - 2)])
        now = tenth.astimezone() + timedelta(hours=1)
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None, conf))
    before_files = _data_files(demo.storage, demo.partitions)
    reader = HudiTable(demo.base_path)
    before = {t: _read(reader, t) for t in demo.completed_commits}
    latest = _read(reader)

    result = Cleaner(table, config, clock=lambda: now).clean()

    assert result.scheduled and list(result.completed) == [result.scheduled]
    plan = result.plan
    ectr = plan.ectr_timestamp
    assert (ectr is None) == (policy == "versions")
    after_files = _data_files(demo.storage, demo.partitions)
    deleted = before_files - after_files
    planned = {demo.storage.relativize(f.file_path) for fs in plan.file_paths_to_delete.values() for f in fs}
    assert deleted == planned and deleted
    assert deleted == _expected(demo, before_files, policy, ectr, 1, hudi_1x)
    # Failed-write files, savepointed files and the latest slices are never touched.
    assert not deleted & set(demo.failed_files)
    saved = {f"{p}/{n}" for p, names in demo.savepointed_files.items() for n in names}
    assert not deleted & saved
    # hudi-rs reads the latest snapshot and every instant at or after ECTR exactly as before.
    reader = HudiTable(demo.base_path)
    assert _read(reader) == latest
    for t in demo.completed_commits:
        if ectr is not None and t >= ectr:
            assert _read(reader, t) == before[t], t
    # The completed clean: metadata v2 with file names, the plan kept in requested and inflight.
    timeline = table.reload_timeline()
    instant = Instant(result.scheduled, "clean")
    meta = completed_metadata(timeline, instant)
    assert meta["version"] == 2 and meta["totalFilesDeleted"] == len(deleted)
    assert meta["earliestCommitToRetain"] == (ectr or "")
    names = {n for pm in meta["partitionMetadata"].values() for n in pm["successDeleteFiles"]}
    assert names == {p.rpartition("/")[2] for p in deleted}
    requested = timeline.read_details(instant.with_state(State.REQUESTED))
    inflight = timeline.read_details(instant.with_state(State.INFLIGHT))
    # The inflight file holds the plan as read (upgraded to v2) in a container of its own, as Hudi
    # 0.x writes it: the same record, another random sync marker; Hudi 1.x writes it empty.
    if hudi_1x:
        assert inflight == b""
    else:
        assert deserialize_metadata(inflight, "HoodieCleanerPlan", "i") == \
            deserialize_metadata(requested, "HoodieCleanerPlan", "r")
    assert CleanerPlan.deserialize(requested, "x").total_files == len(deleted)
    # 0.15 writes an empty map when there is no savepoint, and copies the plan's into the metadata.
    expected = {"savepointed_timestamps": demo.savepoint} if demo.savepoint else {}
    assert meta["extraMetadata"] == plan.extra_metadata == expected
    # A second run right away has nothing to do.
    again = Cleaner(HoodieTable(demo.base_path), config, clock=lambda: now).clean()
    assert again.completed == {}
    if table.config.has_metadata_table:
        assert main(["metadata", demo.base_path, "--validate"]) == 0
        assert "consistent" in capsys.readouterr().out
