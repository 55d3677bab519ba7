"""hoodie.properties: Java properties escaping, checksums, backups, and refusal of other versions."""

from __future__ import annotations

import pytest
from support.refdata import params_or_skip, table_zips

from hudi_assets.exceptions import TableNotFoundError, UnsupportedTableError
from hudi_assets.properties import format_properties, parse_properties
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import (
    BACKUP_FILE,
    PROPERTIES_FILE,
    SERVICE_TABLE_VERSIONS,
    SUPPORTED_TABLE_VERSIONS,
    TableConfig,
    load_table_config,
    table_checksum,
    write_table_config,
)


def test_java_properties_escapes_round_trip():
    text = "# c\n! c2\nk1=a\\:b\nk2 : v2\nk3 v3\n  k4=multi \\\n   line\nk\\ 5=\\u00e9\\t\n"
    props = parse_properties(text)
    assert props == {"k1": "a:b", "k2": "v2", "k3": "v3", "k4": "multi line", "k 5": "é\t"}
    assert parse_properties(format_properties(props)) == props
    assert "k1=a\\:b" in format_properties(props)


@pytest.mark.parametrize("name", params_or_skip(table_zips(6), "v6 tables"))
def test_real_v6_configs_load_with_valid_checksum(real_tables, name):
    storage = Storage(str(real_tables[name]))
    config = load_table_config(storage)
    assert config.table_version == 6
    assert config.get("hoodie.table.checksum") == str(table_checksum(config.database, config.name))
    assert config.table_type in ("COPY_ON_WRITE", "MERGE_ON_READ")


@pytest.mark.parametrize("name", params_or_skip(table_zips(8) + table_zips(9), "v8/v9 tables"))
def test_v8_v9_tables_open_and_the_archive_plans_without_writing(real_tables, name):
    """The archive (Hudi 1.x's TimelineArchiverV2) plans on every table (savepoints on them:
    tests/savepoint)."""
    base = real_tables[name]
    before = sorted(p.relative_to(base) for p in base.rglob("*"))
    table = HoodieTable(str(base))
    assert table.config.table_version in (8, 9)
    assert table.maintenance.archive(dry_run=True).dry_run
    assert sorted(p.relative_to(base) for p in base.rglob("*")) == before


def test_rewrite_keeps_checksum_and_recovers_from_backup(tmp_path):
    storage = Storage(str(tmp_path))
    props = {"hoodie.table.name": "t", "hoodie.database.name": "db", "hoodie.table.version": "6",
             "hoodie.table.create.schema": '{"a":1}'}
    config = write_table_config(storage, props)
    assert config.get("hoodie.table.checksum") == str(table_checksum("db", "t"))
    assert config.get("hoodie.table.create.schema") == '{"a":1}'
    assert not storage.exists(BACKUP_FILE)
    # A crash between "backup written" and "new file written": readers take the backup.
    storage.write(BACKUP_FILE, storage.read(PROPERTIES_FILE))
    storage.delete_many([PROPERTIES_FILE])
    assert load_table_config(storage).name == "t"


def test_missing_table_and_missing_properties(tmp_path):
    with pytest.raises(TableNotFoundError, match="does not exist"):
        HoodieTable(str(tmp_path / "nope"))
    (tmp_path / ".hoodie").mkdir()
    with pytest.raises(TableNotFoundError, match=r"hoodie\.properties: missing"):
        HoodieTable(str(tmp_path))


@pytest.mark.parametrize(("props", "layout"), [
    ({"hoodie.table.version": "6"}, 1), ({"hoodie.table.version": "9"}, 2),
    ({"hoodie.table.version": "6", "hoodie.timeline.layout.version": "0"}, 0),
])
def test_the_layout_version_is_the_declared_one_else_the_table_versions(props, layout):
    """One derivation serves the version gate and the layout factory."""
    assert TableConfig(props).timeline_layout_version == layout


def test_the_service_gate_is_per_service():
    """Each service runs on the table versions `SERVICE_TABLE_VERSIONS` gives it and is refused on the
    other readable versions, naming the versions it runs on; a service not listed runs on Hudi 0.x's
    versions only (every service built so far runs on 1.x tables too)."""
    services = {**SERVICE_TABLE_VERSIONS, "a service not built for 1.x": (5, 6)}
    for service, versions in services.items():
        for version in SUPPORTED_TABLE_VERSIONS:
            config = TableConfig({"hoodie.table.version": str(version)})
            if version in versions:
                config.check_service(service, "props")
                continue
            refusal = (rf"props: {service} of table version {version} \(Hudi 1.x\) is not supported yet; "
                       r"hudi-assets runs it on table versions 5, 6 and")
            with pytest.raises(UnsupportedTableError, match=refusal):
                config.check_service(service, "props")
    assert all(8 in v and 9 in v for v in SERVICE_TABLE_VERSIONS.values())
