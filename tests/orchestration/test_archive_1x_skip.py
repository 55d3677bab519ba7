"""archive_batch and merged_archive_files on table versions 8 and 9 (issue 24 item 4): skipped, not
refused, until the LSM history writer lands: their guard says why and nothing is archived."""

from __future__ import annotations

import logging

import pytest

from hudi_assets.orchestration.checks import version_guard
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config

pytestmark = pytest.mark.dagster


class _Context:
    """What the guard uses of a Dagster step's context: its log, here a plain logger to capture."""

    log = logging.getLogger("step")

V9 = {"hoodie.table.name": "t", "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": "9",
      "hoodie.timeline.layout.version": "2", "hoodie.table.format": "native"}


def test_archive_steps_skip_a_version_9_table_saying_why(tmp_path, caplog):
    storage = Storage(str(tmp_path))
    write_table_config(storage, V9)
    before = sorted(s.path for s in storage.list("", recursive=True))
    with caplog.at_level(logging.INFO):
        assert version_guard(_Context(), HoodieTable(storage), "t", "archive") is False
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert skipped and "archive comes with the LSM writer (table version 9)" in skipped[0]
    assert not [r for r in caplog.records if "refused" in r.getMessage()]
    assert sorted(s.path for s in storage.list("", recursive=True)) == before
