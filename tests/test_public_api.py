"""The public surface: import paths pinned, lazy exports, and the README's Python example."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support.builders import base_file, ts

import hudi_assets
from hudi_assets.demo import generate_table
from hudi_assets.storage import Storage

PUBLIC = {
    "HoodieTable", "TableMaintenance", "MaintenanceStatus", "WriteConfig", "CleanerPlan", "CleanResult",
    "ValidationReport", "PlanViolation", "ArchiveResult", "ArchiveSelection", "Engine", "LocalEngine",
    "SparkEngine", "HudiAssetsError", "HudiInputError", "TableNotFoundError", "UnsupportedTableError",
    "CorruptFileError", "InvalidConfigError", "PathOutsideTableError", "UnsafePlanError",
    "CleanAbortedError", "TableBusyError", "DeleteFailedError", "MissingExtraError", "Finding", "Severity",
    "SettingsRefusedError", "RollbackResult", "Listener", "Step",
}


def test_public_names_are_pinned_and_resolve():
    assert set(hudi_assets.__all__) == PUBLIC | {"__version__"}
    for name in PUBLIC:
        assert getattr(hudi_assets, name).__name__ == name
    assert re.match(r"^\d+\.\d+", hudi_assets.__version__)
    assert issubclass(hudi_assets.UnsafePlanError, hudi_assets.HudiInputError)
    assert not issubclass(hudi_assets.TableBusyError, hudi_assets.HudiInputError)


def test_importing_the_cleaner_loads_neither_the_demo_nor_parquet_nor_dagster():
    code = ("import sys, hudi_assets.clean; "
            "print(sorted(m for m in sys.modules if m.startswith(('pyarrow.parquet', 'hudi_assets.demo', "
            "'dagster', 'pyspark'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _loaded(code: str, prefixes: tuple[str, ...]) -> list[str]:
    """The modules with one of `prefixes` loaded after `code` runs in a fresh interpreter."""
    code += f"\nimport sys; print(sorted(m for m in sys.modules if m.startswith({prefixes!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return eval(out.splitlines()[-1])  # the last line: a command may print before it


def test_import_reads_the_version_only_when_asked():
    assert _loaded("import hudi_assets", ("importlib.metadata",)) == []
    assert _loaded("import hudi_assets; hudi_assets.__version__", ("importlib.metadata",)) != []


def test_help_imports_no_command_module():
    code = ("from hudi_assets.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    loaded = _loaded(code, ("hudi_assets.", "pyarrow", "numpy", "importlib.metadata"))
    assert loaded == ["hudi_assets.cli", "hudi_assets.cli.main", "hudi_assets.exceptions"]
    code = code.replace("'--help'", "'clean', '--help'")
    assert "hudi_assets.cli.clean" in _loaded(code, ("hudi_assets.cli.",))
    assert "hudi_assets.cli.archive" not in _loaded(code, ("hudi_assets.cli.",))


def _readme_python_example() -> str:
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme.split("## Python", 1)[1]
    return section.split("```python", 1)[1].split("```", 1)[0]


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys):
    generate_table(Storage(str(tmp_path / "trips")), "COPY_ON_WRITE", name="trips", commits=8, seed=3)
    monkeypatch.chdir(tmp_path)
    exec(compile(_readme_python_example(), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "policy KEEP_LATEST_COMMITS" in out and "files deleted" in out


def test_maintenance_dry_run_then_clean_then_archive(tmp_path):
    generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", name="t", commits=12, seed=4)
    table = hudi_assets.HoodieTable(str(tmp_path / "t"), hoodie_conf={"hoodie.cleaner.commits.retained": "3",
                                                                       "hoodie.keep.min.commits": "4",
                                                                       "hoodie.keep.max.commits": "5"})
    before = sorted(p.name for p in (tmp_path / "t").rglob("*"))
    dry = table.maintenance.clean(dry_run=True, engine="local")
    assert dry.dry_run and not dry.executed and dry.scheduled is None
    plan = dry.plan
    assert plan.total_files > 0 and "files in" in plan.summary() and len(repr(plan)) < 200
    assert sorted(p.name for p in (tmp_path / "t").rglob("*")) == before  # a dry run writes nothing
    assert table.maintenance.status().clean_due
    result = table.maintenance.clean(engine="local")
    assert result.files_deleted == plan.total_files and len(repr(result)) < 1000
    assert not table.maintenance.status().clean_due
    dry_archive = table.maintenance.archive(dry_run=True)
    assert dry_archive.dry_run and dry_archive.archive_file is None and dry_archive.deleted == 0
    selection = dry_archive.selection
    archived = table.maintenance.archive()
    assert len(archived.selection.instants) == len(selection.instants) > 0


def test_a_dry_run_of_a_small_local_table_imports_neither_numpy_nor_pyarrow(builder):
    """Both are for large partitions (the columnar decision) and Hudi 1.x histories: 0.2 s of start-up."""
    b = builder()
    for n in range(4):
        b.commit(ts(n), {"dt=2024-01-01": [base_file("f1", ts(n))]})
    code = (f"from hudi_assets.cli import main\ntry:\n    main(['clean', {str(b.root)!r}, '--dry-run', "
            "'--engine', 'local', '--hoodie-conf', 'hoodie.cleaner.commits.retained=1'])\n"
            "except SystemExit:\n    pass")
    assert _loaded(code, ("numpy", "pyarrow")) == []
