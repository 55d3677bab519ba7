"""Reference data in ../shared: paths, real tables, parametrization that skips cleanly when absent."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TABLES = SHARED / "tables"


def shared_path(*parts: str) -> Path:
    """A path inside ../shared, or skip the test with a reason when ../shared is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: reference data lives in ../shared beside the project")
    return path


def table_zips(version: int) -> list[str]:
    """Names of the zipped real tables of one table version (empty when ../shared is absent)."""
    if not TABLES.exists():
        return []
    return sorted(p.stem for p in TABLES.glob(f"*__v{version}_*.zip"))


def more_table_zips() -> list[str]:
    """Names (`more/<name>`, as `unzip_table` takes them) of the zipped tables in ../shared/tables/more:
    v8/v9 tables kept apart (no metadata table, LANCE, other key generators)."""
    if not (TABLES / "more").exists():
        return []
    return sorted(f"more/{p.stem}" for p in (TABLES / "more").glob("*.zip"))


def unzip_table(name: str, into: Path) -> Path:
    """Unzip one real table (ignoring `__MACOSX/`) and return its base path."""
    archive = shared_path("tables", f"{name}.zip")
    with zipfile.ZipFile(archive) as zf:
        members = [m for m in zf.namelist() if not m.startswith("__MACOSX")]
        zf.extractall(into, members)
    roots = {m.split("/", 1)[0] for m in members}
    assert len(roots) == 1, f"{archive} holds {roots}"
    return into / roots.pop()


def params_or_skip(names: list[str], what: str) -> list:
    """Parametrize over names; one skipped case with a reason when there are none."""
    if names:
        return names
    return [pytest.param(None, marks=pytest.mark.skip(reason=f"../shared is absent: no {what}"))]
