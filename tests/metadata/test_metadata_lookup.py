"""Keyed reads of the `files` partition (what planning from the metadata table uses) on the
Java-written metadata tables of the real v8/v9 tables: the same view as the full read, and the same
files as storage, partition by partition."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support.refdata import params_or_skip, table_zips, unzip_table

from hudi_assets.exceptions import CorruptFileError, HudiInputError
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.keys import FILES
from hudi_assets.metadata.table import listing_metadata_table
from hudi_assets.metadata.validate import validate_files
from hudi_assets.storage import Storage
from hudi_assets.table_config import load_table_config

WITH_MDT = [name for name in table_zips(8) if name.endswith("v8_trips_8i3u1d")] + table_zips(9)
WITHOUT_MDT = [name for name in table_zips(8) if not name.endswith("v8_trips_8i3u1d")]


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT, "v8/v9 tables with a metadata table"))
def test_keyed_reads_match_the_full_read_and_storage(name, tmp_path):
    base = unzip_table(name, tmp_path)
    metadata = MetadataTable(str(base))
    full = metadata.files_listing.partitions
    partitions = metadata.partition_paths()
    assert sorted(partitions) == sorted(full)
    assert metadata.files_in_partitions(partitions) == full
    first = partitions[0]
    assert metadata.files_in_partitions([first, "no/such/partition"]) == {
        first: full[first], "no/such/partition": {}}
    # Partition by partition, the listing agrees with the data files on storage.
    for partition in partitions:
        assert validate_files(metadata, [partition]) == []


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT, "v8/v9 tables with a metadata table"))
def test_a_subset_check_sees_drift_in_its_partitions_only(name, tmp_path):
    base = unzip_table(name, tmp_path)
    metadata = MetadataTable(str(base))
    listing = metadata.files_listing.partitions
    partition, victim = next((p, f) for p, files in sorted(listing.items()) for f in sorted(files)
                             if not f.startswith("."))
    (base / partition / victim).unlink()
    found = validate_files(metadata, [partition])
    assert [(d.partition, d.file) for d in found] == [(partition, victim)]
    assert "listed" in found[0].problem and "not on storage" in found[0].problem
    assert validate_files(metadata, exclude=[partition]) == []
    others = [p for p in listing if p != partition]
    assert validate_files(metadata, others) == []


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT, "v8/v9 tables with a metadata table"))
def test_a_corrupt_files_partition_names_the_file(name, tmp_path):
    base = unzip_table(name, tmp_path)
    files = base / ".hoodie" / "metadata" / FILES
    hfiles = sorted(files.glob("*.hfile"))
    if not hfiles:
        pytest.skip(f"{name}: the files partition has no base file")
    hfiles[-1].write_bytes(hfiles[-1].read_bytes()[:100])
    with pytest.raises(CorruptFileError) as caught:
        MetadataTable(str(base)).partition_paths()
    assert hfiles[-1].name in str(caught.value)


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT, "v8/v9 tables with a metadata table"))
def test_listing_source_follows_metadata_enable(name, tmp_path):
    base = unzip_table(name, tmp_path)
    storage = Storage(str(base))
    config = load_table_config(storage)
    assert listing_metadata_table(storage, config, enabled=False) is None
    assert isinstance(listing_metadata_table(storage, config, enabled=True), MetadataTable)
    # The table says it has one, but it is gone: an error naming what is missing, not a fallback.
    (base / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").unlink()
    with pytest.raises(HudiInputError, match=r"\.hoodie/metadata/\.hoodie/hoodie\.properties"):
        listing_metadata_table(storage, config, enabled=True)


@pytest.mark.parametrize("name", params_or_skip(WITHOUT_MDT, "v8 tables without a metadata table"))
def test_tables_without_a_metadata_table_list_storage(name, tmp_path):
    base = unzip_table(name, tmp_path)
    storage = Storage(str(base))
    assert listing_metadata_table(storage, load_table_config(storage), enabled=True) is None


@pytest.mark.parametrize("name", params_or_skip(WITH_MDT, "v8/v9 tables with a metadata table"))
def test_the_generated_decoder_reads_java_written_records_as_fastavro_does(name, tmp_path):
    metadata = MetadataTable(str(unzip_table(name, tmp_path)))
    keyed = [file for opened in metadata._files_lookup._slices
             for file in [opened.base, *opened.logs] if file is not None and not isinstance(file, frozenset)]
    assert keyed and all(file.decode is not None for file in keyed)  # no silent fallback
    for file in keyed:
        for row, _ in file.reader.entries():
            key = row.decode()
            assert file.record(key) == replace(file, decode=None).record(key)
