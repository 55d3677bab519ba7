"""Apache Hudi table maintenance outside the JVM, exact to Hudi 0.14/0.15 (table version 6).

    from hudi_assets import HoodieTable
    table = HoodieTable("/data/lake/trips", hoodie_conf={"hoodie.cleaner.commits.retained": "5"})
    print(table.maintenance.clean(dry_run=True).plan.summary())

The names below are loaded on first use, so importing one submodule does not import them all.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "HoodieTable": "hudi_assets.table",
    "TableMaintenance": "hudi_assets.maintenance",
    "MaintenanceStatus": "hudi_assets.maintenance",
    "WriteConfig": "hudi_assets.config",
    "CleanerPlan": "hudi_assets.clean.plan",
    "CleanResult": "hudi_assets.clean.cleaner",
    "RollbackResult": "hudi_assets.rollback.rollbacker",
    "Listener": "hudi_assets.listener",
    "Step": "hudi_assets.listener",
    "ValidationReport": "hudi_assets.clean.validation",
    "PlanViolation": "hudi_assets.clean.validation",
    "ArchiveResult": "hudi_assets.archive.archiver",
    "ArchiveSelection": "hudi_assets.archive.selection",
    "Engine": "hudi_assets.engine",
    "LocalEngine": "hudi_assets.engine",
    "SparkEngine": "hudi_assets.engine",
    "HudiAssetsError": "hudi_assets.exceptions",
    "HudiInputError": "hudi_assets.exceptions",
    "TableNotFoundError": "hudi_assets.exceptions",
    "UnsupportedTableError": "hudi_assets.exceptions",
    "CorruptFileError": "hudi_assets.exceptions",
    "InvalidConfigError": "hudi_assets.exceptions",
    "PathOutsideTableError": "hudi_assets.exceptions",
    "UnsafePlanError": "hudi_assets.exceptions",
    "CleanAbortedError": "hudi_assets.exceptions",
    "TableBusyError": "hudi_assets.exceptions",
    "DeleteFailedError": "hudi_assets.exceptions",
    "MissingExtraError": "hudi_assets.exceptions",
    "Finding": "hudi_assets.findings",
    "Severity": "hudi_assets.findings",
    "SettingsRefusedError": "hudi_assets.findings",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    if name == "__version__":
        value = globals()["__version__"] = _installed_version()
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hudi_assets' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def _installed_version() -> str:
    """The installed distribution's version, read on first use: `importlib.metadata` costs about 80 ms
    of start-up, which every command and `import hudi_assets` would otherwise pay."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hudi-assets")
    except PackageNotFoundError:  # a source checkout that is not installed
        return "0+unknown"


def __dir__() -> list[str]:
    return sorted(__all__)

