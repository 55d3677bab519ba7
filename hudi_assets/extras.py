"""Optional dependencies: the core needs pyarrow, fastavro and numpy only; Spark, Dagster, ZooKeeper
and the AWS SDK come with the extras of `hudi-assets` (see the README). A feature that needs an extra
checks for it where it starts, so a missing one gives one line naming the extra instead of a
traceback from deep inside an import.
"""

from __future__ import annotations

from importlib.util import find_spec

from hudi_assets.exceptions import MissingExtraError


def installed(module: str) -> bool:
    """Whether the top-level `module` can be imported (checked without importing it)."""
    return find_spec(module) is not None


def missing_extra(module: str, extra: str, feature: str) -> str:
    """The one line that says which extra brings `module`."""
    return f"{feature} needs {module}, which is not installed: pip install 'hudi-assets[{extra}]'"


def require(module: str, extra: str, feature: str) -> None:
    """Raise `MissingExtraError` naming `extra` when `module` is not installed."""
    if not installed(module):
        raise MissingExtraError(missing_extra(module, extra, feature))
