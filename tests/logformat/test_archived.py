"""Archived timeline files: writing blocks of `batch_size` entries and reading files newest first."""

from __future__ import annotations

import json
import logging

import pytest

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.logformat import (
    BlockType,
    HeaderKey,
    archive_file_name,
    archive_file_version,
    decode_avro_data_block,
    encode_archive_file,
    read_archived_records,
    read_blocks,
)


def _entry(instant: int, action: str = "commit") -> dict:
    return {
        "commitTime": f"2025010100{instant:07d}",
        "actionType": action,
        "actionState": "COMPLETED",
        "stateTransitionTime": f"2025010100{instant:07d}",
        "hoodieCommitMetadata": (
            {"partitionToWriteStats": {}, "extraMetadata": {"schema": "{}"}, "operationType": "UPSERT"}
            if action == "commit"
            else None
        ),
    }


def _instants(records) -> list[str]:
    return [record["commitTime"] for record in records]


def test_entries_are_written_in_blocks_of_batch_size_with_only_a_schema_header(
    archived_entry_schema: str,
) -> None:
    entries = [_entry(i) for i in range(25)]
    blocks = list(read_blocks(encode_archive_file(entries, archived_entry_schema, batch_size=10)))
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA] * 3
    assert all(b.header == {HeaderKey.SCHEMA: archived_entry_schema} for b in blocks)
    decoded = [decode_avro_data_block(b, archived_entry_schema) for b in blocks]
    assert [len(records) for records in decoded] == [10, 10, 5]
    assert _instants(r for records in decoded for r in records) == _instants(entries)
    first = decoded[0][0]
    assert first["hoodieCommitMetadata"]["extraMetadata"] == {"schema": "{}"}
    assert first["hoodieCleanMetadata"] is None
    assert first["version"] == 1  # fastavro writes a field's default when the record lacks it


def test_no_entries_make_no_bytes_and_the_batch_size_must_be_positive(archived_entry_schema: str) -> None:
    assert encode_archive_file([], archived_entry_schema) == b""
    with pytest.raises(ValueError, match="batch size"):
        encode_archive_file([_entry(1)], archived_entry_schema, batch_size=0)


def test_files_are_read_newest_version_first(archived_entry_schema: str) -> None:
    def archive(*instants: int) -> bytes:
        return encode_archive_file([_entry(i) for i in instants], archived_entry_schema, batch_size=2)

    files = [
        (f"base/.hoodie/archived/{archive_file_name(2)}", archive(3, 4)),
        (f"base/.hoodie/archived/{archive_file_name(10)}", archive(5)),
        ("base/.hoodie/archived/mergeArchivePlan", b"not an archive file"),
        (archive_file_name(1), archive(1, 2)),
    ]
    records = read_archived_records(files, archived_entry_schema)
    assert _instants(records) == [_entry(i)["commitTime"] for i in (5, 3, 4, 1, 2)]


def test_files_are_read_only_when_reached(archived_entry_schema: str) -> None:
    calls = []

    def source(version: int):
        def read() -> bytes:
            calls.append(version)
            return encode_archive_file([_entry(version)], archived_entry_schema)

        return read

    records = read_archived_records(
        [(archive_file_name(v), source(v)) for v in (1, 2, 3)], archived_entry_schema
    )
    assert next(records)["commitTime"] == _entry(3)["commitTime"]
    assert calls == [3]


def test_a_torn_newest_file_still_yields_its_complete_blocks(
    archived_entry_schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    newest = encode_archive_file([_entry(i) for i in range(10, 15)], archived_entry_schema, batch_size=2)
    older = encode_archive_file([_entry(1)], archived_entry_schema)
    files = [(archive_file_name(1), older), (archive_file_name(2), newest[:-40])]
    with caplog.at_level(logging.WARNING):
        records = list(read_archived_records(files, archived_entry_schema))
    assert _instants(records) == [_entry(i)["commitTime"] for i in (10, 11, 12, 13, 1)]
    assert archive_file_name(2) in caplog.text


def test_an_unreadable_file_fails_unless_it_is_the_pending_merge_target(
    archived_entry_schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    files = [
        (archive_file_name(1), encode_archive_file([_entry(1)], archived_entry_schema)),
        (f"archived/{archive_file_name(2)}", b"garbage, no magic"),
    ]
    with pytest.raises(CorruptFileError, match=f"archived/{archive_file_name(2)}: no log block magic"):
        list(read_archived_records(files, archived_entry_schema))
    with caplog.at_level(logging.WARNING):
        records = read_archived_records(files, archived_entry_schema, unreadable_ok={archive_file_name(2)})
        assert _instants(records) == [_entry(1)["commitTime"]]
    assert archive_file_name(2) in caplog.text


def test_older_writer_schemas_resolve_against_the_reader_schema(archived_entry_schema: str) -> None:
    reader = json.loads(archived_entry_schema)
    kept = {"commitTime", "actionType", "actionState"}
    writer = {**reader, "fields": [f for f in reader["fields"] if f["name"] in kept]}
    entry = {"commitTime": "001", "actionType": "clean", "actionState": "COMPLETED"}
    files = [(archive_file_name(1), encode_archive_file([entry], json.dumps(writer)))]
    (record,) = read_archived_records(files, archived_entry_schema)
    assert record["actionType"] == "clean"
    assert record["version"] == 1  # the reader schema's default
    assert record["hoodieCleanMetadata"] is None


@pytest.mark.parametrize(
    ("name", "version"),
    [
        (".commits_.archive.3_1-0-1", 3),
        (".commits_.archive.17", 17),
        (".commits_.archive.x_1-0-1", 0),
        (".commits_.archive.2147483648_1-0-1", 0),
        ("mergeArchivePlan", 0),
    ],
)
def test_archive_file_version(name: str, version: int) -> None:
    assert archive_file_version(name) == version


def test_archive_file_name() -> None:
    assert archive_file_name(3) == ".commits_.archive.3_1-0-1"
