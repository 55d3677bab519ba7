"""Issue 22's acceptance, through the CLI: a metadata table whose compaction stalled behind a failed
data write (35 deltacommits since its last compaction, 3 superseded file slices per file group due to
be cleaned). `metadata --services` names the blocker; after `rollback` of it, `--run-services
--no-active-writer` compacts, cleans and archives the metadata table; the listing validates, hudi-rs
reads the data table the same, and `.hoodie/metadata/files` holds fewer files."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
from hudi import HudiReadOptions, HudiTable
from support.stalled_metadata import stalled_metadata_table

from hudi_assets.cli import main
from hudi_assets.fsview import data_file_key, file_group_instants
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.compaction import merged_records

# The data table's settings, and the metadata table's retention Hudi 0.15 derives from them
# (HoodieMetadataWriteUtils.createMetadataWriteConfig): KEEP_LATEST_COMMITS with 20 commits retained
# whatever the data table says, keep.min/max one more than the data table's.
DATA_SETTINGS = {"hoodie.cleaner.commits.retained": "10", "hoodie.keep.min.commits": "20",
                 "hoodie.keep.max.commits": "25"}
METADATA_RETENTION = {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS", "hoodie.cleaner.commits.retained": "20",
                      "hoodie.keep.min.commits": "21", "hoodie.keep.max.commits": "26"}
CONF = [arg for key, value in DATA_SETTINGS.items() for arg in ("--hoodie-conf", f"{key}={value}")]


def _cli(capsys, *args: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main([*args, "--json", *CONF])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.startswith("{") else {}


def _read(base: Path, as_of: str | None = None) -> list[dict]:
    options = HudiReadOptions()
    batches = HudiTable(str(base)).read(options if as_of is None else options.with_as_of_timestamp(as_of))
    return sorted(pa.Table.from_batches(batches).to_pylist(), key=lambda r: r["_hoodie_record_key"])


def _slices(base: Path) -> dict[tuple[str, str], set[str]]:
    """(metadata partition, file id) -> the base instants of all its file slices on storage."""
    root = base / ".hoodie" / "metadata"
    return {(p, file_id): instants for p in ("files", "column_stats", "bloom_filters")
            for file_id, instants in file_group_instants(
                data_file_key(f.name, ".hfile") for f in (root / p).iterdir()).items()}


def _merged(metadata: MetadataTable) -> dict[tuple[str, str], dict]:
    """The records of each file group's latest slice, base and logs merged (file names aside)."""
    storage, block_filter = metadata.storage, metadata.block_filter
    return {(p, s.file_id): {k: {**v, "_hoodie_file_name": None}
                             for k, v in merged_records(storage, s, block_filter)[0].items()}
            for p in metadata.partitions for s in metadata.file_slices(p)}


def _files(base: Path, partition: str = "*") -> list[Path]:
    """The files of a metadata partition (all of them with "*"; log files start with a dot)."""
    return [f for f in (base / ".hoodie" / "metadata").glob(f"{partition}/*") if f.parent.name != ".hoodie"]


def test_a_stalled_metadata_table_is_compacted_cleaned_and_archived_after_its_blocker_goes(tmp_path, capsys):
    stalled = stalled_metadata_table(tmp_path / "t", deltacommits_since_compaction=35)
    base, blocker = stalled.base, stalled.blocker
    assert len(stalled.compactions) == 3
    latest_instants = MetadataTable(str(base)).data_timeline.filter_completed().timestamps[-5:]
    rows = {at: _read(base, at) for at in [None, *latest_instants]}

    code, status = _cli(capsys, "metadata", str(base), "--services")
    assert code == 0
    assert status["deltacommits_since_compaction"] == 35
    assert status["latest_compaction"] == stalled.compactions[-1]
    assert status["retention"] == METADATA_RETENTION
    compaction = status["compaction"]
    assert compaction["due"] is False
    [found] = compaction["blocked_by"]
    assert (found["instant"], found["action"]) == (blocker, "deltacommit")
    assert f"`hudi-assets rollback {base} {blocker}` removes it" in found["reason"]
    assert status["clean"]["due"] is True
    assert main(["metadata", str(base), "--run-services", "--no-active-writer", *CONF]) == 2
    assert blocker in capsys.readouterr().err  # refused while the blocker is pending

    assert main(["rollback", str(base), blocker]) == 0
    before = MetadataTable(str(base))
    slices = _slices(base)
    assert max(len(instants) for instants in slices.values()) == 4  # 3 superseded: 3 compactions, no clean
    records, listing = _merged(before), before.files_listing.partitions
    files_before, all_before = _files(base, "files"), _files(base)

    code, result = _cli(capsys, "metadata", str(base), "--run-services", "--no-active-writer")
    assert code == 0, capsys.readouterr().err
    [compacted] = result["compacted"]
    assert len(result["cleaned"]) == 1 and result["instants_archived"] > 0
    after = result["after"]
    assert after["deltacommits_since_compaction"] == 0 and after["log_files"] == 0
    assert after["retention"] == METADATA_RETENTION

    metadata = MetadataTable(str(base))
    latest = {(p, s.file_id): s for p in metadata.partitions for s in metadata.file_slices(p)}
    assert set(latest) == set(records)
    new_base_files = list((base / ".hoodie" / "metadata").glob(f"*/*_{compacted}.hfile"))
    assert len(new_base_files) == len(latest)  # one new base file per file group
    assert all(s.base_file and s.base_file.instant == compacted and not s.log_files for s in latest.values())
    assert _merged(metadata) == records and metadata.files_listing.partitions == listing
    # With 20 commits retained, the earliest commit to retain falls among the 35 deltacommits: the clean
    # kept each file group's latest slice before the run and deleted the superseded ones; the
    # compaction added one.
    assert _slices(base) == {key: {max(instants), compacted} for key, instants in slices.items()}
    assert len(_files(base)) == len(all_before) - result["files_cleaned"] + len(latest)
    assert len(_files(base, "files")) < len(files_before)
    # Archived up to the data table's fence (its earliest commit: it archived nothing itself).
    [fence] = result["before"]["archive"]["blocked_by"]
    assert fence["instant"] == metadata.data_timeline.filter_completed().first().timestamp
    assert metadata.timeline.first().timestamp >= fence["instant"]

    assert main(["metadata", str(base), "--validate"]) == 0
    assert {at: _read(base, at) for at in rows} == rows
