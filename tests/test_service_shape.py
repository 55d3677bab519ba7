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
    return [PACKAGE / "maintenance.py", *PACKAGE.glob("cli/*.py"), *PACKAGE.glob("orchestration/*.py")]


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


def _internals_named(tree: ast.Module) -> list[str]:
    """The SERVICE_INTERNALS a module imports or names (as a name or an attribute), as `line name`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = {alias.name for alias in node.names}
        elif isinstance(node, ast.Name | ast.Attribute):
            names = {node.id if isinstance(node, ast.Name) else node.attr}
        else:
            continue
        found.extend(f"{node.lineno} {name}" for name in sorted(names & SERVICE_INTERNALS))
    return found


def test_faces_build_no_planner_executor_or_archiver_internals():
    faces = _faces()
    assert len(faces) >= 6  # maintenance, the CLI modules, the Dagster steps
    found = [f"{path.relative_to(PACKAGE)}:{where}" for path, tree in _modules(set(faces))
             for where in _internals_named(tree)]
    assert found == []


def test_the_check_finds_a_face_reaching_for_an_internal():
    """The rule above is not vacuous: an imported planner and an executor reached as an attribute
    are found; the service object is not."""
    tree = ast.parse("from hudi_assets.clean.planner import CleanPlanner\n"
                     "from hudi_assets.clean import Cleaner\n"
                     "executor.CleanActionExecutor(table)\nCleaner(table, config).clean()\n")
    assert _internals_named(tree) == ["1 CleanPlanner", "3 CleanActionExecutor"]


def _archivers_built(tree: ast.Module) -> list[int]:
    """Lines that call `HoodieTimelineArchiver(...)` itself (by name or as an attribute)."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "HoodieTimelineArchiver"]


def test_faces_get_the_archiver_with_the_tables_settings_only():
    """A face asks `HoodieTimelineArchiver.for_table`; it never assembles an archiver's settings."""
    direct = [f"{path.relative_to(PACKAGE)}:{line}" for path, tree in _modules(set(_faces()))
              for line in _archivers_built(tree)]
    assert direct == []


def test_the_check_finds_an_archiver_built_by_hand():
    tree = ast.parse("HoodieTimelineArchiver(table, config)\narchiver.HoodieTimelineArchiver(table, config)\n"
                     "HoodieTimelineArchiver.for_table(table)\n")
    assert _archivers_built(tree) == [1, 2]
