"""Fixtures for the Avro tests: Hudi's reference schemas and real Hudi-written metadata files."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"

# Which record type Hudi writes into an Avro timeline file, by the file's action/state suffix.
SCHEMA_BY_SUFFIX = {
    ".rollback.requested": "HoodieRollbackPlan",
    ".rollback": "HoodieRollbackMetadata",
    ".replacecommit.requested": "HoodieRequestedReplaceMetadata",
    ".clean.requested": "HoodieCleanerPlan",
    ".clean.inflight": "HoodieCleanerPlan",
    ".clean": "HoodieCleanMetadata",
    ".savepoint": "HoodieSavepointMetadata",
    ".compaction.requested": "HoodieCompactionPlan",
}


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"../shared is absent: no reference schemas or real tables at {SHARED}")
    return SHARED.resolve()


def _collect_records(type_: Any, into: dict[str, dict[str, Any]]) -> None:
    if isinstance(type_, list):
        for branch in type_:
            _collect_records(branch, into)
    elif isinstance(type_, dict):
        if type_.get("type") == "record":
            into[type_["name"]] = type_
            for field in type_["fields"]:
                _collect_records(field["type"], into)
        else:
            _collect_records(type_.get("items", type_.get("values")), into)


@pytest.fixture(scope="session")
def reference_files(shared_dir: Path) -> dict[str, dict[str, Any]]:
    """Hudi's .avsc files (comments stripped), keyed by the name of the record each defines."""
    files = {}
    for avsc in sorted((shared_dir / "reference" / "avro").glob("*.avsc")):
        schema = json.loads(re.sub(r"/\*.*?\*/", "", avsc.read_text(), flags=re.DOTALL))
        files[schema["name"]] = schema
    return files


@pytest.fixture(scope="session")
def reference_records(reference_files: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every named record of Hudi's .avsc files, including those defined inline, as written there."""
    records: dict[str, dict[str, Any]] = {}
    for schema in reference_files.values():
        _collect_records(schema, records)
    return records


def _standalone(type_: Any, records: dict[str, dict[str, Any]], defined: set[str]) -> Any:
    """Inline each named record at its first use, refer to it by name afterwards."""
    if isinstance(type_, list):
        return [_standalone(branch, records, defined) for branch in type_]
    if isinstance(type_, str):
        return _standalone(records[type_], records, defined) if type_ in records else type_
    kind = type_.get("type")
    if kind == "record":
        if type_["name"] in defined:
            return type_["name"]
        defined.add(type_["name"])
        fields = [{**f, "type": _standalone(f["type"], records, defined)} for f in type_["fields"]]
        return {**type_, "fields": fields}
    if kind == "array":
        return {**type_, "items": _standalone(type_["items"], records, defined)}
    if kind == "map":
        return {**type_, "values": _standalone(type_["values"], records, defined)}
    return type_


@pytest.fixture(scope="session")
def reference_schemas(reference_records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A standalone reference schema for every named record, usable directly with fastavro."""
    schemas = {}
    for name in reference_records:
        schema = _standalone(name, reference_records, set())
        schemas[name] = {**schema, "namespace": "org.apache.hudi.avro.model"}
    return schemas


def _schema_for(member: str) -> str | None:
    path = PurePosixPath(member)
    if path.parts[0] == "__MACOSX" or path.parent.name != ".hoodie":
        return None
    for suffix, schema in SCHEMA_BY_SUFFIX.items():
        if path.name.endswith(suffix):
            return schema
    return None


@pytest.fixture(scope="session")
def v6_metadata_files(
    shared_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Path, str]]:
    """Non-empty Avro timeline files of the real v6 tables, unzipped: file name -> (path, schema name)."""
    out_dir = tmp_path_factory.mktemp("v6_tables")
    found: dict[str, tuple[Path, str]] = {}
    for archive in sorted((shared_dir / "tables").glob("*__v6_*.zip")):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                schema = _schema_for(info.filename)
                if schema is not None and info.file_size > 0:
                    target = Path(zf.extract(info, out_dir / archive.stem))
                    found[f"{archive.stem}/{PurePosixPath(info.filename).name}"] = (target, schema)
    return found
