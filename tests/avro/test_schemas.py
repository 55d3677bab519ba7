"""Our schema copies against Hudi's reference .avsc files and the schema text in real Hudi files."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pytest

from hudi_assets.avro import NAMESPACE, SCHEMAS, java_schema_json, parsed

_MISSING = "<no default>"
_TYPE_KEYS = frozenset({"type", "name", "namespace", "doc", "fields", "items", "values", "aliases"})
_PRIMITIVES = {"string": "s", "long": 2**40, "int": 7, "boolean": True, "double": 0.5}


def _norm(type_: Any) -> Any:
    """A type without docs or inlined definitions (records become their name), for comparison."""
    if isinstance(type_, list):
        return [_norm(branch) for branch in type_]
    if isinstance(type_, str):
        return type_
    kind = type_["type"]
    props = {key: value for key, value in type_.items() if key not in _TYPE_KEYS}
    if kind == "record":
        return type_["name"]
    if kind == "array":
        return {"array": _norm(type_["items"]), **props}
    if kind == "map":
        return {"map": _norm(type_["values"]), **props}
    return kind  # {"type": "long", "doc": ...} or {"name": ..., "type": "string"}: a primitive


def _differences(name: str, ours: dict[str, Any], reference: dict[str, Any]) -> list[str]:
    our_names = [f["name"] for f in ours["fields"]]
    ref_names = [f["name"] for f in reference["fields"]]
    if our_names != ref_names:
        return [f"{name}: fields differ\n  ours:      {our_names}\n  reference: {ref_names}"]
    diffs = []
    for our_field, ref_field in zip(ours["fields"], reference["fields"], strict=True):
        for aspect, ours_value, ref_value in (
            ("type", _norm(our_field["type"]), _norm(ref_field["type"])),
            ("default", our_field.get("default", _MISSING), ref_field.get("default", _MISSING)),
            ("doc", our_field.get("doc"), ref_field.get("doc")),
        ):
            if ours_value != ref_value:
                where = f"{name}.{our_field['name']} {aspect}"
                diffs.append(f"{where}: ours {ours_value!r}, reference {ref_value!r}")
    return diffs


def _sample(type_: Any, named: dict[str, Any], label: str = "value", *, minimal: bool = False) -> Any:
    """A record with a non-null value everywhere (or, minimal, only where there is no default)."""
    if isinstance(type_, list):
        return _sample(next(branch for branch in type_ if branch != "null"), named, label, minimal=minimal)
    if isinstance(type_, str):
        if type_ not in _PRIMITIVES:
            return _sample(named[type_], named, label, minimal=minimal)
        return f"{label}-text" if type_ == "string" else _PRIMITIVES[type_]
    kind = type_["type"]
    if kind == "record":
        named[type_["name"]] = type_
        fields = [f for f in type_["fields"] if not (minimal and "default" in f)]
        return {f["name"]: _sample(f["type"], named, f["name"], minimal=minimal) for f in fields}
    if kind == "array":
        return [_sample(type_["items"], named, label, minimal=minimal)]
    if kind == "map":
        return {f"{label}-key": _sample(type_["values"], named, label, minimal=minimal)}
    return _sample(kind, named, label)


def _recode(record: dict[str, Any], writer: dict[str, Any], reader: dict[str, Any]) -> dict[str, Any]:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, writer, record)
    buffer.seek(0)
    decoded = fastavro.schemaless_reader(buffer, writer, reader)
    assert buffer.read() == b"", "reader left bytes undecoded"
    return decoded


def test_registry_holds_standalone_parseable_schemas() -> None:
    for name, schema in SCHEMAS.items():
        assert (schema["name"], schema["namespace"]) == (name, NAMESPACE)
        assert parsed(name) is parsed(name)
        assert json.loads(java_schema_json(name))["name"] == name


@pytest.mark.shared
def test_every_reference_record_is_registered(reference_records: dict[str, dict[str, Any]]) -> None:
    assert set(reference_records) - set(SCHEMAS) == set()
    assert set(SCHEMAS) - set(reference_records) == set()


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_fields_match_reference(name: str, reference_records: dict[str, dict[str, Any]]) -> None:
    diffs = _differences(name, SCHEMAS[name], reference_records[name])
    assert not diffs, "\n".join(diffs)


@pytest.mark.shared
@pytest.mark.parametrize("minimal", [False, True], ids=["full", "minimal"])
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_resolves_both_ways_with_reference(
    name: str, minimal: bool, reference_schemas: dict[str, dict[str, Any]]
) -> None:
    ours = parsed(name)
    reference = fastavro.parse_schema(reference_schemas[name])
    ours_record = _sample(SCHEMAS[name], {}, minimal=minimal)
    reference_record = _sample(reference_schemas[name], {}, minimal=minimal)
    expected = _recode(ours_record, ours, ours)  # defaults filled in for the minimal record

    assert _recode(ours_record, ours, reference) == expected
    assert _recode(reference_record, reference, ours) == _recode(reference_record, reference, reference)
    if not minimal:
        assert expected == ours_record == reference_record


@pytest.mark.shared
def test_schema_text_equals_what_hudi_wrote(v6_metadata_files: dict[str, tuple[Path, str]]) -> None:
    assert v6_metadata_files, "no Avro timeline file found in the v6 tables"
    for label, (path, schema_name) in v6_metadata_files.items():
        header = fastavro.reader(io.BytesIO(path.read_bytes())).metadata
        assert header == {"avro.schema": java_schema_json(schema_name)}, label
