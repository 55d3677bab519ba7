"""On a demo table written as Spark writes it: a failed write's copy of a committed base file makes a
listing reader see every row twice; quarantine removes the duplicates for it while hudi-rs (which
reads through the timeline) reads the same rows before and after, and undo restores every byte."""

from __future__ import annotations

import shutil

import pyarrow.dataset as ds
import pytest

from hudi_assets.fsview import parse_base_file_name
from hudi_assets.table import HoodieTable
from tests.repair.test_orphans import repair, snapshot
from tests.support.builders import demo_table


def hudi_rs_keys(base) -> list[str]:
    hudi = pytest.importorskip("hudi")
    batches = hudi.HudiTable(str(base)).read()
    return sorted(k for b in batches for k in b.column("_hoodie_record_key").to_pylist())


def listing_keys(base) -> list[str]:
    """What a reader that lists storage sees: every parquet file in the partition directories."""
    files = [str(p) for p in base.rglob("*.parquet") if ".hoodie" not in p.parts]
    return sorted(ds.dataset(files, format="parquet").to_table(columns=["_hoodie_record_key"])
                  .column(0).to_pylist())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_quarantine_hides_a_failed_writes_duplicates_from_listing_readers(tmp_path, table_type):
    base = demo_table(tmp_path / "t", table_type, partitions=2, commits=6)
    table = HoodieTable(str(base))
    latest = table.active_timeline.filter_completed().last().timestamp
    source = max((p for p in base.rglob("*.parquet") if ".hoodie" not in p.parts),
                 key=lambda p: parse_base_file_name(p.name)[2])
    listed = listing_keys(base)  # older file versions included: the table was never cleaned
    failed = str(int(latest) + 1000)  # a write after the last commit, rolled back and archived
    copy = source.with_name(f"{parse_base_file_name(source.name)[0]}_9-9-9_{failed}.parquet")
    shutil.copyfile(source, copy)
    rows = hudi_rs_keys(base)
    assert len(listing_keys(base)) > len(listed)  # the copy's rows, duplicates for a listing reader
    before = snapshot(base)

    done = repair(table).quarantine()
    assert [o.path for o in done.orphans] == [str(copy.relative_to(base))]
    assert hudi_rs_keys(base) == rows
    assert listing_keys(base) == listed

    repair(HoodieTable(str(base))).undo(done.run)
    assert snapshot(base) == before
    assert hudi_rs_keys(base) == rows
