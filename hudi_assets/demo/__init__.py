"""Demo tables: realistic Hudi 0.14/0.15 (table version 6) or Hudi 1.1 (version 9, `demo.versions`) COW
and MOR tables written from Python.

`generate_table` writes one table with a full history (inserts, upserts, an insert_overwrite, a
savepoint, a pending compaction on MOR, a failed write), optionally with the metadata table its writer
keeps, through `Storage`, so locally or on an object store, and describes what it wrote;
`write_demo_tables` writes the two tables `hudi-assets demo` shows.
"""

from __future__ import annotations

from collections.abc import Mapping

from hudi_assets.demo.generator import DemoFileSlice, DemoTable, generate_table, instant_time
from hudi_assets.demo.metadata import max_commits_without_compaction
from hudi_assets.exceptions import HudiInputError
from hudi_assets.storage import Storage
from hudi_assets.table_config import COPY_ON_WRITE, MERGE_ON_READ

__all__ = ["DEMO_SEED", "DemoFileSlice", "DemoTable", "demo_table_specs", "generate_table", "instant_time",
           "write_demo_tables"]

DEMO_SEED = 20240101


def demo_table_specs() -> dict[str, dict]:
    """The `generate_table` arguments of the demo tables, by folder name.

    Sized so that cleaning and archival with small settings (a few commits retained, keep.min/max of
    a few) have work to do: 14 data commits, several versions of most file groups, replaced groups.
    The MOR table keeps a metadata table (`files`, `column_stats`, `bloom_filters`), as Spark writers do
    by default, so that the demo's maintenance keeps one in step; the COW table lists files directly.
    """
    common = {"commits": 14, "files_per_partition": 2, "records_per_file": 4, "update_fraction": 0.4,
              "seed": DEMO_SEED}
    return {
        "demo_cow": {"table_type": COPY_ON_WRITE, "name": "demo_cow", "partitions": 3, "hive_style": False,
                     "metadata_table": False, **common},
        "demo_mor": {"table_type": MERGE_ON_READ, "name": "demo_mor", "partitions": 3, "hive_style": True,
                     "metadata_table": True, **common},
    }


def write_demo_tables(root_dir: str, storage_options: Mapping[str, str] | None = None, *,
                      metadata_table: bool = False, table_version: int = 6) -> list[str]:
    """Write `<root>/demo_cow` (COPY_ON_WRITE, `2024/01/01` partitions) and `<root>/demo_mor`
    (MERGE_ON_READ, hive-style `dt=2024-01-01` partitions); returns their base paths.
    `metadata_table`: both get a metadata table (`files`, `column_stats`, `bloom_filters`), not only
    `demo_mor`. `table_version` 9: written as Hudi 1.1 would; a table with a metadata table then has
    fewer commits (`max_commits_without_compaction`: hudi-assets does not compact 1.x metadata
    tables yet).

    Deterministic: the same files (names, commit metadata, records) every time. Refuses a target
    that already holds a table, leaving it untouched.
    """
    root = str(root_dir).rstrip("/")
    targets = {folder: Storage(f"{root}/{folder}", storage_options) for folder in demo_table_specs()}
    for storage in targets.values():
        if storage.exists(".hoodie"):
            raise HudiInputError(f"{storage.base_uri}: already holds a Hudi table; choose an empty folder")
    paths = []
    for folder, spec in demo_table_specs().items():
        spec["metadata_table"] = metadata_table or spec["metadata_table"]
        if spec["metadata_table"] and table_version != 6:
            spec["commits"] = min(spec["commits"], max_commits_without_compaction())
        generate_table(targets[folder], **spec, table_version=table_version)
        paths.append(targets[folder].base_uri)
    return paths
