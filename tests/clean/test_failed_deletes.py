"""A delete that fails while the file is still there: the clean completes recording it in
`failedDeleteFiles` (as Hudi does), the run exits 1 naming the file, and the next clean retries it.
Hadoop's `.crc` companions go with their files."""

from __future__ import annotations

import subprocess

from support.builders import base_file, ts

from hudi_assets.clean import CleanConfig, Cleaner
from hudi_assets.cli import main
from hudi_assets.config import WriteConfig
from hudi_assets.timeline.instant import Instant, State
from hudi_assets.timeline.metadata import completed_metadata

P = "2024/01/01"


def _cleans(table):
    timeline = table.reload_timeline()
    return [completed_metadata(timeline, i) for i in timeline.clean_timeline().filter_completed()]


def test_failed_delete_completes_the_clean_and_the_next_clean_retries_it(builder, immutable, capsys):
    b = builder()
    times = [ts(n) for n in range(1, 4)]
    for t in times:
        b.commit(t, {P: [base_file("f1", t)]})
    oldest = immutable(b.root / P / base_file("f1", times[0]))
    args = ["clean", str(b.root), "--engine", "local", "--hoodie-conf", "hoodie.cleaner.commits.retained=1"]
    assert main(args) == 1
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


def test_discard_of_an_undeletable_state_file_exits_1_naming_it(builder, immutable, capsys):
    """Before: "discarded", exit 0, and the clean stayed pending."""
    b = builder()
    b.commit(ts(1), {P: [base_file("f1", ts(1))]})
    b.clean(ts(2), ts(1), State.INFLIGHT)
    inflight = immutable(b.root / ".hoodie" / f"{ts(2)}.clean.inflight")
    assert main(["clean", str(b.root), "--discard-pending", ts(2)]) == 1
    captured = capsys.readouterr()
    assert "discarded" not in captured.out
    assert f"{inflight}: could not be deleted" in captured.err
    assert [i.timestamp for i in b.table().reload_timeline().clean_timeline().filter_pending()] == [ts(2)]


def test_undeletable_empty_pending_clean_exits_1_naming_it(builder, immutable, capsys):
    b = builder()
    for n in range(1, 3):
        b.commit(ts(n), {P: [base_file(f"f{n}", ts(n))]})
    b.state_file(f"{ts(3)}.clean.requested")
    requested = immutable(b.root / ".hoodie" / f"{ts(3)}.clean.requested")
    assert main(["clean", str(b.root), "--engine", "local"]) == 1
    assert f"{requested}: could not be deleted" in capsys.readouterr().err


def test_a_planned_file_already_gone_counts_as_deleted(builder):
    """Kept on purpose (see the README): Hudi 0.14/0.15 record a file already gone (a resumed clean) in
    `failedDeleteFiles`, later Hudi counts it deleted, and so do we: the run exits 0."""
    b = builder()
    times = [ts(n) for n in range(1, 4)]
    for t in times:
        b.commit(t, {P: [base_file("f1", t), base_file("f2", t)]})
    args = ["clean", str(b.root), "--engine", "local", "--hoodie-conf", "hoodie.cleaner.commits.retained=1"]
    table = b.table()
    config = CleanConfig.from_write_config(WriteConfig.load(table.config.props, None,
                                                            {"hoodie.cleaner.commits.retained": "1"}))
    cleaner = Cleaner(table, config)
    plan = cleaner.plan()
    cleaner.request(plan)
    gone = base_file("f1", times[0])
    (b.root / P / gone).unlink()  # a killed run deleted it before the clean completed
    assert main(args) == 0
    [meta] = _cleans(b.table())
    stat = meta["partitionMetadata"][P]
    assert gone in stat["successDeleteFiles"] and stat["failedDeleteFiles"] == []
    assert meta["totalFilesDeleted"] == plan.total_files == 2
