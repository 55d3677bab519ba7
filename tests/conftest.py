"""Session fixtures over the reference data in ../shared (see refdata.py), and hand-built tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.builders import TableBuilder
from support.refdata import table_zips, unzip_table


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


@pytest.fixture
def immutable():
    """`immutable(path)`: make a file undeletable until the test ends, even by root (`chattr +i`: a
    real EPERM from the file system); skips the test where the attribute is not available."""
    import subprocess

    made: list[Path] = []

    def make(path: Path) -> Path:
        if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not available on this file system")
        made.append(path)
        return path

    yield make
    for path in made:
        if path.exists():
            subprocess.run(["chattr", "-i", str(path)], check=True)
