"""The real HFiles in ../shared/reference/hfile and what each holds (its README, hudi-rs's tests)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.refdata import SHARED, shared_path

HFILE_DIR = SHARED / "reference" / "hfile"
LARGE_KEY_PREFIX = "hudi-key-" + "a" * 100 + "-"
# hfile.index.block.max.size / hfile.index.block.min.entries of the `_deep_index` file (Hudi's test).
DEEP_INDEX_CHUNK_SIZE = 2048
DEEP_INDEX_MIN_ENTRIES = 4

_NAME = re.compile(r"hudi_1_0_hbase_2_4_\d+_(?:(\d+)KB_(GZ|NONE)_(\d+)(?:_(\d+))?_?(.*)|no_entry)\.hfile")


@dataclass(frozen=True)
class ReferenceFile:
    name: str
    block_size: int | None
    compression: str | None
    variant: str

    @property
    def path(self) -> Path:
        return HFILE_DIR / self.name

    def expected_entries(self) -> list[tuple[bytes, bytes]]:
        """The (key, value) cells the README says the file holds, in order."""
        if self.variant == "no_entry":
            return []
        match = _NAME.fullmatch(self.name)
        assert match
        count = int(match.group(3))
        if self.variant == "non_unique":
            cells = []
            for i in range(count):
                key = f"hudi-key-{i:09d}".encode()
                cells.append((key, f"hudi-value-{i:09d}".encode()))
                cells += [(key, f"hudi-value-{i:09d}_{j}".encode()) for j in range(int(match.group(4)))]
            return cells
        if self.variant in ("large_keys", "large_keys_deep_index"):
            key_format = LARGE_KEY_PREFIX + "{:09d}"
        elif self.variant == "fake_first_key":
            key_format = "hudi-key-{:09d}-abcdefghij"
        else:
            key_format = "hudi-key-{:09d}"
        return [(key_format.format(i).encode(), f"hudi-value-{i:09d}".encode()) for i in range(count)]

    @property
    def index_levels(self) -> int:
        return {"large_keys": 2, "large_keys_deep_index": 3}.get(self.variant, 1)


def reference_file(name: str) -> ReferenceFile:
    match = _NAME.fullmatch(name)
    if match is None:
        raise ValueError(f"unexpected reference HFile name {name}")
    if match.group(1) is None:
        return ReferenceFile(name, None, None, "no_entry")
    return ReferenceFile(name, int(match.group(1)) * 1024, match.group(2), match.group(5))


def reference_params() -> list:
    """One pytest param per reference HFile, or one skipped param when ../shared is absent."""
    if not HFILE_DIR.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{HFILE_DIR} is absent"))]
    return [pytest.param(reference_file(p.name), id=p.stem) for p in sorted(HFILE_DIR.glob("*.hfile"))]


def named(name: str) -> ReferenceFile:
    """One reference HFile by name; skips the test when ../shared is absent."""
    shared_path("reference", "hfile", name)
    return reference_file(name)
