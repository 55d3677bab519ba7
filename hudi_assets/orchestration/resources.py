"""Resources: the registry of Hudi tables to maintain, with their per-table `hoodie.*` settings."""

from __future__ import annotations

import posixpath

import dagster as dg
from dagster._core.definitions.definition_config_schema import DefinitionConfigSchema
from dagster_pyspark import LazyPySparkResource
from pydantic import Field

from hudi_assets.discovery import discover_tables
from hudi_assets.engine import (
    Engine,
    LocalEngine,
    SparkEngine,
    spark_settings,
    use_this_python,
)
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.status.health import DEFAULT_UNHEALTHY_AFTER_HOURS
from hudi_assets.table import HoodieTable


class HudiTableRegistry(dg.ConfigurableResource):
    """Which tables to maintain and how (each table gets its own assets, or a partition of them)."""

    base_paths: list[str] = Field(
        default_factory=list,
        description="Base paths of tables to maintain (local paths, file://, s3://, gs://, ...).",
    )
    roots: list[str] = Field(
        default_factory=list,
        description="Folders or bucket prefixes scanned for tables: folders with .hoodie/hoodie.properties.",
    )
    scan_depth: int = Field(default=3, description="How many folder levels below each root are scanned.")
    storage_options: dict[str, str] = Field(
        default_factory=dict,
        description="pyarrow filesystem options for every table, e.g. endpoint_override, region, scheme.",
    )
    hoodie_conf: dict[str, str] = Field(
        default_factory=dict,
        description="hoodie.* settings applied to every table, over each table's hoodie.properties.",
    )
    table_hoodie_conf: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="Per-table hoodie.* settings by table key (the base path's last folder); these win.",
    )
    engine: str = Field(
        default="spark",  # a deployment shares one Spark resource or warm server (`engine_for`)
        description="Where per-partition and per-file work runs: 'spark' (the spark resource) or 'local' "
                    "(a thread pool, for small tables).",
    )
    spark_remote: str = Field(
        default="",
        description="With engine 'spark': the Spark Connect server (sc://HOST:PORT) every run shares, so "
                    "no run starts a JVM (`scripts/ui.sh` starts one); empty: the spark resource.",
    )
    owners: list[str] = Field(
        default_factory=list,
        description="Owners of every table (emails or team:name), shown on every asset; table_owners adds.",
    )
    table_owners: dict[str, list[str]] = Field(
        default_factory=dict, description="Per-table owners by table key, after `owners`.")
    runbook_url: str = Field(
        default="",
        description="Runbook link shown on every asset and check; {database} and {table} are filled in.",
    )
    table_runbook_url: dict[str, str] = Field(
        default_factory=dict, description="Per-table runbook link by table key; wins over runbook_url.")
    unhealthy_after_hours: float = Field(
        default=DEFAULT_UNHEALTHY_AFTER_HOURS,
        description="A table whose clean, archive or metadata-table service is due and blocked for longer "
                    "than this many hours fails its check table_is_healthy.",
    )
    dry_run: bool = Field(
        default=True,
        description="Plan and report only: no clean is requested or executed and nothing is archived. "
                    "True by default: a deployment deletes nothing until it sets dry_run=False.",
    )

    @property
    def _config_schema(self) -> DefinitionConfigSchema:
        """Run config that sets one field keeps this registry's other values. Dagster fills a field the
        run config leaves out with the class default (`dry_run=True`, `engine='spark'`), not with the
        value this registry was built with; here each field's default is this registry's value."""
        schema = super()._config_schema
        values = schema.as_field().default_value if schema.as_field().default_provided else {}
        fields = {name: dg.Field(field.config_type, default_value=values[name], is_required=False,
                                 description=field.description) if name in values else field
                  for name, field in schema.config_type.fields.items()}
        return DefinitionConfigSchema(dg.Field(dg.Shape(fields), default_value=values, is_required=False))

    def tables(self) -> dict[str, str]:
        """Table key (the base path's last folder name) -> base path, for every registered table."""
        paths = list(self.base_paths)
        for root in self.roots:
            paths.extend(discover_tables(root, self.storage_options, self.scan_depth))
        keys: dict[str, str] = {}
        for path in paths:
            key = _key(path)
            if keys.get(key, path) != path:
                raise InvalidConfigError(f"two tables share the key {key!r}: {keys[key]} and {path}")
            keys[key] = path
        return dict(sorted(keys.items()))

    def base_path(self, key: str) -> str:
        tables = self.tables()
        if key not in tables:
            known = ", ".join(tables) or "none"
            raise InvalidConfigError(f"table {key!r} is not registered (known: {known})")
        return tables[key]

    def open(self, key: str) -> HoodieTable:
        return self.open_path(self.base_path(key))

    def open_path(self, base_path: str) -> HoodieTable:
        """The table, its write config built once with the registry's settings for it (where its lock
        provider is chosen): hoodie.properties < `hoodie_conf` < `table_hoodie_conf[key]`."""
        table = HoodieTable(base_path, self.storage_options, hoodie_conf=self.hoodie_conf)
        key = _key(base_path)
        table.write_config.update(self.table_hoodie_conf.get(key, {}), f"table_hoodie_conf[{key}]")
        return table

    def owners_of(self, key: str) -> list[str]:
        return list(dict.fromkeys([*self.owners, *self.table_owners.get(key, [])]))

    def runbook_of(self, key: str, database: str = "default") -> str:
        url = self.table_runbook_url.get(key, self.runbook_url)
        return url.replace("{table}", key).replace("{database}", database)

    def engine_for(self, spark: dg.ConfigurableResource) -> Engine:
        """The engine of this registry; Spark starts only when first used (lazy resource). A long-lived
        engine shared by every run (one `scripts/ui.sh` starts) is chosen here too."""
        if self.engine == "local":
            return LocalEngine()
        if self.engine != "spark":
            raise InvalidConfigError(f"engine={self.engine!r}: expected 'spark' or 'local'")
        if self.spark_remote:
            return SparkEngine(remote=self.spark_remote)
        return SparkEngine(session=spark.spark_session)


def _key(base_path: str) -> str:
    """A table's key in the registry: its base path's last folder."""
    return posixpath.basename(base_path.rstrip("/"))


def spark_resource(master: str | None = None, conf: dict[str, str] | None = None) -> LazyPySparkResource:
    """dagster-pyspark's lazy Spark resource with our defaults (see `spark_settings`)."""
    settings = spark_settings(master, conf)
    use_this_python(settings)
    return LazyPySparkResource(spark_config=settings)
