"""The compiled Avro encoder writes the bytes fastavro writes, and leaves to fastavro what it cannot
decide alone."""

from __future__ import annotations

import io
import json
import re
from typing import NamedTuple

import fastavro
import pytest
from support.refdata import TABLES, table_zips, unzip_table

from hudi_assets.archive.conversion import COLUMNS_FROM, convert_commit_metadata, to_archived_entry
from hudi_assets.avro import java_schema_json
from hudi_assets.avro.binary import Encoded, Mismatch, compile_encoder, nullable_long_column, unencoded
from hudi_assets.demo import generate_table
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.logformat.archived import read_archived_records
from hudi_assets.logformat.avro_block import encode_avro_data_block, encode_avro_record
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config

ENTRY = java_schema_json("HoodieArchivedMetaEntry")


def _fastavro(schema, record) -> bytes:
    """fastavro's bytes of `record`, its arrays encoded beforehand (`Encoded`) made plain for it."""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), unencoded(record))
    return out.getvalue()


def _entries(table: HoodieTable) -> list[dict]:
    """The archived entry of every state file that converts (Hudi's archiver fails on the others)."""
    timeline = table.active_timeline
    entries = []
    for instant in timeline.state_files:
        try:
            entries.append(to_archived_entry(timeline, instant))
        except CorruptFileError:
            continue
    return entries


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_archived_entries_of_a_demo_table_encode_as_fastavro(tmp_path, table_type):
    generate_table(Storage(str(tmp_path)), table_type, partitions=2, commits=8, bloom_entries=100)
    entries = _entries(HoodieTable(str(tmp_path)))
    actions = {(e["actionType"], e["actionState"]) for e in entries}
    assert len(actions) >= 6, actions  # commits, replace, clean, rollback, savepoint, ... in all states
    encode, schema = compile_encoder(json.loads(ENTRY)), json.loads(ENTRY)
    for entry in entries:
        assert encode(entry) == _fastavro(schema, entry), entry["commitTime"]


def test_entries_of_real_tables_encode_as_fastavro(tmp_path):
    """Every real table's active state files as archived entries, and its archived records as read."""
    names = table_zips(6) if TABLES.exists() else []
    if not names:
        pytest.skip("../shared is absent: no real Hudi-written table to compare with")
    encode, schema, checked = compile_encoder(json.loads(ENTRY)), json.loads(ENTRY), 0
    for name in names:
        base = unzip_table(name, tmp_path / name)
        archived = sorted((base / ".hoodie" / "archived").glob(".commits_.archive*"))
        records = list(read_archived_records([(str(p), p.read_bytes()) for p in archived], ENTRY))
        for record in records + _entries(HoodieTable(str(base))):
            assert encode(record) == _fastavro(schema, record)
            checked += 1
    assert checked


# a record inside itself, as array items (written inline) and in a union (a call)
TREE = {"type": "record", "name": "Tree", "fields": [
    {"name": "c", "type": {"type": "array", "items": "Tree"}},
    {"name": "t", "type": ["null", "boolean"], "default": None},
]}


@pytest.mark.parametrize(("schema", "value"), [
    (["null", "long"], 5), (["null", "long"], -(2**63)), (["null", "string"], "déjà"), ("double", 3),
    (["null", "double"], 2.5), ({"type": "map", "values": ["null", "int"]}, {"a": 1, "b": None}),
    ({"type": "array", "items": "boolean"}, [True, False]), ({"type": "array", "items": "long"}, []),
    ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, "B"), ("bytes", b"\x00\x01"),
    ({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": 7},
                                               {"name": "b", "type": ["null", "R"], "default": None}]},
     {"b": {"a": 1}}),
    (TREE, {"c": [{"c": []}, {"c": [{"c": [], "t": True}]}], "t": None}),
    ({"type": "map", "values": TREE}, {"x": {"c": []}, "y": {"c": [{"c": []}], "t": False}}),
    ({"type": "array", "items": "string"}, ["a" * n for n in (0, 63, 64, 8191, 8192, 20000)] + ["é"]),
    ({"type": "array", "items": "string"}, ["a" * n for n in (0, 1, 63, 64, 127, 128, 8191)]),
    ({"type": "array", "items": "string"}, ["b" * n for n in (5, 8192)]),
    ({"type": "array", "items": ["null", "long"]}, [None, 0, 8191, 8192, -1, 2**63 - 1]),
    # every varint length, at both ends (one to four bytes are made without a loop)
    ({"type": "array", "items": "long"},
     [v for bits in range(0, 64, 7) for edge in (2**bits - 1, 2**bits) for v in (edge, -edge, -edge - 1)
      if -(2**63) <= v < 2**63] + [435_000, 2**27 - 1, 2**27, -(2**63)]),
    ({"type": "record", "name": "Empty", "fields": []}, {}),
])
def test_values_encode_as_fastavro(schema, value):
    assert compile_encoder(schema)(value) == _fastavro(schema, value)


@pytest.mark.parametrize(("schema", "value"), [
    (["null", "int", "long"], 1),  # two branches take an int: fastavro's validation decides
    (["null", "long"], True),  # a bool is no long to fastavro's union: it raises
    ("long", 1.5), ({"type": "enum", "name": "E", "symbols": ["A"]}, "Z"), ("int", 2**40),
    (["null", "long"], 2**63), ({"type": "array", "items": "string"}, ["a", None]),
    ({"type": "record", "name": "Empty", "fields": []}, []),
])
def test_undecided_or_unfitting_values_are_left_to_fastavro(schema, value):
    with pytest.raises(Mismatch):
        compile_encoder(schema)(value)


def test_long_columns_encode_as_fastavro_at_every_varint_length():
    """A `["null", "long"]` column (a commit's write-stat counts and sizes) at both ends of every
    varint length, made in one piece with the union index up to four bytes; beyond a long: `Mismatch`."""
    edges = [edge for bits in range(0, 64, 7) for edge in (2**bits - 1, 2**bits)]
    values = [v for edge in edges for v in (edge, -edge, -edge - 1) if -(2**63) <= v < 2**63] + [2**63 - 1]
    schema = ["null", "long"]
    assert nullable_long_column(values) == [_fastavro(schema, v) for v in values]
    for beyond in (2**63, -(2**63) - 1, -(2**70)):
        with pytest.raises(Mismatch):
            nullable_long_column([1, beyond])


def test_block_falls_back_to_fastavro_per_record():
    schema = json.dumps(["null", "int", "long"])
    block = encode_avro_data_block([1, None, 2**40], schema)
    assert block.content.endswith(_fastavro(json.loads(schema), 2**40))


def test_strict_leaves_unknown_or_missing_fields_to_fastavro():
    fields = [{"name": "a", "type": "int"}, {"name": "b", "type": ["null", "int"], "default": None}]
    schema = {"type": "record", "name": "R", "fields": fields}
    strict = compile_encoder(schema, strict=True)
    assert strict({"a": 1}) == compile_encoder(schema)({"a": 1}) == _fastavro(schema, {"a": 1})
    for record in ({"a": 1, "typo": 2}, {"b": 2}):
        with pytest.raises(Mismatch):
            strict(record)


class Pair(NamedTuple):
    name: str | None
    flag: bool | None


PAIRS = {"type": "record", "name": "Pairs", "fields": [{"name": "items", "type": {"type": "array", "items": {
    "type": "record", "name": "Pair", "fields": [{"name": "name", "type": ["null", "string"]},
                                                 {"name": "flag", "type": ["null", "boolean"]}]}}}]}


def test_records_given_as_tuples_encode_as_their_dicts():
    items = [Pair("a", True), Pair(None, None), Pair("é" * 100, False)]
    encode = compile_encoder(PAIRS, tuples={"Pair": Pair})
    assert encode({"items": items}) == _fastavro(PAIRS, {"items": [p._asdict() for p in items]})
    for wrong in ([("a", True)], [{"name": "a", "flag": True}], [Pair(1, True)]):  # other type, other value
        with pytest.raises(Mismatch):
            encode({"items": wrong})


def test_tuple_classes_must_fit_their_record():
    with pytest.raises(ValueError, match="does not hold the 2 fields of Pair"):
        compile_encoder(PAIRS, tuples={"Pair": NamedTuple("One", [("name", str)])})
    with pytest.raises(ValueError, match="no record named"):
        compile_encoder(PAIRS, tuples={"Other": Pair})


def _commit(stats_per_partition: dict) -> dict:
    return {"partitionToWriteStats": stats_per_partition, "compacted": False,
            "extraMetadata": {"schema": "s"}, "operationType": "UPSERT"}


def _stat(n: int, **values) -> dict:
    stat = {"fileId": f"f{n}", "path": f"p/f{n}-é.parquet" if n % 5 == 0 else f"p/f{n}.parquet",
            "prevCommit": "null", "numWrites": n * 1000, "numDeletes": -n, "numInserts": 2**40 + n,
            "totalWriteBytes": 8191 + n, "fileSizeInBytes": 2**63 - 1 - n, "partitionPath": "p",
            "totalLogRecords": None, "cdcStats": None, "runtimeStats": {"totalScanTime": 1}}
    del stat["numDeletes" if n % 3 == 0 else "cdcStats"]  # absent: 0
    return {**stat, **values}


ODD = {"numWrites": "12"}, {"fileId": 7}, {"numInserts": True}, {"totalWriteBytes": 2.0}, {"fileId": None}


@pytest.mark.parametrize("odd", [None, *ODD])
def test_write_stats_encoded_by_columns_are_the_bytes_of_the_converted_stats(odd):
    """A commit's write stats encoded column by column write the bytes fastavro writes for the stats
    converted one by one; a stat with a value Avro does not take as it is (a number as a string, a
    bool, a float) converts the commit's stats one by one, as before."""
    stats = [_stat(n) for n in range(COLUMNS_FROM + 20)] + [_stat(99, path="x" * 9000)]
    if odd:
        stats[COLUMNS_FROM].update(odd)
    obj = _commit({"a": stats[:10], "b": [], "c": None, "d": stats[10:]})
    converted = convert_commit_metadata(obj)
    written = converted["partitionToWriteStats"]
    assert {type(v) for v in written.values()} == ({Encoded} if odd in (None, ODD[-1]) else {list})
    assert unencoded(converted) == json.loads(json.dumps(converted, default=lambda e: e.plain()))
    entry = {"commitTime": "1", "actionType": "commit", "actionState": "COMPLETED", "version": None,
             "stateTransitionTime": "2", "hoodieCommitMetadata": converted}
    schema = json.loads(ENTRY)
    assert compile_encoder(schema)(entry) == _fastavro(schema, entry)
    assert encode_avro_record(entry, ENTRY) == _fastavro(schema, entry)


def test_a_record_around_encoded_stats_falls_back_to_fastavro_with_them_plain():
    """A record the generated encoder leaves to fastavro (here a union fastavro must decide) still
    encodes when it holds write stats encoded beforehand: fastavro gets them plain."""
    converted = convert_commit_metadata(_commit({"p": [_stat(n) for n in range(COLUMNS_FROM)]}))
    schema = {"type": "record", "name": "R", "fields": [
        {"name": "n", "type": ["null", "int", "long"]},
        {"name": "m", "type": json.loads(ENTRY)["fields"][0]["type"]}]}
    record = {"n": 1, "m": converted}
    with pytest.raises(Mismatch):
        compile_encoder(schema)(record)
    assert encode_avro_record(record, json.dumps(schema)) == _fastavro(schema, record)


def _jackson(stats: list[dict], **top) -> bytes:
    obj = {"partitionToWriteStats": {"a": stats[:3], "b": stats[3:]}, "compacted": False,
           "extraMetadata": {"schema": "s"}, "operationType": "UPSERT", **top}
    return json.dumps(obj, indent=2).encode()


ODD_FILES = {
    "plain": _jackson([_stat(n) for n in range(COLUMNS_FROM + 20)]),
    "few": _jackson([_stat(n) for n in range(4)]),
    "number as string": _jackson([_stat(n) for n in range(COLUMNS_FROM)] + [_stat(1, numWrites="12")]),
    "NaN where nothing reads it": _jackson([_stat(n, runtimeStats={"x": float("nan")}) for n in range(20)]),
    "null counts and ids": _jackson([_stat(n, numInserts=None, fileId=None) for n in range(20)]),
    "long path": _jackson([_stat(n, path="é" * 5000) for n in range(20)]),
    "duplicate keys": _jackson([_stat(n) for n in range(20)]).replace(b'"numWrites"',
                                                                     b'"numWrites": 5, "numWrites"'),
    "null partition": _jackson([_stat(n) for n in range(20)], partitionToWriteStats={"a": None, "b": []}),
    "compacted": _jackson([_stat(n) for n in range(20)], compacted=True, operationType=None),
    "extra of other kinds": _jackson([_stat(n) for n in range(20)], extraMetadata={"a": 1, "b": True}),
    "blank": b"  \n",
}


@pytest.mark.parametrize("name", ODD_FILES)
@pytest.mark.parametrize("replace", [False, True])
def test_commit_files_convert_as_their_json_loads_dicts(tmp_path, name, replace):
    """A commit file decoded into only the fields Avro holds (or, where it holds other kinds or JSON
    only Python's reader takes, parsed by `json.loads`) makes the record converted from the dict
    `json.loads` reads, to the byte."""
    data = ODD_FILES[name]
    if replace:
        data = data.replace(b'"compacted"', b'"partitionToReplaceFileIds": {"a": ["f1", "f2"], "c": null}, '
                                            b'"compacted"') if data.strip() else data
    storage = Storage(str(tmp_path))
    write_table_config(storage, {"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE",
                                 "hoodie.table.version": "6"})
    action = "replacecommit" if replace else "commit"
    storage.write(f".hoodie/20240101000000000.{action}", data)
    timeline = HoodieTable(storage).active_timeline
    entry = to_archived_entry(timeline, next(iter(timeline.state_files)))
    expected = convert_commit_metadata(json.loads(data) if data.strip() else {}, replace)
    payload = entry["hoodieReplaceCommitMetadata" if replace else "hoodieCommitMetadata"]
    assert unencoded(payload) == unencoded(expected)
    schema = json.loads(ENTRY)
    assert encode_avro_record(entry, ENTRY) == _fastavro(schema, entry)


NOT_UTF8 = {  # where json.loads (and so the archive) rejects the file, or takes it through 'surrogatepass'
    "invalid byte in a key nothing reads": (b'"cdcStats"', b'"cdc\xffStats"'),
    "overlong encoding in a value nothing reads": (b'"totalScanTime"', b'"total\xc0\xafScanTime"'),
    "invalid byte in a path": (b'"p/f1.parquet"', b'"p/f1\xff.parquet"'),
    "surrogate's bytes in a value nothing reads": (b'"totalScanTime"', b'"total\xed\xa0\x80ScanTime"'),
}


@pytest.mark.parametrize("name", NOT_UTF8)
def test_commit_files_not_in_utf8_archive_as_json_loads_reads_them(tmp_path, name):
    """msgspec checks the UTF-8 of the strings it decodes only (a bad byte elsewhere passed, one there
    escaped as UnicodeDecodeError): such a file fails naming it, as `json.loads` rejects it."""
    old, new = NOT_UTF8[name]
    data = _jackson([_stat(n) for n in range(COLUMNS_FROM + 4)]).replace(old, new)
    assert data.count(new) >= 1
    storage = Storage(str(tmp_path))
    write_table_config(storage, {"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE",
                                 "hoodie.table.version": "6"})
    storage.write(".hoodie/20240101000000000.commit", data)
    timeline = HoodieTable(storage).active_timeline
    try:
        expected = convert_commit_metadata(json.loads(data))
    except UnicodeDecodeError as exc:
        with pytest.raises(CorruptFileError, match=r"20240101000000000\.commit: is not valid commit metadata "
                                                   rf"JSON \({re.escape(str(exc))}\)"):
            to_archived_entry(timeline, next(iter(timeline.state_files)))
    else:
        entry = to_archived_entry(timeline, next(iter(timeline.state_files)))
        assert unencoded(entry["hoodieCommitMetadata"]) == unencoded(expected)
