"""`HoodieTable`: a table's storage, config, settings, timeline layout and active timeline (Hudi's
HoodieTableMetaClient), and the entry point of the Python API (`table.maintenance`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from hudi_assets.config import API_NAMES, SettingNames, WriteConfig
from hudi_assets.config_options import MAX_EXPECTED_CLOCK_SKEW_MS
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.storage import Storage
from hudi_assets.table_config import TableConfig, load_table_config
from hudi_assets.timeline.layout import TimelineLayout, timeline_layout
from hudi_assets.timeline.timeline import METAFOLDER, ActiveTimeline

if TYPE_CHECKING:
    from hudi_assets.maintenance import TableMaintenance

INDEX_DEFINITIONS = ".hoodie/.index_defs/index.json"  # where Hudi 1.x keeps them by default
METADATA_TABLE_FOLDER = f"{METAFOLDER}/metadata"  # a data table's metadata table, below its base path


class HoodieTable:
    """Opens a table and refuses it before any work if its version or layout is not supported.

    Settings, lowest precedence first: the table's `hoodie.properties`, `props_file`, `hoodie_conf`
    (as Hudi's utilities take `--props` and `--hoodie-conf`); `write_config` is their merge, from
    which every service's config derives. `hoodie_conf` values may be text, numbers or booleans;
    `conf_names` is what messages call the two sources (the API's parameter names unless a face says).
    """

    def __init__(self, base_path: str | Storage, storage_options: Mapping[str, str] | None = None, *,
                 hoodie_conf: Mapping[str, object] | None = None, props_file: str | None = None,
                 conf_names: SettingNames = API_NAMES):
        self.storage = base_path if isinstance(base_path, Storage) else Storage(base_path, storage_options)
        self.config: TableConfig = load_table_config(self.storage)
        self.config.check_supported(self.storage.uri(f"{METAFOLDER}/hoodie.properties"))
        self.write_config = WriteConfig.load(self.config.props, props_file, hoodie_conf or {},
                                             names=conf_names)

    @property
    def base_path(self) -> str:
        return self.storage.base_uri

    @property
    def is_mor(self) -> bool:
        return self.config.is_mor

    @property
    def is_metadata_table(self) -> bool:
        """Whether this is a data table's metadata table (Hudi's `HoodieTableMetadata.isMetadataTable`:
        by where it lives)."""
        return self.base_path.rstrip("/").endswith(f"/{METADATA_TABLE_FOLDER}")

    @cached_property
    def timeline_layout(self) -> TimelineLayout:
        """How this table's timeline is named, placed and encoded (resolved once)."""
        return timeline_layout(self.config)

    @cached_property
    def active_timeline(self) -> ActiveTimeline:
        """Its completion times wait out this table's allowed clock skew, as every instant time made
        here allows for it."""
        timeline = self.timeline_layout.load_active_timeline(self.storage, self.config)
        timeline.clock_skew_ms = self.clock_skew_ms
        return timeline

    @property
    def clock_skew_ms(self) -> int:
        """The clock skew this table's writers allow for, which every instant and completion time made
        for it (and for its metadata table) waits out."""
        return self.write_config.get(MAX_EXPECTED_CLOCK_SKEW_MS)

    @property
    def timeline(self) -> ActiveTimeline:
        """The active timeline (read once; `reload_timeline` reads it again)."""
        return self.active_timeline

    @cached_property
    def index_definitions(self) -> dict[str, dict[str, Any]]:
        """The table's index definitions (Hudi 1.x `hoodie.table.index.defs.path`), by index name,
        read once as Hudi's meta client reads its index metadata; none when there is no such file."""
        rel = self.config.get("hoodie.table.index.defs.path") or INDEX_DEFINITIONS
        if not self.storage.exists(rel):
            return {}
        try:
            definitions = json.loads(self.storage.read(rel)).get("indexDefinitions") or {}
        except (ValueError, AttributeError) as exc:
            raise CorruptFileError(self.storage.uri(rel), f"is not JSON of index definitions: {exc}") from exc
        if not isinstance(definitions, dict):
            raise CorruptFileError(self.storage.uri(rel), "indexDefinitions is not an object")
        return definitions

    @cached_property
    def maintenance(self) -> TableMaintenance:
        from hudi_assets.maintenance import TableMaintenance

        return TableMaintenance(self)

    def reload_timeline(self) -> ActiveTimeline:
        self.forget_timeline()
        return self.active_timeline

    def forget_timeline(self) -> None:
        """The timeline is read again when next used (after a service changed it, without paying for
        a read no one may need)."""
        self.__dict__.pop("active_timeline", None)

    def __repr__(self) -> str:
        return f"HoodieTable({self.config.name!r}, {self.config.table_type}, {self.base_path!r})"
