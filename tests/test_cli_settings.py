"""Bad settings on the command line: exit 2 naming the key, before anything but hoodie.properties is
read, with no file of the table changed; aliases reach the archiver; --help lists the settings."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hudi_assets.cli import main
from hudi_assets.demo import demo_table_specs, generate_table
from hudi_assets.storage import Storage

COMMANDS = {
    "clean": ["clean", "--engine", "local"],
    "clean --dry-run": ["clean", "--engine", "local", "--dry-run"],
    "archive": ["archive"],
    "archive --dry-run": ["archive", "--dry-run"],
}
BAD_SETTINGS = {
    "fileversions.retained=0": (["hoodie.cleaner.fileversions.retained=0"],
                                "hoodie.cleaner.fileversions.retained='0'"),
    "fileversions.retained=-1": (["hoodie.cleaner.fileversions.retained=-1"],
                                 "hoodie.cleaner.fileversions.retained='-1'"),
    "keep.min=0 with FILE_VERSIONS": (["hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS",
                                       "hoodie.keep.min.commits=0"], "hoodie.keep.min.commits='0'"),
    "keep.max<keep.min with FILE_VERSIONS": (["hoodie.cleaner.fileversions.retained=2",
                                              "hoodie.keep.min.commits=6", "hoodie.keep.max.commits=4"],
                                             "hoodie.keep.max.commits=4"),
    "keep.max<keep.min with BY_HOURS": (["hoodie.cleaner.policy=KEEP_LATEST_BY_HOURS",
                                         "hoodie.keep.min.commits=6", "hoodie.keep.max.commits=4"],
                                        "hoodie.keep.max.commits=4"),
}


@pytest.fixture(scope="module")
def demo_cow(tmp_path_factory) -> Path:
    """A COW table with 14 commits, a replacecommit, a savepoint and a failed write."""
    path = tmp_path_factory.mktemp("settings") / "demo_cow"
    generate_table(Storage(str(path)), **demo_table_specs()["demo_cow"])
    return path


@pytest.fixture
def table(demo_cow, tmp_path) -> Path:
    return shutil.copytree(demo_cow, tmp_path / "demo_cow")


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under `root` with its size and modification time."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def _run(command: str, table: Path, pairs: list[str]) -> int:
    conf = [arg for pair in pairs for arg in ("--hoodie-conf", pair)]
    return main([*COMMANDS[command], str(table), *conf])


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", BAD_SETTINGS)
def test_bad_settings_exit_2_naming_the_key_and_change_nothing(table, capsys, command, case):
    pairs, message = BAD_SETTINGS[case]
    # An instant file of an unknown action: reading the timeline would fail naming it instead.
    (table / ".hoodie" / "20990101000000000.frobnicate").write_bytes(b"")
    before = _listing(table)
    assert _run(command, table, pairs) == 2
    err = capsys.readouterr().err
    assert message in err and "frobnicate" not in err and err.count("\n") == 1
    assert _listing(table) == before


def test_archiver_uses_the_archive_alias(table, capsys):
    before = _listing(table)
    pairs = ["hoodie.archive.min.commits=40", "hoodie.keep.max.commits=50"]
    assert _run("archive --dry-run", table, pairs) == 0
    out = capsys.readouterr().out
    assert "keep: min=40 max=50 (configured 40/50)" in out and "14 completed commits <= max 50" in out
    assert _listing(table) == before


@pytest.mark.parametrize(("command", "shown"), [
    ("clean", ["hoodie.cleaner.fileversions.retained=3  (or hoodie.clean.fileversions.retained)",
               "hoodie.clean.allow.multiple=false", "hoodie.keep.max.commits=30"]),
    ("archive", ["hoodie.keep.min.commits=20  (or hoodie.archive.min.commits)",
                 "hoodie.compact.inline.max.delta.commits=5", "hoodie.cleaner.policy=KEEP_LATEST_COMMITS"]),
])
def test_help_lists_the_settings_read_with_their_defaults(capsys, command, shown):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert all(line in out for line in shown)
