"""Arrows run downhill: formats < core < services < faces.

Every module of `hudi_assets` belongs to one layer (by its top-level module or package) and imports
only from its own layer or those below, lazy imports inside functions included. Between the service
packages the imports form no cycle, so each service can be read (and changed) from the bottom up.
A CLI subcommand uses only public names of other modules; no module reaches for a private name in
another package.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hudi_assets"

# Lowest first. A module not listed here fails the test: place a new module in its layer.
LAYERS: dict[str, frozenset[str]] = {
    # Byte formats and what every module raises; no knowledge of tables.
    "formats": frozenset({"exceptions", "extras", "avro", "hfile", "logformat", "properties",
                          "java_collections", "bloom"}),
    # One table: where it lives, its settings, its timeline and file-system view, how work is spread.
    "core": frozenset({"storage", "storage_options", "config", "config_options", "findings", "table_config",
                       "timeline", "fsview", "table", "table_paths", "engine", "discovery", "heartbeat",
                       "listener", "spark_connect", "metrics", "ownership"}),
    # What changes a table: Hudi's table services and what they share.
    "services": frozenset({"transaction", "discard", "retention", "rollback", "metadata", "clean",
                           "archive", "savepoint", "repair", "metadata_services", "status"}),
    # Who asks for them: the Python API, the command line, Dagster, the demo tables.
    "faces": frozenset({"maintenance", "cli", "orchestration", "demo"}),
}
RANK = {name: rank for rank, members in enumerate(LAYERS.values()) for name in members}
RANK[""] = RANK["maintenance"]  # the root package's names (`from hudi_assets import HoodieTable`): the API

# Deliberate upward arrows, each with its reason.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {
    ("hudi_assets.table", "hudi_assets.maintenance"):
        "HoodieTable.maintenance: the API's lazy facade, imported on first use",
}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = modules()


def imports(path: Path) -> Iterator[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) of every import of ours in the file, lazy or not;
    `from hudi_assets import x` of a submodule counts as an import of that submodule."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hudi_assets":
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: a relative import; this test reads absolute ones"
            if node.module.split(".")[0] != "hudi_assets":
                continue
            submodules = [a.name for a in node.names if f"{node.module}.{a.name}" in MODULES]
            for name in submodules:
                yield f"{node.module}.{name}", [], node.lineno
            names = [a.name for a in node.names if a.name not in submodules]
            if names or not submodules:
                yield node.module, names, node.lineno


def part(module: str) -> str:
    """The top-level module or package under hudi_assets that `module` belongs to ("" for the root)."""
    return module.split(".")[1] if "." in module else ""


# (source, target, names, where) of every import of ours; the root package is a table of lazy
# names, not a source of imports. EDGES: those between parts.
IMPORTS = [(source, target, names, f"{path.relative_to(PACKAGE.parent)}:{line}")
           for source, path in MODULES.items() if source != "hudi_assets"
           for target, names, line in imports(path)]
EDGES = [edge for edge in IMPORTS if part(edge[1]) != part(edge[0])]


def test_imports_reads_lazy_and_submodule_imports(tmp_path):
    """The rules below see an import inside a function, and `from hudi_assets import x` of a
    submodule as an import of that submodule."""
    path = tmp_path / "m.py"
    path.write_text("from hudi_assets import clean\nimport os\n\ndef f():\n"
                    "    from hudi_assets.cli.main import open_table\n    import hudi_assets.table\n")
    assert list(imports(path)) == [("hudi_assets.clean", [], 1), ("hudi_assets.cli.main", ["open_table"], 5),
                                   ("hudi_assets.table", [], 6)]


def test_every_module_has_a_layer():
    unplaced = sorted({part(m) for m in MODULES if part(m)} - RANK.keys())
    assert not unplaced, f"place these in a layer of {__name__}.LAYERS: {unplaced}"


def upward_imports(edges) -> list[str]:
    """The edges into a higher layer, other than ALLOWED_UPWARD."""
    return [f"{where}: {source} ({layer_of(source)}) imports {target} ({layer_of(target)})"
            for source, target, _names, where in edges
            if RANK.get(part(target), -1) > RANK.get(part(source), -1)
            and (source, target) not in ALLOWED_UPWARD]


def test_no_import_runs_up_a_layer():
    upward = upward_imports(EDGES)
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)


def test_the_layer_check_finds_an_upward_import():
    edges = [("hudi_assets.clean.cleaner", "hudi_assets.cli.main", ["open_table"], "clean/cleaner.py:9"),
             ("hudi_assets.cli.main", "hudi_assets.clean.cleaner", ["Cleaner"], "cli/main.py:9"),
             ("hudi_assets.table", "hudi_assets.maintenance", [], "table.py:9")]
    assert upward_imports(edges) == [
        "clean/cleaner.py:9: hudi_assets.clean.cleaner (services) imports hudi_assets.cli.main (faces)"]


def layer_of(module: str) -> str:
    return list(LAYERS)[RANK[part(module)]] if part(module) in RANK else "no layer"


def test_the_allowed_upward_arrows_still_exist():
    """An exception that no longer happens is removed from the list, not left to cover a new one."""
    present = {(source, target) for source, target, _names, _where in EDGES}
    assert set(ALLOWED_UPWARD) <= present, set(ALLOWED_UPWARD) - present


@pytest.mark.parametrize("layer", ["services", "faces"])
def test_no_cycle_between_packages_of_a_layer(layer):
    members = LAYERS[layer]
    graph: dict[str, set[str]] = {m: set() for m in members}
    witness: dict[tuple[str, str], str] = {}
    for source, target, _names, where in EDGES:
        if part(source) in members and part(target) in members:
            graph[part(source)].add(part(target))
            witness.setdefault((part(source), part(target)), f"{where}: {source} imports {target}")
    cycle = find_cycle(graph)
    assert cycle is None, "a cycle between " + " -> ".join(cycle) + ":\n" + "\n".join(
        witness[(a, b)] for a, b in itertools.pairwise(cycle))


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as [a, b, ..., a], or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    return next((c for n in sorted(graph) if n not in state and (c := visit(n))), None)


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def private_imports(imports_) -> list[str]:
    """Private names taken from another package, or by a CLI subcommand from any other module."""
    return sorted({f"{where}: {source} imports {name} from {target}"
                   for source, target, names, where in imports_ for name in names
                   if name.startswith("_") and target != source
                   and (part(target) != part(source) or part(source) == "cli")})


def test_no_private_name_crosses_a_package_or_reaches_a_subcommand():
    """A subcommand of the CLI (hudi_assets/cli/) uses other modules' public names only; no module
    takes a private name from another package."""
    private = private_imports(IMPORTS)
    assert not private, "\n".join(private)


def test_the_private_name_check_finds_them():
    assert private_imports([
        ("hudi_assets.cli.clean", "hudi_assets.cli.main", ["_helper"], "cli/clean.py:9"),
        ("hudi_assets.clean.cleaner", "hudi_assets.clean.plan", ["_within"], "clean/cleaner.py:9"),
        ("hudi_assets.maintenance", "hudi_assets.clean.cleaner", ["Cleaner", "_inside"], "maintenance.py:9"),
    ]) == ["cli/clean.py:9: hudi_assets.cli.clean imports _helper from hudi_assets.cli.main",
           "maintenance.py:9: hudi_assets.maintenance imports _inside from hudi_assets.clean.cleaner"]
