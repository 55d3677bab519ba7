"""Find Hudi tables under a root directory or bucket prefix: folders holding `.hoodie/hoodie.properties`.

The walk does not descend into a table (its partitions hold no tables) nor into hidden folders, and
stops at `max_depth`, so scanning a data lake's root stays one cheap listing per folder. Folders
whose names are not UTF-8 are passed over: Hudi never names a table so, and one stray folder must
not stop the scan of a whole lake (inside a table such a name is refused, see `Storage`).
"""

from __future__ import annotations

from collections.abc import Mapping

from hudi_assets.storage import Storage
from hudi_assets.table_config import PROPERTIES_FILE


def discover_tables(root: str, storage_options: Mapping[str, str] | None = None,
                    max_depth: int = 3) -> list[str]:
    """Base paths (URIs) of the tables at or below `root`, sorted."""
    storage = Storage(root, storage_options)
    found: list[str] = []
    level = [""]
    for _ in range(max_depth + 1):
        next_level: list[str] = []
        for folder in level:
            if storage.exists(f"{folder}/{PROPERTIES_FILE}" if folder else PROPERTIES_FILE):
                found.append(f"{storage.base_uri}/{folder}" if folder else storage.base_uri)
                continue
            _, dirs = storage.list_names(folder, skip_undecodable=True)
            prefix = f"{folder}/" if folder else ""
            next_level.extend(prefix + d for d in dirs if not d.startswith((".", "_")))
        level = next_level
    return sorted(found)
