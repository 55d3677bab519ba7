"""`.hoodie/hoodie.properties`: reading, validating and safely rewriting a table's config.

Writes follow Hudi's `HoodieTableConfig.modify` protocol so that a crash at any step leaves a
readable config: back up, remove, write the new file, then drop the backup. Readers fall back to
the backup while the main file is missing or fails its checksum.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from hudi_assets.exceptions import CorruptFileError, TableNotFoundError, UnsupportedTableError
from hudi_assets.properties import format_properties, parse_properties
from hudi_assets.storage import Storage

METAFOLDER = ".hoodie"
PROPERTIES_FILE = f"{METAFOLDER}/hoodie.properties"
BACKUP_FILE = f"{METAFOLDER}/hoodie.properties.backup"
# hoodie.table.version -> the timeline layout versions a table of it may have (Hudi's HoodieTableVersion:
# 5/6 are Hudi 0.12-0.15 with layout 1 (0 before 0.5.1); 8 and 9 are Hudi 1.0 and 1.1 with layout 2).
SUPPORTED_TABLE_VERSIONS = {5: (0, 1), 6: (0, 1), 8: (2,), 9: (2,)}
FIRST_LAYOUT_2_TABLE_VERSION = 8  # HoodieTableVersion.EIGHT.getTimelineLayoutVersion() is 2
# Table service -> the table versions it runs on; on the others a table is read only. Hudi 1.x tables
# (versions 8, 9) get each service as it is built for them.
_HUDI_0X = (5, 6)
SERVICE_TABLE_VERSIONS: dict[str, tuple[int, ...]] = {
    "clean": (*_HUDI_0X, 8, 9),
    "rollback": (*_HUDI_0X, 8, 9),
    "archive": (*_HUDI_0X, 8, 9),
    "metadata table services": (*_HUDI_0X, 8, 9),
    "orphan-file repair": (*_HUDI_0X, 8, 9),
    "savepoint": (*_HUDI_0X, 8, 9),
}

COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"

_INTEGER_KEYS = ("hoodie.table.version", "hoodie.timeline.layout.version")
# Keys Hudi reads with an enum's `valueOf`: any other value fails there, and guessing (a MOR table
# read as copy-on-write) would clean the wrong files.
_ENUM_KEYS = {
    "hoodie.table.type": (COPY_ON_WRITE, MERGE_ON_READ),
    "hoodie.table.base.file.format": ("PARQUET", "HFILE", "ORC", "LANCE"),
    "hoodie.table.timeline.timezone": ("LOCAL", "UTC"),
}


def table_checksum(database: str, table: str) -> int:
    """Hudi's `hoodie.table.checksum`: CRC32 of the UTF-8 text `<database>.<table>`."""
    return zlib.crc32(f"{database}.{table}".encode())


def _has_valid_checksum(props: Mapping[str, str]) -> bool:
    stored = props.get("hoodie.table.checksum")
    if stored is None or "hoodie.table.name" not in props:
        return stored is None
    return stored == str(table_checksum(props.get("hoodie.database.name", ""), props["hoodie.table.name"]))


@dataclass(frozen=True)
class TableConfig:
    """The table's properties, with typed access to the keys maintenance depends on."""

    props: dict[str, str]

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.props.get(key, default)

    @property
    def name(self) -> str:
        return self.props.get("hoodie.table.name", "")

    @property
    def database(self) -> str:
        return self.props.get("hoodie.database.name", "")

    @property
    def table_type(self) -> str:
        return self.props.get("hoodie.table.type", COPY_ON_WRITE).upper()

    @property
    def is_mor(self) -> bool:
        return self.table_type == MERGE_ON_READ

    @property
    def table_version(self) -> int:
        return int(self.props.get("hoodie.table.version", "0"))

    @property
    def timeline_layout_version(self) -> int:
        """`hoodie.timeline.layout.version`, or, where a table does not say, the layout its
        `hoodie.table.version` is written with (Hudi's HoodieTableVersion -> layout)."""
        declared = self.props.get("hoodie.timeline.layout.version")
        if declared is not None:
            return int(declared)
        return 2 if self.table_version >= FIRST_LAYOUT_2_TABLE_VERSION else 1

    @property
    def archive_folder(self) -> str:
        """Archive directory relative to the base path (Hudi: empty value means `.hoodie` itself)."""
        folder = self.props.get("hoodie.archivelog.folder", "archived")
        return f".hoodie/{folder}" if folder else ".hoodie"

    @property
    def partition_fields(self) -> list[str]:
        value = self.props.get("hoodie.table.partition.fields", "")
        return [f for f in value.split(",") if f]

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_fields)

    @property
    def hive_style_partitioning(self) -> bool:
        return self.props.get("hoodie.datasource.write.hive_style_partitioning", "false") == "true"

    @property
    def base_file_format(self) -> str:
        return self.props.get("hoodie.table.base.file.format", "PARQUET").upper()

    @property
    def base_file_extension(self) -> str:
        return "." + self.base_file_format.lower()

    @property
    def metadata_partitions(self) -> list[str]:
        value = self.props.get("hoodie.table.metadata.partitions", "")
        return [p for p in value.split(",") if p]

    @property
    def has_metadata_table(self) -> bool:
        return bool(self.metadata_partitions)

    @property
    def timeline_timezone(self) -> str:
        return self.props.get("hoodie.table.timeline.timezone", "LOCAL").upper()

    @property
    def bootstrap_base_path(self) -> str | None:
        return self.props.get("hoodie.bootstrap.base.path")

    @property
    def is_hudi_1x(self) -> bool:
        """Table version 8 or 9 (Hudi 1.0, 1.1): what its services write differs, not only its layout."""
        return self.table_version >= FIRST_LAYOUT_2_TABLE_VERSION

    @property
    def table_format(self) -> str:
        """`hoodie.table.format` (Hudi 1.x): `native` unless another table format owns the timeline."""
        return self.props.get("hoodie.table.format", "native")

    def check_supported(self, where: str) -> None:
        """The version gate: refuse, before anything else is read, a table whose files we cannot read
        (table versions other than 5, 6, 8 and 9, a layout that is not its version's, base files
        of a format we do not read, a timeline another table format owns)."""
        version = self.table_version
        layouts = SUPPORTED_TABLE_VERSIONS.get(version)
        if layouts is None:
            newer = " (newer than Hudi 1.1)" if version > max(SUPPORTED_TABLE_VERSIONS) else ""
            raise UnsupportedTableError(
                f"{where}: table version {version}{newer} is not supported; hudi-assets reads table "
                f"versions {', '.join(map(str, SUPPORTED_TABLE_VERSIONS))} (Hudi 0.12-0.15, 1.0, 1.1)")
        layout = self.timeline_layout_version
        if layout not in layouts:
            raise UnsupportedTableError(
                f"{where}: timeline layout version {layout} does not belong to table version {version} "
                f"(it has layout {' or '.join(map(str, layouts))}): a partial upgrade or downgrade?")
        if self.base_file_format == "LANCE":
            raise UnsupportedTableError(f"{where}: base file format LANCE is not supported")
        if self.table_format != "native":
            raise UnsupportedTableError(
                f"{where}: hoodie.table.format={self.table_format} is not supported (native only)")

    def check_service(self, service: str, where: str) -> None:
        """Refuse a table service on a table version it is not built for yet (`SERVICE_TABLE_VERSIONS`;
        a service not listed runs on Hudi 0.x's versions only). Base files we do not read (LANCE)
        are refused earlier, when the table is opened (`check_supported`)."""
        versions = SERVICE_TABLE_VERSIONS.get(service, _HUDI_0X)
        if self.table_version not in versions:
            raise UnsupportedTableError(
                f"{where}: {service} of table version {self.table_version} (Hudi 1.x) is not supported "
                f"yet; hudi-assets runs it on table versions "
                f"{', '.join(map(str, versions))} and only reads newer tables")


def _check_values(props: Mapping[str, str], where: str) -> None:
    """Refuse values the typed accessors of `TableConfig` could not read, naming file and key.
    Integers as Java's `Integer.parseInt` reads them (Hudi's `getInt`): no surrounding blanks."""
    for key in _INTEGER_KEYS:
        value = props.get(key)
        if value is not None and not re.fullmatch(r"[+-]?[0-9]+", value):
            raise CorruptFileError(where, f"{key}={value!r} is not an integer")
    for key, allowed in _ENUM_KEYS.items():
        value = props.get(key)
        if value is not None and value.upper() not in allowed:
            raise CorruptFileError(where, f"{key}={value!r} is not one of {', '.join(allowed)}")


def _read_props(storage: Storage, rel: str) -> dict[str, str] | None:
    if not storage.exists(rel):
        return None
    try:
        text = storage.read(rel).decode("latin-1")
    except OSError as exc:
        raise CorruptFileError(storage.uri(rel), f"cannot be read: {exc}") from exc
    return parse_properties(text)


def load_table_config(storage: Storage) -> TableConfig:
    """Read `hoodie.properties`, falling back to the backup as Hudi does after a torn rewrite."""
    if not storage.exists(""):
        raise TableNotFoundError(f"{storage.base_uri}: base path does not exist")
    source = PROPERTIES_FILE
    props = _read_props(storage, PROPERTIES_FILE)
    if props is None or not _has_valid_checksum(props):
        backup = _read_props(storage, BACKUP_FILE)
        if backup is not None and _has_valid_checksum(backup):
            source, props = BACKUP_FILE, backup
    if props is None:
        raise TableNotFoundError(
            f"{storage.uri(PROPERTIES_FILE)}: missing; {storage.base_uri} is not a Hudi table"
        )
    if "hoodie.table.name" not in props:
        raise CorruptFileError(storage.uri(source), "has no hoodie.table.name")
    _check_values(props, storage.uri(source))
    return TableConfig(props)


def _render(props: Mapping[str, str]) -> bytes:
    ordered = {k: v for k, v in props.items() if k != "hoodie.table.checksum"}
    ordered["hoodie.table.checksum"] = str(
        table_checksum(ordered.get("hoodie.database.name", ""), ordered["hoodie.table.name"])
    )
    now = datetime.now(UTC)
    comments = [f"Properties saved on {now.isoformat().replace('+00:00', 'Z')}",
                now.strftime("%a %b %d %H:%M:%S UTC %Y")]
    return format_properties(ordered, comments).encode("latin-1", "backslashreplace")


def write_table_config(storage: Storage, props: Mapping[str, str]) -> TableConfig:
    """Write a table's config with a fresh checksum, crash-safely (backup, replace, drop backup)."""
    if storage.exists(PROPERTIES_FILE):
        current = _read_props(storage, PROPERTIES_FILE)
        if current is not None and _has_valid_checksum(current):
            storage.write(BACKUP_FILE, _render(current))
    storage.write(PROPERTIES_FILE, _render(props))
    storage.delete_many([BACKUP_FILE])
    return load_table_config(storage)
