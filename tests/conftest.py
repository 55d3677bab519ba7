"""Session fixtures over the reference data in ../shared (see refdata.py), and hand-built tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import TableBuilder
from refdata import table_zips, unzip_table


def pytest_addoption(parser):
    parser.addoption("--soak-seconds", type=float, default=30.0,
                     help="how long the live writer of test_live_writer.py commits, per table type")


@pytest.fixture(scope="session")
def real_tables(tmp_path_factory) -> dict[str, Path]:
    """Every real table of ../shared/tables unzipped once per session, by zip name."""
    root = tmp_path_factory.mktemp("real_tables")
    return {name: unzip_table(name, root / name) for name in table_zips(6) + table_zips(8) + table_zips(9)}


@pytest.fixture
def builder(tmp_path):
    """`builder(table_type, partitioned, **props)`: a new hand-built table at tmp_path/t."""
    def make(table_type: str = "COPY_ON_WRITE", partitioned: bool = True, **props: str) -> TableBuilder:
        return TableBuilder(tmp_path / "t", table_type, partitioned, props)
    return make
