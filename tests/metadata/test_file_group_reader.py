"""The metadata-table file-group reader on files written here in Hudi's formats: an HFile base file and
a log of HFILE_DATA, DELETE, rollback COMMAND and torn blocks, merged as HoodieMetadataPayload does."""

from __future__ import annotations

import io
import json
import struct

import pytest
from fastavro import parse_schema, schemaless_writer

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.hfile import write_hfile
from hudi_assets.logformat import BlockType, HeaderKey, LogBlock, encode_block, rollback_command_block
from hudi_assets.logformat.delete_block import decode_delete_block
from hudi_assets.metadata.file_group import BlockFilter, latest_file_slices, read_files_records
from hudi_assets.metadata.lookup import FilesPartitionLookup
from hudi_assets.metadata.records import FileInfo, FilesRecord, combine
from hudi_assets.storage import Storage

SCHEMA = json.dumps({
    "type": "record", "name": "HoodieMetadataRecord", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "key", "type": "string"},
        {"name": "type", "type": "int"},
        {"name": "filesystemMetadata", "type": ["null", {"type": "map", "values": {
            "type": "record", "name": "HoodieMetadataFileInfo",
            "fields": [{"name": "size", "type": "long"}, {"name": "isDeleted", "type": "boolean"}]}}]},
    ]})
FILE_ID = "files-0000-0"
BASE = "00000000000000010"


def _hfile(records: dict[str, dict[str, tuple[int, bool]]], kind: int = 2) -> bytes:
    schema = parse_schema(json.loads(SCHEMA))
    entries = []
    for key in sorted(records):
        buffer = io.BytesIO()
        files = {n: {"size": s, "isDeleted": d} for n, (s, d) in records[key].items()}
        schemaless_writer(buffer, schema, {"key": "", "type": kind, "filesystemMetadata": files})
        entries.append((key.encode(), buffer.getvalue()))
    return write_hfile(entries, file_info={b"schema": SCHEMA.encode()})


def _data_block(instant: str, records: dict[str, dict[str, tuple[int, bool]]]) -> bytes:
    header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: SCHEMA}
    return encode_block(LogBlock(BlockType.HFILE_DATA, header, _hfile(records)))


def _delete_block(instant: str, keys: list[str]) -> bytes:
    body = bytearray(bytes([len(keys) * 2]) if keys else b"")  # zig-zag count of the one array block
    for key in keys:  # recordKey (union branch 1), partitionPath "files", orderingVal IntWrapper 0
        body += b"\x02" + bytes([len(key) * 2]) + key.encode() + b"\x02\x0afiles" + b"\x04\x00"
    body += b"\x00"
    content = struct.pack(">ii", 3, len(body)) + bytes(body)
    return encode_block(LogBlock(BlockType.DELETE, {HeaderKey.INSTANT_TIME: instant}, content))


def _file_slices(tmp_path, base: dict, *blocks: bytes) -> tuple[Storage, list]:
    partition = tmp_path / "files"
    partition.mkdir()
    (partition / f"{FILE_ID}_0-1-0_{BASE}.hfile").write_bytes(_hfile(base))
    (partition / f".{FILE_ID}_{BASE}.log.1_0-1-0").write_bytes(b"".join(blocks))
    storage = Storage(str(tmp_path))
    slices = latest_file_slices("files", storage.list("files"), lambda instant: True, {})
    return storage, slices


def _filter(*valid: str, inflight: tuple[str, ...] = ()) -> BlockFilter:
    completed = frozenset((BASE, *valid))
    return BlockFilter(max(completed | set(inflight)), completed, BASE, frozenset(inflight),
                       frozenset((BASE, *valid)))


def _listed(storage, slices, blocks) -> dict[str, dict[str, int]]:
    """The full read of the slice, checked against keyed lookups of every key (and of an absent one)."""
    full = {key: record.listed() for key, record in read_files_records(storage, slices[0], blocks).items()}
    keyed = FilesPartitionLookup(storage, slices, blocks).records(["p1", "p2", "p3", "absent"])
    assert {key: record.listed() for key, record in keyed.items()} == full
    return full


def test_log_records_merge_onto_the_base_file(tmp_path):
    storage, slices = _file_slices(
        tmp_path, {"p1": {"a.parquet": (10, False), "b.parquet": (20, False)}},
        _data_block("001", {"p1": {"a.parquet": (0, True), "c.parquet": (30, False)}}),
        _data_block("002", {"p1": {"c.parquet": (25, False), "x.parquet": (0, True)},
                            "p2": {"d.parquet": (40, False)}}),
    )
    assert _listed(storage, slices, _filter("001", "002")) == {
        "p1": {"b.parquet": 20, "c.parquet": 30}, "p2": {"d.parquet": 40}}


def test_blocks_of_invalid_inflight_or_later_instants_are_skipped(tmp_path):
    storage, slices = _file_slices(
        tmp_path, {"p1": {"a.parquet": (10, False)}},
        _data_block("001", {"p1": {"b.parquet": (1, False)}}),  # not a valid instant
        _data_block("002", {"p1": {"c.parquet": (2, False)}}),  # inflight on the metadata table
        _data_block("003", {"p1": {"d.parquet": (3, False)}}),
        _data_block("009", {"p1": {"e.parquet": (4, False)}}),  # after the latest completed instant
        _data_block("004", {"p1": {"f.parquet": (5, False)}}),  # reading stopped before it
    )
    blocks = BlockFilter("004", frozenset({BASE, "001", "003", "004"}), BASE, frozenset({"002"}),
                         frozenset({BASE, "002", "003", "004"}))
    assert _listed(storage, slices, blocks) == {"p1": {"a.parquet": 10, "d.parquet": 3}}


def test_rollback_command_removes_its_targets_blocks_and_torn_blocks(tmp_path):
    torn = _data_block("002", {"p1": {"torn.parquet": (9, False)}})[:-30]
    storage, slices = _file_slices(
        tmp_path, {"p1": {"a.parquet": (10, False)}},
        _data_block("001", {"p1": {"b.parquet": (1, False)}}),
        _data_block("002", {"p1": {"a.parquet": (0, True)}}),
        torn,
        encode_block(rollback_command_block("003", "002")),
    )
    assert _listed(storage, slices, _filter("001", "002", "003")) == {
        "p1": {"a.parquet": 10, "b.parquet": 1}}


def test_delete_block_removes_a_key_and_a_later_log_record_starts_afresh(tmp_path):
    storage, slices = _file_slices(
        tmp_path, {"p1": {"a.parquet": (10, False)}, "p2": {"b.parquet": (5, False)}},
        _delete_block("001", ["p1", "p2"]),
        _data_block("002", {"p2": {"c.parquet": (7, False)}}),
    )
    # As in Hudi: the log's record of p2 no longer remembers the delete, so it merges onto the base's.
    assert _listed(storage, slices, _filter("001", "002")) == {"p2": {"b.parquet": 5, "c.parquet": 7}}


def test_delete_block_of_java_serialized_version_is_refused():
    block = LogBlock(BlockType.DELETE, {}, struct.pack(">ii", 2, 1) + b"\x00", offset=0)
    with pytest.raises(CorruptFileError, match="version 2, Java-serialized"):
        decode_delete_block(block, path="f.log")


def test_empty_delete_block_as_hudi_1_writes_it():
    assert decode_delete_block(LogBlock(BlockType.DELETE, {}, b"\x00\x00\x00\x03\x00\x00\x00\x01\x00")) == []


def test_slice_keeps_logs_of_the_latest_base_instant_and_later(tmp_path):
    partition = tmp_path / "files"
    partition.mkdir()
    for name in (f"{FILE_ID}_0-1-0_001.hfile", f"{FILE_ID}_0-1-0_005.hfile", f"{FILE_ID}_0-1-0_009.hfile",
                 f".{FILE_ID}_001.log.1_0-1-0", f".{FILE_ID}_005.log.1_0-1-0", f".{FILE_ID}_005.log.2_0-1-0",
                 f".{FILE_ID}_007.log.1_0-1-0"):
        (partition / name).write_bytes(b"x")
    statuses = Storage(str(tmp_path)).list("files")
    v6 = latest_file_slices("files", statuses, lambda instant: instant != "009", {})[0]
    assert v6.base_file.name == f"{FILE_ID}_0-1-0_005.hfile"
    assert [f.name for f in v6.log_files] == [
        f".{FILE_ID}_005.log.1_0-1-0", f".{FILE_ID}_005.log.2_0-1-0", f".{FILE_ID}_007.log.1_0-1-0"]
    # Table version 8+: a log belongs to the slice its deltacommit completed in.
    v8 = latest_file_slices("files", statuses, lambda instant: instant != "009",
                            {"001": "006", "005": "004", "007": "008"})[0]
    assert [f.name for f in v8.log_files] == [f".{FILE_ID}_001.log.1_0-1-0", f".{FILE_ID}_007.log.1_0-1-0"]


def test_combine_keeps_larger_size_drops_matched_tombstones_keeps_unmatched_ones():
    old = FilesRecord("p", 2, {"a": FileInfo(5, False), "b": FileInfo(3, False)})
    new = FilesRecord("p", 2, {"a": FileInfo(4, False), "b": FileInfo(0, True), "c": FileInfo(0, True)})
    merged = combine(old, new)
    assert merged.files == {"a": FileInfo(5, False), "c": FileInfo(0, True)}
    assert merged.listed() == {"a": 5}
    with pytest.raises(ValueError, match="cannot merge type 2 into type 1"):
        combine(FilesRecord("p", 1, {}), new)
