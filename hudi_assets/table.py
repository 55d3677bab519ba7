"""`HoodieTable`: a table's storage, config and active timeline (Hudi's HoodieTableMetaClient)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

from hudi_assets.storage import Storage
from hudi_assets.table_config import TableConfig, load_table_config
from hudi_assets.timeline.timeline import METAFOLDER, ActiveTimeline


class HoodieTable:
    """Opens a table and refuses it before any work if its version or layout is not supported."""

    def __init__(self, base_path: str | Storage, storage_options: Mapping[str, str] | None = None):
        self.storage = base_path if isinstance(base_path, Storage) else Storage(base_path, storage_options)
        self.config: TableConfig = load_table_config(self.storage)
        self.config.check_supported(self.storage.uri(f"{METAFOLDER}/hoodie.properties"))

    @property
    def base_path(self) -> str:
        return self.storage.base_uri

    @property
    def is_mor(self) -> bool:
        return self.config.is_mor

    @cached_property
    def active_timeline(self) -> ActiveTimeline:
        return ActiveTimeline.load(self.storage)

    def reload_timeline(self) -> ActiveTimeline:
        self.__dict__.pop("active_timeline", None)
        return self.active_timeline

    def __repr__(self) -> str:
        return f"HoodieTable({self.config.name!r}, {self.config.table_type}, {self.base_path!r})"
