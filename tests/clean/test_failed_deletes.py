"""A delete that fails while the file is still there: the clean completes recording it in
`failedDeleteFiles` (as Hudi does), the run exits 1 naming the file, and the next clean retries it.
Hadoop's `.crc` companions go with their files."""

from __future__ import annotations

import subprocess

import pytest
from builders import base_file, ts

from hudi_assets.cli import main
from hudi_assets.timeline.instant import Instant
from hudi_assets.timeline.metadata import completed_metadata

P = "2024/01/01"


def _cleans(table):
    timeline = table.reload_timeline()
    return [completed_metadata(timeline, i) for i in timeline.clean_timeline().filter_completed()]


def test_failed_delete_completes_the_clean_and_the_next_clean_retries_it(builder, capsys):
    b = builder()
    times = [ts(n) for n in range(1, 4)]
    for t in times:
        b.commit(t, {P: [base_file("f1", t)]})
    oldest = b.root / P / base_file("f1", times[0])
    # An immutable file (chattr +i) cannot be deleted, even by root: a real EPERM from the filesystem.
    if subprocess.run(["chattr", "+i", str(oldest)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available on this filesystem")
    args = ["clean", str(b.root), "--engine", "local", "--hoodie-conf", "hoodie.cleaner.commits.retained=1"]
    try:
        assert main(args) == 1
    finally:
        subprocess.run(["chattr", "-i", str(oldest)], check=True)
    err = capsys.readouterr().err
    assert "could not be deleted" in err and oldest.name in err
    [first] = _cleans(b.table())
    assert first["partitionMetadata"][P]["failedDeleteFiles"] == [oldest.name]
    assert first["totalFilesDeleted"] == 0
    assert not b.table().active_timeline.clean_timeline().filter_pending().instants  # none left pending

    # The problem is gone (chattr -i above): the next clean, after the next commit, retries the file.
    b.commit(ts(4), {P: [base_file("f1", ts(4))]})
    assert main(args) == 0
    second = _cleans(b.table())[-1]
    assert oldest.name in second["partitionMetadata"][P]["successDeleteFiles"]
    assert not oldest.exists()


def test_crc_companions_are_deleted_with_their_files_and_never_planned(builder):
    b = builder()
    times = [ts(n) for n in range(1, 4)]
    for t in times:
        b.commit(t, {P: [base_file("f1", t)]})
        name = base_file("f1", t)
        (b.root / P / f".{name}.crc").write_bytes(b"crc")
    args = ["clean", str(b.root), "--engine", "local", "--hoodie-conf", "hoodie.cleaner.commits.retained=1"]
    assert main(args) == 0
    left = sorted(p.name for p in (b.root / P).iterdir())
    first = base_file("f1", times[0])
    assert first not in left and f".{first}.crc" not in left
    assert {base_file("f1", times[1]), f".{base_file('f1', times[1])}.crc"} <= set(left)
    meta = completed_metadata(b.table().active_timeline,
                              Instant(b.table().active_timeline.clean_timeline().last().timestamp, "clean"))
    assert meta["partitionMetadata"][P]["successDeleteFiles"] == [first]
