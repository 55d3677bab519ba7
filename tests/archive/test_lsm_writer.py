"""LSMTimelineWriter (Hudi 1.x history): layer-0 files, manifests as Jackson prints them, `_version_`,
idempotent rewrites, compaction into higher layers and cleaning of old snapshots."""

from __future__ import annotations

import pytest
from support.refdata import shared_path

from hudi_assets.archive.lsm_writer import (
    LSMTimelineWriter,
    blocking_file,
    compaction_candidates,
    layer_files,
)
from hudi_assets.storage import Storage
from hudi_assets.timeline.history import HistoryFile, LSMHistory, lsm_instant_schema, manifest_text

HISTORY = ".hoodie/timeline/history"
TWO_ENTRIES = """{
  "files" : [ {
    "fileName" : "20240101000000000_20240101000900000_0.parquet",
    "fileLen" : 5124
  }, {
    "fileName" : "20240101001000000_20240101001900000_0.parquet",
    "fileLen" : 5200
  } ]
}"""


def _rows(*times: int) -> list[dict]:
    return [{"instantTime": f"{t:017d}", "completionTime": f"{t + 1:017d}", "action": "commit",
             "metadata": f"meta {t}".encode(), "plan": None, "version": 1} for t in times]


def _file(name: str, length: int) -> HistoryFile:
    return HistoryFile.of(name, length, "test")


def test_manifest_text_is_jacksons_default_pretty_printer_output():
    files = [_file("20240101000000000_20240101000900000_0.parquet", 5124),
             _file("20240101001000000_20240101001900000_0.parquet", 5200)]
    assert manifest_text(files) == TWO_ENTRIES
    assert manifest_text([]) == '{\n  "files" : [ ]\n}'


def test_schema_is_the_avsc_in_its_field_order():
    import json
    import re
    avsc = shared_path("reference", "avro", "1x", "HoodieLSMTimelineInstant.avsc")
    text = re.sub(r"/\*.*?\*/", "", avsc.read_text(), flags=re.S)
    fields = json.loads(text)["fields"]
    assert [f["name"] for f in fields] == lsm_instant_schema().names
    for f, arrow in zip(fields, lsm_instant_schema(), strict=True):
        assert arrow.nullable == isinstance(f["type"], list)


def test_write_adds_a_layer_zero_file_and_a_snapshot(tmp_path):
    storage = Storage(str(tmp_path))
    writer = LSMTimelineWriter(storage, HISTORY, batch_size=10)
    assert writer.write(_rows(1, 2)) == "00000000000000001_00000000000000002_0.parquet"
    assert writer.write(_rows(3)) == "00000000000000003_00000000000000003_0.parquet"
    history = tmp_path / HISTORY
    assert (history / "_version_").read_text() == "2"
    size = (history / "00000000000000001_00000000000000002_0.parquet").stat().st_size
    assert (history / "manifest_1").read_text() == (
        '{\n  "files" : [ {\n    "fileName" : "00000000000000001_00000000000000002_0.parquet",\n'
        f'    "fileLen" : {size}\n  }} ]\n}}')
    rows = LSMHistory(storage, HISTORY).read(columns=lsm_instant_schema().names)
    assert rows.schema == lsm_instant_schema() and rows.to_pylist() == _rows(1, 2, 3)


def test_an_existing_layer_zero_file_is_kept_when_listed_and_rewritten_when_not(tmp_path):
    storage = Storage(str(tmp_path))
    writer = LSMTimelineWriter(storage, HISTORY, batch_size=10)
    writer.write(_rows(1, 2))
    assert writer.write(_rows(1, 2)) is None  # committed by a run that then crashed
    assert LSMHistory(storage, HISTORY).latest_version() == 1
    name = "00000000000000005_00000000000000006_0.parquet"
    storage.write(f"{HISTORY}/{name}", b"half a file")  # a crash before the manifest
    assert writer.write(_rows(5, 6)) == name
    assert LSMHistory(storage, HISTORY).read().column("instantTime").to_pylist() == \
        [f"{t:017d}" for t in (1, 2, 5, 6)]


def test_a_stale_manifest_of_the_next_version_is_written_again(tmp_path):
    storage = Storage(str(tmp_path))
    writer = LSMTimelineWriter(storage, HISTORY, batch_size=10)
    writer.write(_rows(1))
    storage.write(f"{HISTORY}/manifest_2", b"{ a crashed run's")  # `_version_` still says 1
    writer.write(_rows(2))
    assert LSMHistory(storage, HISTORY).latest_version() == 2
    assert len(LSMHistory(storage, HISTORY).read()) == 2


def test_candidates_stop_at_the_batch_and_after_the_target_size():
    files = [_file(f"{i}_{i}_0.parquet", size) for i, size in enumerate([4, 4, 4, 4], 1)]
    assert [f.name for f in compaction_candidates(files, 3, target_bytes=100)] == \
        ["1_1_0.parquet", "2_2_0.parquet", "3_3_0.parquet"]
    assert len(compaction_candidates(files, 4, target_bytes=7)) == 2  # 8 > 7: no third file
    big = [_file("1_1_0.parquet", 50), *files[1:]]
    assert compaction_candidates(big, 4, target_bytes=10) == big[:1]
    assert blocking_file(big, 4, target_bytes=10) == big[0]
    assert blocking_file(files, 4, target_bytes=10) is None
    assert blocking_file(big[:3], 4, target_bytes=10) is None  # not due yet


def test_compaction_reaches_layer_two_and_cleaning_keeps_the_newest_snapshots(tmp_path):
    storage = Storage(str(tmp_path))
    writer = LSMTimelineWriter(storage, HISTORY, batch_size=2)
    history = LSMHistory(storage, HISTORY)
    replaced_rows: dict[str, list[dict]] = {}
    for n in range(4):
        writer.write(_rows(2 * n, 2 * n + 1))
        before = {f.name: history.read_file(f.name).to_pylist() for f in history.files()}
        done = writer.compact_and_clean()
        for name, sources in done.merged.items():
            replaced_rows[name] = [r for s in sources for r in before.get(s) or replaced_rows[s]]
            assert history.read_file(name).to_pylist() == replaced_rows[name]
    files = history.files()
    assert [f.name for f in files] == ["00000000000000000_00000000000000007_2.parquet"]
    assert history.read(columns=lsm_instant_schema().names).to_pylist() == _rows(*range(8))
    names = sorted(p.name for p in (tmp_path / HISTORY).iterdir())
    versions = history.snapshot_versions()
    assert len(versions) <= 3 + 2 and versions[-1] == history.latest_version()
    kept = {f.name for v in versions for f in history.manifest(v)}
    assert {n for n in names if n.endswith(".parquet")} == kept
    for version in versions:
        listed = history.manifest(version)
        assert (tmp_path / HISTORY / f"manifest_{version}").read_text() == manifest_text(listed)


def test_a_file_bigger_than_the_target_blocks_its_layer(tmp_path, caplog):
    storage = Storage(str(tmp_path))
    writer = LSMTimelineWriter(storage, HISTORY, batch_size=2, target_bytes=10)
    writer.write(_rows(1))
    writer.write(_rows(2))
    assert writer.compact_and_clean().merged == {}
    assert "00000000000000001_00000000000000001_0.parquet is bigger" in caplog.text
    assert len(layer_files(LSMHistory(storage, HISTORY).files(), 0)) == 2


def test_the_reader_follows_a_snapshot_whose_files_were_compacted_away(tmp_path):
    """A reader that took version 1 before a compaction and a clean removed its file reads the
    newer snapshot instead; with no newer snapshot the missing file is an error."""
    storage = Storage(str(tmp_path))
    writer = LSMTimelineWriter(storage, HISTORY, batch_size=2)
    writer.write(_rows(1))
    writer.write(_rows(2))
    assert list(writer.compact_and_clean().merged) == ["00000000000000001_00000000000000002_1.parquet"]
    storage.delete_many([f"{HISTORY}/{f.name}" for f in LSMHistory(storage, HISTORY).manifest(2)])

    answers = [1]

    class Racing(LSMHistory):
        def latest_version(self):
            return answers.pop() if answers else super().latest_version()

    assert Racing(storage, HISTORY).read().column("instantTime").to_pylist() == \
        ["00000000000000001", "00000000000000002"]
    storage.write(f"{HISTORY}/_version_", b"2")
    with pytest.raises(FileNotFoundError):
        LSMHistory(storage, HISTORY).read()
