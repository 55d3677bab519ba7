"""Fixtures of the rollback tests: demo tables with a failed write, Hudi's rollback schemas."""

from __future__ import annotations

import pytest
from support.failed_tables import DemoTable, make_failed_table
from support.failed_tables import rollback_schemas as load_rollback_schemas


@pytest.fixture
def failed_table(tmp_path):
    def make(table_type: str = "COPY_ON_WRITE", layout: str = "timeline_server") -> DemoTable:
        return make_failed_table(tmp_path / f"{table_type}-{layout}", table_type, layout)
    return make


@pytest.fixture(scope="session")
def rollback_schemas() -> dict[str, dict]:
    return load_rollback_schemas()
