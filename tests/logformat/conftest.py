"""Fixtures for the log-format tests: reference data from `shared/` beside the project root."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastavro.repository.base import AbstractSchemaRepository
from fastavro.schema import load_schema

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
ARCHIVED_META_ENTRY = "org.apache.hudi.avro.model.HoodieArchivedMetaEntry"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared reference data not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def log_file(shared_dir: Path) -> Callable[[str], tuple[str, bytes]]:
    """(name, bytes) of the single real log file in `reference/log_files/valid_log_<kind>/`."""

    def load(kind: str) -> tuple[str, bytes]:
        (path,) = (shared_dir / "reference" / "log_files" / f"valid_log_{kind}").iterdir()
        return path.name, path.read_bytes()

    return load


@pytest.fixture(scope="session")
def archived_entry_schema(shared_dir: Path) -> str:
    """HoodieArchivedMetaEntry as one self-contained schema JSON, the shape of Java's `Schema.toString()`.

    The reference `.avsc` files carry `/* */` comments and refer to each other's named types, so they
    are loaded together and the first use of each named type is inlined.
    """
    definitions: dict[str, Any] = {}
    for path in (shared_dir / "reference" / "avro").glob("*.avsc"):
        text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.DOTALL)
        _collect_named_types(json.loads(text), "", definitions)
    schema = load_schema(ARCHIVED_META_ENTRY, repo=_Definitions(definitions))
    return json.dumps(_without_fastavro_marks(schema), separators=(",", ":"))


class _Definitions(AbstractSchemaRepository):
    def __init__(self, definitions: dict[str, Any]):
        self.definitions = definitions

    def load(self, name: str) -> Any:
        return self.definitions[name]


def _collect_named_types(schema: Any, namespace: str, into: dict[str, Any]) -> None:
    if isinstance(schema, list):
        for branch in schema:
            _collect_named_types(branch, namespace, into)
    elif isinstance(schema, dict):
        if schema.get("type") in ("record", "enum", "fixed"):
            namespace = schema.get("namespace", namespace)
            name = schema["name"]
            into.setdefault(name if "." in name else f"{namespace}.{name}", schema)
            for field in schema.get("fields", []):
                _collect_named_types(field["type"], namespace, into)
        for key in ("items", "values"):
            _collect_named_types(schema.get(key), namespace, into)
        if isinstance(schema.get("type"), dict | list):
            _collect_named_types(schema["type"], namespace, into)


def _without_fastavro_marks(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_fastavro_marks(v) for k, v in schema.items() if not k.startswith("__")}
    if isinstance(schema, list):
        return [_without_fastavro_marks(item) for item in schema]
    return schema
