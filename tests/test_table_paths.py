"""The one path rule: every form a path arrives in, to one canonical table-relative path (or a
refusal), then one verdict per purpose. Partition values are written without URL encoding, so `#`,
`?`, `%`, `=`, spaces and non-ASCII letters are characters of a name."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_assets.exceptions import PathOutsideTableError
from hudi_assets.storage import Storage
from hudi_assets.table_paths import (
    DISCARDED_FOLDER,
    aux_file_problem,
    partition_problem,
    rollback_file_problem,
    table_relative,
)

F = "20240101000000000"  # the failed instant
MINE = f"fid-0_1-0-1_{F}.parquet"
OLD = "fid-0_1-0-1_20230101000000000.parquet"
MY_LOG = f".fid-0_{F}.log.1_1-0-1"
OLD_LOG = ".fid-0_20230101000000000.log.2_1-0-1"
OK = None

# (path with {base} and {outside} placeholders, canonical form or None when refused, rollback verdict)
FILES = [
    ("2024/01/01/" + MINE, "2024/01/01/" + MINE, OK),
    ("{base}/2024/01/01/" + MINE, "2024/01/01/" + MINE, OK),
    ("file:{base}/2024/01/01/" + MINE, "2024/01/01/" + MINE, OK),
    ("file://{base}/2024/01/01/" + MINE, "2024/01/01/" + MINE, OK),
    ("2024/01/02/../01/" + MINE, "2024/01/01/" + MINE, OK),
    ("2024/01/01/./" + MINE, "2024/01/01/" + MINE, OK),
    ("p=a#b?c/" + MINE, "p=a#b?c/" + MINE, OK),
    ("file:{base}/p=a#b?c/" + MINE, "p=a#b?c/" + MINE, OK),
    ("city=São Paulo/" + MINE, "city=São Paulo/" + MINE, OK),
    ("x=%41/" + MINE, "x=%41/" + MINE, OK),
    ("2024/01/01/." + MINE + ".crc", "2024/01/01/." + MINE + ".crc", OK),
    ("2024/01/01/" + MY_LOG, "2024/01/01/" + MY_LOG, OK),
    ("2024/01/01/" + OLD, "2024/01/01/" + OLD, "was written by instant 20230101000000000"),
    ("2024/01/01/" + OLD_LOG, "2024/01/01/" + OLD_LOG, "was written by instant 20230101000000000"),
    ("2024/01/01/../02/" + OLD, "2024/01/02/" + OLD, "was written by instant"),
    ("2024/01/01/.hoodie_partition_metadata", "2024/01/01/.hoodie_partition_metadata", "partition metadata"),
    ("2024/01/01/.hoodie_partition_metadata.parquet", "2024/01/01/.hoodie_partition_metadata.parquet",
     "partition metadata"),
    ("2024/01/01/notes.txt", "2024/01/01/notes.txt", "not a data file"),
    (".hoodie/" + MINE, ".hoodie/" + MINE, "under .hoodie"),
    ("file:{base}/.hoodie/archived/" + MINE, ".hoodie/archived/" + MINE, "under .hoodie"),
    ("linked_meta/" + MINE, ".hoodie/" + MINE, "under .hoodie"),
    ("linked_in/" + MINE, "2024/01/01/" + MINE, OK),
    ("linked_out/" + MINE, None, None),
    ("../outside/" + MINE, None, None),
    ("{outside}/" + MINE, None, None),
    ("file:{outside}/" + MINE, None, None),
    ("s3://bucket/table/2024/01/01/" + MINE, None, None),
    ("2024/01/01/a\0" + MINE, None, None),
    ("", "", "is the base path"),
]

# (directory, canonical form or None when refused, clean partition-delete verdict)
DIRECTORIES = [
    ("2024/01/01", "2024/01/01", OK),
    ("p=a#b?c", "p=a#b?c", OK),
    ("file:{base}/p=a#b?c", "p=a#b?c", OK),
    ("2024/01/01/..", "2024/01", OK),
    ("linked_in", "2024/01/01", OK),
    ("", "", "base path is not a partition"),
    ("file:{base}", "", "base path is not a partition"),
    (".hoodie", ".hoodie", "under .hoodie"),
    (".hoodie/archived", ".hoodie/archived", "under .hoodie"),
    ("file:{base}/.hoodie/archived", ".hoodie/archived", "under .hoodie"),
    ("linked_meta", ".hoodie", "under .hoodie"),
    ("linked_out", None, None),
    ("..", None, None),
    ("{outside}", None, None),
]


@pytest.fixture
def table(tmp_path) -> tuple[Storage, dict[str, str]]:
    base, outside = tmp_path / "table", tmp_path / "outside"
    for folder in (base / ".hoodie" / "archived", base / "2024" / "01" / "01", base / "2024" / "01" / "02",
                   outside):
        folder.mkdir(parents=True)
    (base / "linked_in").symlink_to(base / "2024" / "01" / "01", target_is_directory=True)
    (base / "linked_meta").symlink_to(base / ".hoodie", target_is_directory=True)
    (base / "linked_out").symlink_to(outside, target_is_directory=True)
    return Storage(str(base)), {"base": str(base), "outside": str(outside)}


def _verdict(problem: str | None, expected: str | None) -> None:
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and expected in problem


@pytest.mark.parametrize(("path", "canonical", "rollback"), FILES)
def test_file_forms(table, path, canonical, rollback):
    storage, places = table
    path = path.format(**places)
    if canonical is None:
        with pytest.raises(PathOutsideTableError):
            table_relative(storage, path)
        return
    rel = table_relative(storage, path)
    assert rel == canonical
    _verdict(rollback_file_problem(rel, F, ".parquet"), rollback)


@pytest.mark.parametrize(("path", "canonical", "clean"), DIRECTORIES)
def test_directory_forms(table, path, canonical, clean):
    storage, places = table
    path = path.format(**places)
    if canonical is None:
        with pytest.raises(PathOutsideTableError):
            table_relative(storage, path, directory=True)
        return
    rel = table_relative(storage, path, directory=True)
    assert rel == canonical
    _verdict(partition_problem(rel), clean)


@pytest.mark.parametrize(("path", "ok"), [
    (f"{DISCARDED_FOLDER}/{F}.rollback.requested", True),
    (f"{DISCARDED_FOLDER}/../{F}.rollback.requested", False),
    (f"{DISCARDED_FOLDER}/sub/{F}.rollback.requested", False),
    (f".hoodie/{F}.rollback.requested", False),
    (f"2024/01/01/{MINE}", False),
])
def test_our_own_folders(table, path, ok):
    storage, _ = table
    problem = aux_file_problem(table_relative(storage, path), DISCARDED_FOLDER)
    assert (problem is None) == ok
    assert aux_file_problem(f"{DISCARDED_FOLDER}/x", ".hoodie/.aux/elsewhere") is not None


def test_a_file_that_is_a_link_is_not_followed(table, tmp_path):
    """Deleting a link removes the link: its target is not what is judged."""
    storage, places = table
    (Path(places["outside"]) / MINE).write_bytes(b"x")
    (Path(places["base"]) / "2024" / "01" / "01" / "link.parquet").symlink_to(Path(places["outside"]) / MINE)
    assert table_relative(storage, "2024/01/01/link.parquet") == "2024/01/01/link.parquet"
