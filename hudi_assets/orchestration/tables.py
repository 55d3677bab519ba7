"""Who a table is in Dagster: its asset keys, group, pool, owners, tags and definition metadata.

`HudiTranslator` is the one place that names things (in the spirit of dagster-dbt's translator):
subclass it to change the key layout, groups, owners or tags.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import dagster as dg

from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.orchestration.checks import settings_in_force
from hudi_assets.orchestration.resources import HudiTableRegistry

DEFAULT_DATABASE = "default"
TABLE_TAG = "hudi/table"
DRY_RUN_TAG = "hudi/dry_run"


@dataclass(frozen=True)
class HudiTableSpec:
    """A registered table as read when the definitions load."""

    key: str  # the registry's key: the base path's last folder
    base_path: str
    database: str = DEFAULT_DATABASE  # hoodie.database.name, else "default"
    table_name: str = ""  # hoodie.table.name
    table_type: str = ""
    settings: Mapping[str, str] = field(default_factory=dict)  # retention settings in force
    error: str = ""  # why hoodie.properties could not be read (the run will say it again)


def describe_tables(registry: HudiTableRegistry) -> list[HudiTableSpec]:
    """One spec per registered table; a table that cannot be read still gets its assets, so that its
    runs fail with the reason rather than the whole code location failing to load."""
    specs = []
    for key, base_path in registry.tables().items():
        try:
            table = registry.open_path(base_path)
            settings = settings_in_force(table.write_config)
            specs.append(HudiTableSpec(key, base_path, table.config.database or DEFAULT_DATABASE,
                                       table.config.name, table.config.table_type, settings))
        except HudiAssetsError as error:
            specs.append(HudiTableSpec(key, base_path, error=str(error)))
    return specs


def _name(text: str) -> str:
    """A Dagster name (letters, digits, underscores) for a database or folder name."""
    return re.sub(r"[^A-Za-z0-9_]", "_", text) or "_"


class HudiTranslator:
    """Asset keys `hudi/<database>/<table>/<step>`, one group per database, one pool per table."""

    def __init__(self, owners: Sequence[str] = (), tags: Mapping[str, str] | None = None):
        self.owners = list(owners)
        self.tags = dict(tags or {})

    def key_prefix(self, table: HudiTableSpec) -> list[str]:
        return ["hudi", _name(table.database), _name(table.key)]

    def group_name(self, table: HudiTableSpec) -> str:
        return _name(table.database)

    def pool(self, table: HudiTableSpec) -> str:
        """The table's steps claim this pool (Spark steps claim the Spark pool instead): with run-granular
        pools of limit 1 (see `instance`) a run holds it from start to end, so runs of one table queue."""
        return f"hudi_table/{table.database}.{table.key}"

    def job_name(self, table: HudiTableSpec) -> str:
        return f"hudi_maintenance__{_name(table.database)}__{_name(table.key)}"

    def asset_tags(self, table: HudiTableSpec) -> dict[str, str]:
        kind = {"COPY_ON_WRITE": "cow", "MERGE_ON_READ": "mor"}.get(table.table_type, "unknown")
        return {**self.tags, "hudi/table_type": kind}

    def metadata(self, table: HudiTableSpec) -> dict[str, object]:
        """Definition metadata: the table's identity and the settings in force when the code loaded
        (settings are shown, never plotted: they are not measurements)."""
        name = table.table_name or table.key
        values: dict[str, object] = {"dagster/table_name": f"{table.database}.{name}",
                                     "dagster/uri": table.base_path,
                                     **{f"setting/{k}": str(v) for k, v in table.settings.items()}}
        if table.error:
            values["load_error"] = table.error
        return values

    def run_tags(self, table: HudiTableSpec, registry: HudiTableRegistry) -> dict[str, str]:
        tags = {TABLE_TAG: table.key}
        if registry.dry_run:
            tags[DRY_RUN_TAG] = "true"
        return tags


def asset_key(prefix: Sequence[str], step: str) -> dg.AssetKey:
    return dg.AssetKey([*prefix, step])
