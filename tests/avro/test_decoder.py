"""The decoder compiled from our schema text reads what fastavro reads, and leaves to fastavro what it
cannot read; a clean plan's `CleanFileInfo` tuples round-trip through it and through the encoder."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any, NamedTuple

import fastavro
import pytest

from hudi_assets.avro import deserialize_metadata, java_schema_json, parsed, serialize_metadata
from hudi_assets.avro.container import _read_as_written
from hudi_assets.avro.decoder import Undecodable, compile_decoder
from hudi_assets.clean.plan import CleanerPlan, CleanFileInfo, PartitionCleanStat, clean_metadata_record
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.timeline.instant import Instant, State

BASE = "file:///warehouse/t"


def _fastavro(schema: Any, value: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), value)
    return out.getvalue()


def _fastavro_read(data: bytes) -> Any:
    return next(iter(fastavro.reader(io.BytesIO(data))))


def _unsynced(data: bytes) -> bytes:
    """A container file without its random sync marker (after the header and the block)."""
    return data.replace(data[-16:], b"")


def _plan(files: int = 300) -> CleanerPlan:
    partitions = [f"2024/01/{day:02d}" for day in range(1, 8)] + [""]
    by_partition = {p: [CleanFileInfo(f"{BASE}/{p}/f{n}-0_0-1-1_2024{n:013d}.parquet", n % 7 == 0)
                        for n in range(files) if hash(p) % 8 != n % 8 or not p] for p in partitions}
    by_partition["2024/01/05"] = []
    by_partition["déjà/vu"] = [CleanFileInfo(f"{BASE}/déjà/vu/{'x' * 9000}.parquet", None)]
    return CleanerPlan(Instant("20240101000000000", "commit", State.COMPLETED), "20240102000000000",
                       "KEEP_LATEST_COMMITS", by_partition, ["2023/12/31"], {"savepointed_timestamps": ""})


TREE = {"type": "record", "name": "Tree", "fields": [
    {"name": "c", "type": {"type": "array", "items": "Tree"}},
    {"name": "t", "type": ["null", "boolean"], "default": None},
]}


@pytest.mark.parametrize(("schema", "value"), [
    (["null", "long"], 5), (["null", "long"], -(2**63)), (["null", "long"], 2**63 - 1),
    (["null", "string"], "déjà"), ("double", 3.0), ("float", 0.5), (["null", "double"], 2.5),
    ({"type": "map", "values": ["null", "int"]}, {"a": 1, "b": None, "": -70000}),
    ({"type": "array", "items": "boolean"}, [True, False]), ({"type": "array", "items": "long"}, []),
    ({"type": "array", "items": "string"}, ["a" * n for n in (0, 63, 64, 8191, 8192, 20000)]),
    ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, "B"), ("bytes", b"\x00\x01"),
    ({"type": "fixed", "name": "F", "size": 3}, b"abc"),
    ({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": 7},
                                               {"name": "b", "type": ["null", "R"], "default": None}]},
     {"a": 1, "b": {"a": 2, "b": {"a": 3, "b": None}}}),
    ({"type": "map", "values": TREE}, {"x": {"c": []}, "y": {"c": [{"c": [], "t": True}], "t": False}}),
    ({"type": "record", "name": "Empty", "fields": []}, {}),
])
def test_values_decode_as_fastavro(schema, value):
    data = _fastavro(schema, value)
    decoded, end = compile_decoder(schema)(data, 0)
    assert end == len(data)
    assert decoded == fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(schema))


class Pair(NamedTuple):
    name: str | None
    flag: bool | None


def test_records_made_as_tuples():
    schema = {"type": "array", "items": {"type": "record", "name": "P", "namespace": "n", "fields": [
        {"name": "name", "type": ["null", "string"]}, {"name": "flag", "type": ["null", "boolean"]}]}}
    items = [Pair("a", True), Pair(None, None), Pair("é" * 100, False)]
    data = _fastavro(schema, [p._asdict() for p in items])
    decoded, _ = compile_decoder(schema, tuples={"n.P": Pair})(data, 0)
    assert decoded == items and all(type(p) is Pair for p in decoded)


def test_array_written_in_blocks_with_sizes_decodes():
    """Java's encoder may split arrays and maps into blocks, a negative count followed by the size."""
    data = b"\x03\x04\x02\x04\x00"  # block of -2 items, 2 bytes: 1, 2; end
    assert compile_decoder({"type": "array", "items": "long"})(data, 0) == ([1, 2], len(data))


@pytest.mark.parametrize("data", [b"\x06", b"\x01", b"\x02\xff", b"\x02\x01", b"\x04" + b"\xff" * 11,
                                  b"\x04\x0a\x02", b"\x04"])
def test_bad_bytes_are_undecodable(data):
    """Union index out of range or negative, truncated varint, negative length, overlong varint,
    count beyond the data, nothing after the union index."""
    decode = compile_decoder(["null", "string", {"type": "array", "items": "long"}])
    with pytest.raises((Undecodable, IndexError)):
        decode(data, 0)


def test_clean_plan_round_trips_through_tuples():
    plan = _plan()
    data = plan.serialize()
    assert _unsynced(data) == _unsynced(serialize_metadata("HoodieCleanerPlan", plan.to_record()))
    body = io.BytesIO()
    fastavro.schemaless_writer(body, parsed("HoodieCleanerPlan"), plan.to_record())
    assert body.getvalue() in data  # the tuples encode as fastavro encodes the dicts
    back = CleanerPlan.deserialize(data, "p")
    assert back.file_paths_to_delete == plan.file_paths_to_delete
    assert all(type(f) is CleanFileInfo for files in back.file_paths_to_delete.values() for f in files)
    assert deserialize_metadata(data, "HoodieCleanerPlan", "p") == _fastavro_read(data)
    # written back as read: a null isBootstrapBaseFile stays null, as Hudi re-serializes the plan
    long_name = f"{BASE}/déjà/vu/{'x' * 9000}.parquet"
    assert back.file_paths_to_delete["déjà/vu"] == [CleanFileInfo(long_name, None)]
    assert _fastavro_read(back.serialize()) == _fastavro_read(data)


def test_plan_that_does_not_fit_is_refused_by_fastavro():
    plan = _plan(3)
    plan.file_paths_to_delete["2024/01/01"].append(CleanFileInfo(7, False))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="record does not fit HoodieCleanerPlan"):
        plan.serialize()


def test_plan_of_another_writers_schema_text_reads_through_fastavro(tmp_path):
    """Other schema text (here: ours without the Java string properties, and fields in another
    place) is resolved by fastavro; the plan comes out the same, with CleanFileInfo tuples."""
    plan = _plan(50)
    schema = json.loads(json.dumps(parsed("HoodieCleanerPlan")))
    schema["fields"] = schema["fields"][::-1]
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), [plan.to_record()])
    data = buffer.getvalue()
    assert _read_as_written(data, "HoodieCleanerPlan", None) is None
    back = CleanerPlan.deserialize(data, "p")
    ours = CleanerPlan.deserialize(plan.serialize(), "p")
    assert back.file_paths_to_delete == ours.file_paths_to_delete
    assert list(back.file_paths_to_delete) == list(ours.file_paths_to_delete)  # the order as read
    assert all(type(f) is CleanFileInfo for files in back.file_paths_to_delete.values() for f in files)
    assert _unsynced(back.serialize()) == _unsynced(ours.serialize())


def test_damaged_plans_read_as_fastavro_reads_them():
    """Each byte of a plan changed: the compiled decoder's record is fastavro's, or it leaves the
    file to fastavro (which then reads it or names it corrupt)."""
    data = _plan(4).serialize()
    rng = random.Random(10)
    compiled = 0
    for pos in range(len(data)):
        damaged = bytearray(data)
        damaged[pos] = rng.choice([b for b in range(256) if b != data[pos]])
        damaged = bytes(damaged)
        fast = _read_as_written(damaged, "HoodieCleanerPlan", None)
        if fast is None:
            continue
        compiled += 1
        assert fast == _fastavro_read(damaged), pos
    assert compiled  # a changed character of a path still decodes
    for size in range(len(data)):
        assert _read_as_written(data[:size], "HoodieCleanerPlan", None) is None


def test_clean_metadata_encodes_as_fastavro_and_decodes_compiled():
    plan = _plan(200)
    names = {p: [f.file_path.rsplit("/", 1)[1] for f in fs] for p, fs in plan.file_paths_to_delete.items()}
    stats = [PartitionCleanStat(p, plan.policy, names[p], names[p], [] if names[p] else ["failed"])
             for p in names]
    record = clean_metadata_record("20240103000000000", 1234, plan, stats)
    data = serialize_metadata("HoodieCleanMetadata", record)
    body = io.BytesIO()
    fastavro.schemaless_writer(body, parsed("HoodieCleanMetadata"), record)
    assert body.getvalue() in data
    assert _read_as_written(data, "HoodieCleanMetadata", None) == _fastavro_read(data)


@pytest.mark.shared
def test_real_files_take_the_compiled_decoder(v6_metadata_files: dict[str, tuple[Path, str]]) -> None:
    """Hudi writes our schema text: its files read by the compiled decoder, as fastavro reads them."""
    compiled = 0
    for path, schema_name in v6_metadata_files.values():
        data = path.read_bytes()
        header = fastavro.reader(io.BytesIO(data)).metadata["avro.schema"]
        fast = _read_as_written(data, schema_name, None)
        if header == java_schema_json(schema_name):
            assert fast == _fastavro_read(data), path
            compiled += 1
        else:
            assert fast is None
        try:
            deserialize_metadata(data[:-1], schema_name, str(path))
        except CorruptFileError:
            pass
        else:
            raise AssertionError(f"{path}: a truncated file read")
    assert compiled
