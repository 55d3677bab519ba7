"""The shape of the table services (issue 20): no long positional signatures anywhere in the
package, and faces that call the service objects only, never the planners and executors behind them."""

from __future__ import annotations

import ast
from pathlib import Path

import hudi_assets

PACKAGE = Path(hudi_assets.__file__).parent
MAX_POSITIONAL = 5
# What only the service objects (Cleaner, Rollbacker, HoodieTimelineArchiver) may build or call.
SERVICE_INTERNALS = {
    "CleanPlanner", "CleanActionExecutor", "PlanValidator", "RollbackActionExecutor", "plan_rollback",
    "select_instants_to_archive", "merge_small_archive_files", "MetadataTableWriter",
}


def _modules(paths) -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(), str(path))) for path in sorted(paths)]


def _faces() -> list[Path]:
    """`table.maintenance`, every CLI module and the Dagster steps."""
    return [PACKAGE / "maintenance.py", *PACKAGE.rglob("cli.py"), *PACKAGE.glob("cli/*.py"),
            *PACKAGE.glob("orchestration/*.py")]


def _long_signatures(tree: ast.Module) -> list[str]:
    """Functions taking more than MAX_POSITIONAL positional parameters (keyword-only ones do not
    count, nor a method's `self`/`cls`), as `line name(parameters)`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names = [a.arg for a in node.args.posonlyargs + node.args.args]
            if names and names[0] in ("self", "cls"):
                names = names[1:]
            if len(names) > MAX_POSITIONAL:
                found.append(f"{node.lineno} {node.name}({', '.join(names)})")
    return found


def test_no_function_takes_more_than_five_positional_parameters():
    offenders = [f"{path.relative_to(PACKAGE)}:{where}"
                 for path, tree in _modules(PACKAGE.rglob("*.py")) for where in _long_signatures(tree)]
    assert offenders == []


def test_the_check_finds_a_long_signature():
    """The rule above is not vacuous: six positional parameters are found; five, keyword-only ones
    and `self` are not."""
    tree = ast.parse("def f(a, b, c, d, e, g): ...\ndef h(a, b, c, d, e, *, g): ...\n"
                     "class C:\n    def m(self, a, b, c, d, e): ...")
    assert _long_signatures(tree) == ["1 f(a, b, c, d, e, g)"]


def test_faces_build_no_planner_executor_or_archiver_internals():
    found = []
    faces = _faces()
    assert len(faces) >= 6  # maintenance, the CLI modules, the Dagster steps
    for path, tree in _modules(set(faces)):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = {alias.name for alias in node.names}
            elif isinstance(node, ast.Name | ast.Attribute):
                names = {node.id if isinstance(node, ast.Name) else node.attr}
            else:
                continue
            found.extend(f"{path.relative_to(PACKAGE)}: {name}" for name in names & SERVICE_INTERNALS)
    assert found == []


def test_faces_get_the_archiver_with_the_tables_settings_only():
    """A face asks `HoodieTimelineArchiver.for_table`; it never assembles an archiver's settings."""
    direct = []
    for path, tree in _modules(set(_faces())):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "HoodieTimelineArchiver":
                direct.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert direct == []
