"""A small table for the lock provider tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.builders import TableBuilder, ts

from hudi_assets.demo import generate_table
from hudi_assets.storage import Storage


@pytest.fixture
def base(tmp_path) -> Path:
    b = TableBuilder(tmp_path)
    for i in range(3):
        b.commit(ts(i))
    return tmp_path


@pytest.fixture
def demo_base(tmp_path) -> Path:
    """A demo table with files for a clean to delete once 3 commits are retained."""
    generate_table(Storage(str(tmp_path)), "COPY_ON_WRITE", name="t", partitions=2, commits=8,
                   files_per_partition=2, records_per_file=3, update_fraction=0.5, bloom_entries=100, seed=5)
    return tmp_path
