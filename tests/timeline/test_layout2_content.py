"""Every state file of the Java-written v8/v9 tables of ../shared (data and metadata tables, the
LANCE table's too) re-encodes byte for byte but for the random sync marker, through Hudi 1.x's
schemas (commit metadata through `CommitMetadataSerDeV2`), and no state file is JSON or unknown."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.refdata import more_table_zips, params_or_skip, table_zips, unzip_table

from hudi_assets.avro.container import MAGIC, deserialize_any, serialize_1x
from hudi_assets.avro.schemas import SCHEMAS_1X, java_text
from hudi_assets.storage import Storage
from hudi_assets.table_config import load_table_config
from hudi_assets.timeline.commit_metadata import CommitMetadata
from hudi_assets.timeline.layout import LAYOUT_2, timeline_layout

COMMITS = ("HoodieCommitMetadata", "HoodieReplaceCommitMetadata")


def _with_sync_of(ours: bytes, theirs: bytes) -> bytes:
    """`ours` with the sync marker of `theirs`: a container of one block ends with its marker, which
    the header ends with too; writers draw it at random."""
    return ours.replace(ours[-16:], theirs[-16:])


def _timelines(base: Path) -> list[Path]:
    return [p for p in (base, base / ".hoodie/metadata") if (p / ".hoodie/hoodie.properties").exists()]


@pytest.mark.parametrize("name", params_or_skip(table_zips(8) + table_zips(9) + more_table_zips(),
                                                "v8/v9 tables"))
def test_every_avro_state_file_re_encodes_byte_for_byte(name, tmp_path):
    records = 0
    for base in _timelines(unzip_table(name, tmp_path)):
        storage = Storage(str(base))
        config = load_table_config(storage)
        assert timeline_layout(config) is LAYOUT_2
        timeline = LAYOUT_2.load_active_timeline(storage, config)
        for instant, status in timeline.state_files.items():
            data = timeline.read_details(instant)
            if not data:
                continue
            assert data.startswith(MAGIC), status.path  # no JSON state file in these tables
            record_name, record = deserialize_any(data, status.path, hudi_1x=True)
            assert record_name in SCHEMAS_1X, status.path
            assert _with_sync_of(serialize_1x(record_name, record), data) == data, status.path
            if record_name in COMMITS:
                serde = timeline.commit_metadata_serde
                encoded = serde.serialize(serde.deserialize(data, status.path))
                assert _with_sync_of(encoded, data) == data, status.path
            records += 1
    assert records > 0 or "empty" in name


def test_commit_metadata_of_layout_2_is_written_with_hudi_1x_schemas():
    commit = CommitMetadata(operation_type="UPSERT", extra_metadata={"schema": "{}"})
    data = LAYOUT_2.active_timeline.commit_metadata_serde.serialize(commit)
    assert java_text(SCHEMAS_1X["HoodieCommitMetadata"]).encode() in data
    read = LAYOUT_2.active_timeline.commit_metadata_serde.deserialize(data, "100_200.commit")
    assert (read.operation_type, read.schema, read.partition_to_replace_file_ids) == ("UPSERT", "{}", None)
    replace = CommitMetadata(partition_to_replace_file_ids={"p": ["f1"]})
    data = LAYOUT_2.active_timeline.commit_metadata_serde.serialize(replace)
    assert java_text(SCHEMAS_1X["HoodieReplaceCommitMetadata"]).encode() in data
    read = LAYOUT_2.active_timeline.commit_metadata_serde.deserialize(data, "r")
    assert read.replaced_file_ids == {"p": ["f1"]}
