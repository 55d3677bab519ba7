"""Who a table is in Dagster: its asset keys, group, pool, owners, runbook, tags and definition metadata.

`HudiTranslator` is the one place that names things (in the spirit of dagster-dbt's translator):
subclass it to change the key layout, groups, owners or tags.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import dagster as dg

from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.orchestration.resources import HudiTableRegistry

DEFAULT_DATABASE = "default"
TABLE_TAG = "hudi/table"
DRY_RUN_TAG = "hudi/dry_run"
DATABASE_TAG = "hudi/database"
RUNBOOK = "runbook"


@dataclass(frozen=True)
class HudiTableSpec:
    """A registered table as read when the definitions load."""

    key: str  # the registry's key: the base path's last folder
    base_path: str
    database: str = DEFAULT_DATABASE  # hoodie.database.name, else "default"
    table_name: str = ""  # hoodie.table.name
    table_type: str = ""
    owners: Sequence[str] = ()  # the registry's owners of this table
    runbook_url: str = ""  # the registry's runbook of this table
    error: str = ""  # why hoodie.properties could not be read (the run will say it again)


def describe_tables(registry: HudiTableRegistry) -> list[HudiTableSpec]:
    """One spec per registered table; a table that cannot be read still gets its assets, so that its
    runs fail with the reason rather than the whole code location failing to load."""
    specs = []
    for key, base_path in registry.tables().items():
        try:
            config = registry.open_path(base_path).config
            spec = HudiTableSpec(key, base_path, config.database or DEFAULT_DATABASE, config.name,
                                 config.table_type)
        except HudiAssetsError as error:
            spec = HudiTableSpec(key, base_path, error=str(error))
        specs.append(replace(spec, owners=registry.owners_of(key),
                             runbook_url=registry.runbook_of(key, spec.database)))
    return specs


def _name(text: str) -> str:
    """A Dagster name (letters, digits, underscores) for a database or folder name."""
    return re.sub(r"[^A-Za-z0-9_]", "_", text) or "_"


def tag_value(text: str) -> str:
    """A Dagster tag value (letters, digits, `-_.`, at most 63 characters)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:63]


def annotated(description: str, owners: Sequence[str], runbook_url: str) -> str:
    """A description with who owns the table and where its runbook is (checks have no owners field)."""
    notes = [f"Owners: {', '.join(owners)}." if owners else "",
             f"Runbook: {runbook_url}" if runbook_url else ""]
    return " ".join([description, *filter(None, notes)])


class HudiTranslator:
    """Asset keys `hudi/<database>/<table>/<step>`, one group per table (`<database>__<table>`, so the
    global lineage names every table and one name in two databases does not collide), one pool per
    table. `owners` and `tags` apply to every table, before the registry's per-table owners."""

    def __init__(self, owners: Sequence[str] = (), tags: Mapping[str, str] | None = None):
        self.owners = list(owners)
        self.tags = dict(tags or {})

    def key_prefix(self, table: HudiTableSpec) -> list[str]:
        return ["hudi", _name(table.database), _name(table.key)]

    def group_name(self, table: HudiTableSpec) -> str:
        return f"{_name(table.database)}__{_name(table.key)}"

    def owners_of(self, table: HudiTableSpec) -> list[str]:
        return list(dict.fromkeys([*self.owners, *table.owners]))

    def pool(self, table: HudiTableSpec) -> str:
        """The table's steps claim this pool (Spark steps claim the Spark pool instead): with run-granular
        pools of limit 1 (see `instance`) a run holds it from start to end, so runs of one table queue."""
        return f"hudi_table/{table.database}.{table.key}"

    def job_name(self, table: HudiTableSpec) -> str:
        return f"hudi_maintenance__{_name(table.database)}__{_name(table.key)}"

    def asset_tags(self, table: HudiTableSpec) -> dict[str, str]:
        kind = {"COPY_ON_WRITE": "cow", "MERGE_ON_READ": "mor"}.get(table.table_type, "unknown")
        return {**self.tags, "hudi/table_type": kind, DATABASE_TAG: tag_value(table.database),
                TABLE_TAG: tag_value(table.key)}

    def metadata(self, table: HudiTableSpec) -> dict[str, object]:
        """Definition metadata: only what cannot go stale while the code location stays loaded (the
        table's identity and runbook); the settings a run used are on its materializations."""
        name = table.table_name or table.key
        values: dict[str, object] = {"dagster/table_name": f"{table.database}.{name}",
                                     "dagster/uri": table.base_path}
        if table.runbook_url:
            values[RUNBOOK] = dg.MetadataValue.url(table.runbook_url)
        if table.error:
            values["load_error"] = table.error
        return values

    def run_tags(self, table: HudiTableSpec, registry: HudiTableRegistry) -> dict[str, str]:
        return run_tags(table.key, registry.dry_run)


def run_tags(key: str, dry_run: bool) -> dict[str, str]:
    """The tags every run of one table carries, however launched (sensor, UI, backfill, GraphQL)."""
    return {TABLE_TAG: key, DRY_RUN_TAG: str(dry_run).lower()}


def asset_key(prefix: Sequence[str], step: str) -> dg.AssetKey:
    return dg.AssetKey([*prefix, step])


def tag_run(context: dg.OpExecutionContext | dg.AssetExecutionContext, key: str, dry_run: bool) -> None:
    """Adds the table and dry-run tags to the running run, whoever launched it (a run launched from the
    UI or GraphQL carries only what its launcher set). A run over several tables lists them all. The
    run's id comes from `context.run` (an asset context's `run_id` is deprecated since Dagster 1.8)."""
    tags = run_tags(key, dry_run)
    run_id = context.run.run_id
    current = context.instance.get_run_by_id(run_id).tags  # fresh: earlier steps may have tagged
    if current.get(TABLE_TAG, key) != key:
        tags[TABLE_TAG] = ",".join(sorted({*current[TABLE_TAG].split(","), key}))
    if any(current.get(k) != v for k, v in tags.items()):
        context.instance.add_run_tags(run_id, tags)
