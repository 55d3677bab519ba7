"""An archive file is checked after it is written, before any state file is deleted: the bytes read
back, the record count of its blocks and the instants of its first and last blocks."""

from __future__ import annotations

import pytest
from support.builders import TableBuilder, ts

from hudi_assets.archive import ArchiveConfig, HoodieTimelineArchiver
from hudi_assets.avro import java_schema_json
from hudi_assets.clean.config import CleanConfig
from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.logformat.archived import encode_archive_file

SMALL = ArchiveConfig(min_commits=5, max_commits=8, cleaner=CleanConfig())
SCHEMA = java_schema_json("HoodieArchivedMetaEntry")


def _written(tmp_path):
    b = TableBuilder(tmp_path)
    for i in range(30):
        b.commit(ts(i))
    table = b.table()
    records = [{"commitTime": ts(i), "actionType": "commit", "actionState": "COMPLETED", "version": None,
                "stateTransitionTime": ts(i)} for i in range(25)]
    data = encode_archive_file(records, SCHEMA, 10)
    path = ".hoodie/archived/.commits_.archive.1_1-0-1"
    table.storage.write(path, data)
    return HoodieTimelineArchiver(table, SMALL), path, data, [r["commitTime"] for r in records]


def test_what_was_written_passes(tmp_path):
    archiver, path, data, commit_times = _written(tmp_path)
    archiver._verify(path, data, commit_times)


@pytest.mark.parametrize(("change", "message"), [
    (lambda data, times: (data[:-1] + b"\0", times), "differ from the"),
    (lambda data, times: (data, times[:-1]), "hold 25"),
    (lambda data, times: (data, times[1:] + times[:1]), "reads back instants"),
])
def test_any_difference_refuses_before_deleting(tmp_path, change, message):
    archiver, path, data, commit_times = _written(tmp_path)
    expected_data, expected_times = change(data, commit_times)
    with pytest.raises(HudiAssetsError, match=message):
        archiver._verify(path, expected_data, expected_times)
