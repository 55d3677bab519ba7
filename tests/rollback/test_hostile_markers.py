"""Hostile markers: whoever wrote them, a rollback deletes only files its failed write wrote.

Each case adds one marker to the failed write of a demo table and rolls it back through the CLI,
the API and a clean under the LAZY failed-writes policy (which rolls back expired failed writes
first): exit 2 (`UnsafePlanError`) naming the marker file and line, no file written or deleted
anywhere (outside the table included), and hudi-rs reads the same rows.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support.failed_tables import marker_folder, read_rows

from hudi_assets.cli import main
from hudi_assets.exceptions import CorruptFileError, UnsafePlanError
from hudi_assets.rollback import RollbackPlan, RollbackRequest, plan_rollback
from hudi_assets.rollback.safety import check_plan
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.instant import COMMIT, Instant, State

LAZY = "hoodie.cleaner.policy.failed.writes=LAZY"


def _snapshot(root: Path) -> dict[str, int]:
    """Every file and link under `root` (the table and its neighbours) -> size."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            plain = not path.is_symlink() and path.is_file()
            found[str(path.relative_to(root))] = path.stat().st_size if plain else -1
    return found


def _latest_committed(demo, partition: str) -> str:
    """The base file of the newest completed commit's latest slice in `partition`."""
    slices = [s for s in demo.latest_file_slices if s.partition == partition and s.base_file]
    return max(slices, key=lambda s: s.base_instant).base_file


def _outside_file(demo, root: Path) -> tuple[Path, str]:
    """A folder beside the table holding a file named as the failed write would name one."""
    outside = root / "outside"
    outside.mkdir(exist_ok=True)
    (outside / ".hoodie_partition_metadata").write_text("#partition metadata\n")
    name = f"0bad-0_0-1-1_{demo.failed_instant}.parquet"
    (outside / name).write_bytes(b"PAR1 outside the table")
    return outside, name


def _completed(io_type: str) -> Callable:
    def marker(demo, root):
        latest = _latest_committed(demo, "2024/01/01")
        return f"2024/01/01/{latest}.marker.{io_type}", "was written by instant"
    return marker


def _dot_dot(demo, root):
    return f"2024/01/01/../02/{_latest_committed(demo, '2024/01/02')}.marker.MERGE", "was written by instant"


def _partition_metadata(demo, root):
    return "2024/01/01/.hoodie_partition_metadata.marker.CREATE", "partition metadata"


def _symlinked_partition(demo, root):
    outside, name = _outside_file(demo, root)
    (Path(demo.base_path) / "2024" / "01" / "03").symlink_to(outside, target_is_directory=True)
    return f"2024/01/03/{name}.marker.CREATE", "resolves outside"


def _outside_table(demo, root):
    _, name = _outside_file(demo, root)
    return f"../outside/{name}.marker.CREATE", "resolves outside"


def _uri_into_metafolder(demo, root):
    name = f"0bad-0_0-1-1_{demo.failed_instant}.parquet"
    (Path(demo.base_path) / ".hoodie" / name).write_bytes(b"PAR1")
    return f"file:{demo.base_path}/.hoodie/{name}.marker.CREATE", "under .hoodie"


def _no_partition(demo, root):
    name = f"0bad-0_0-1-1_{demo.failed_instant}.parquet"
    (Path(demo.base_path) / "2024" / name).write_bytes(b"PAR1")
    return f"2024/{name}.marker.CREATE", "holds no partition metadata"


CASES = {
    "latest_base_of_completed_commit_merge": _completed("MERGE"),
    "latest_base_of_completed_commit_create": _completed("CREATE"),
    "dot_dot_into_another_partition": _dot_dot,
    "partition_metadata": _partition_metadata,
    "symlinked_partition_outside": _symlinked_partition,
    "outside_the_table": _outside_table,
    "file_uri_into_metafolder": _uri_into_metafolder,
    "not_a_partition_directory": _no_partition,
}


def _run(face: str, base: str, instant: str) -> str:
    """Roll back through `face`; returns the refusal's message (exit 2 for the CLI)."""
    if face == "cli":
        code = main(["rollback", base, instant])
    elif face == "lazy_cli":
        code = main(["clean", base, "--engine", "local", "--hoodie-conf", LAZY])
    else:
        with pytest.raises(UnsafePlanError) as refused:
            if face == "api":
                HoodieTable(base).maintenance.rollback(instant)
            else:
                HoodieTable(base, hoodie_conf=dict([LAZY.split("=")])).maintenance.clean(engine="local")
        return str(refused.value)
    assert code == 2
    return ""


@pytest.mark.parametrize("face", ["cli", "api", "lazy_cli", "lazy_api"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_marker_refuses_the_whole_rollback(failed_table, tmp_path, capsys, case, face):
    demo = failed_table()
    line, problem = CASES[case](demo, tmp_path)
    markers = marker_folder(demo) / "MARKERS0"
    lines = markers.read_text().splitlines()
    markers.write_text("\n".join([*lines, line]) + "\n")
    rows = read_rows(demo.base_path)
    before = _snapshot(tmp_path)
    message = _run(face, demo.base_path, demo.failed_instant) or capsys.readouterr().err
    assert f"MARKERS0, line {len(lines) + 1}" in message and problem in message
    assert _snapshot(tmp_path) == before
    assert read_rows(demo.base_path) == rows


def test_direct_marker_of_a_completed_file_is_refused_naming_it(failed_table, tmp_path, capsys):
    demo = failed_table(layout="direct")
    bad = f"2024/01/01/{_latest_committed(demo, '2024/01/01')}.marker.MERGE"
    (marker_folder(demo) / bad).touch()
    before = _snapshot(tmp_path)
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 2
    assert f"{demo.failed_instant}/{bad}" in capsys.readouterr().err
    assert _snapshot(tmp_path) == before


def test_markers_file_not_utf8_is_a_corrupt_file(failed_table, tmp_path, capsys):
    demo = failed_table()
    with (marker_folder(demo) / "MARKERS0").open("ab") as fh:
        fh.write(b"2024/01/01/\xff\xfe.parquet.marker.CREATE\n")
    before = _snapshot(tmp_path)
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 2
    err = capsys.readouterr().err
    assert "MARKERS0" in err and "not UTF-8" in err and "Traceback" not in err
    with pytest.raises(CorruptFileError):
        HoodieTable(demo.base_path).maintenance.rollback(demo.failed_instant)
    assert _snapshot(tmp_path) == before


def _pending_plan(demo, extra: str) -> Path:
    """A requested rollback of the failed write whose plan also deletes `extra` (a Java writer's or
    a tampered plan); returns its state file."""
    table = HoodieTable(demo.base_path)
    plan = plan_rollback(table, Instant(demo.failed_instant, COMMIT, State.INFLIGHT))
    hostile = RollbackPlan(plan.instant_time, plan.action,
                           (*plan.requests, RollbackRequest("2024/01/01", files_to_delete=(extra,))))
    path = Path(demo.base_path) / ".hoodie" / "20250101000000000.rollback.requested"
    path.write_bytes(hostile.serialize())
    return path


def test_pending_plan_deleting_a_committed_file_is_refused_then_discarded(failed_table, tmp_path, capsys):
    demo = failed_table()
    committed = f"{demo.base_path}/2024/01/01/{_latest_committed(demo, '2024/01/01')}"
    plan_file = _pending_plan(demo, committed)
    plan_bytes = plan_file.read_bytes()
    rows = read_rows(demo.base_path)
    before = _snapshot(tmp_path)
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 2
    err = capsys.readouterr().err
    assert plan_file.name in err and "was written by instant" in err and "--discard-pending" in err
    assert _snapshot(tmp_path) == before

    both = ["rollback", demo.base_path, demo.failed_instant, "--discard-pending", "20250101000000000"]
    assert main(both) == 2
    assert "not both" in capsys.readouterr().err
    [copy] = HoodieTable(demo.base_path).maintenance.discard_pending_rollback("20250101000000000")
    assert copy.endswith(plan_file.name) and not plan_file.exists()
    kept = Path(demo.base_path) / ".hoodie" / ".aux" / "hudi-assets" / "discarded" / plan_file.name
    assert kept.read_bytes() == plan_bytes
    assert main(["rollback", demo.base_path, demo.failed_instant]) == 0
    assert Path(committed).exists()
    assert read_rows(demo.base_path) == rows


def test_discard_pending_rollback_refused_once_its_write_is_gone(failed_table, tmp_path, capsys):
    demo = failed_table()
    plan_file = _pending_plan(demo, f"{demo.base_path}/{demo.failed_files[0]}")
    for state in ("inflight", "commit.requested"):  # the write left the timeline: keep its rollback
        for path in Path(demo.base_path, ".hoodie").glob(f"{demo.failed_instant}.{state}"):
            path.unlink()
    assert main(["rollback", demo.base_path, "--discard-pending", "20250101000000000"]) == 2
    assert "no longer pending" in capsys.readouterr().err
    assert plan_file.exists()
    assert main(["rollback", demo.base_path, "--discard-pending", "20000101000000000"]) == 2
    assert "no pending rollback" in capsys.readouterr().err


def test_discard_stops_at_an_inflight_file_it_cannot_delete(failed_table, immutable, capsys):
    """The inflight state file goes first, by itself: when it cannot be deleted the requested plan stays
    and the rollback is still whole and pending (before, the requested file went anyway, leaving an
    inflight rollback without its plan, skipped by every later run)."""
    demo = failed_table()
    plan_file = _pending_plan(demo, f"{demo.base_path}/{demo.failed_files[0]}")
    inflight = plan_file.with_name("20250101000000000.rollback.inflight")
    inflight.write_bytes(b"")
    immutable(inflight)
    assert main(["rollback", demo.base_path, "--discard-pending", "20250101000000000"]) == 1
    assert f"{inflight}: could not be deleted" in capsys.readouterr().err
    assert plan_file.exists() and inflight.exists()


def test_a_refused_pending_plan_stops_every_rollback_of_the_run(failed_table, tmp_path, capsys):
    """A LAZY clean with a newer failed write to roll back and a hostile pending rollback of an
    older one: both are checked before the first is requested, so nothing changes."""
    demo = failed_table()
    _pending_plan(demo, f"{demo.base_path}/2024/01/01/{_latest_committed(demo, '2024/01/01')}")
    (Path(demo.base_path) / ".hoodie" / "20250101000000500.commit.requested").write_bytes(b"")
    before = _snapshot(tmp_path)
    assert main(["clean", demo.base_path, "--engine", "local", "--hoodie-conf", LAZY]) == 2
    assert "20250101000000000.rollback.requested" in capsys.readouterr().err
    assert _snapshot(tmp_path) == before


def test_log_blocks_at_the_base_path_pass_the_plan_rule(failed_table):
    """A table without partitions keeps its files at the base path (partition path "")."""
    demo = failed_table("MERGE_ON_READ")
    table = HoodieTable(demo.base_path)
    log_name = f".fid-0_{demo.failed_instant}.log.1_0-1-1"
    appended = RollbackPlan(demo.failed_instant, "deltacommit", (
        RollbackRequest("", "fid-0", "20230101000000000", log_blocks_to_delete={log_name: 10}),))
    check_plan(table, appended, Instant("20250101000000000", "rollback", State.REQUESTED))
    hostile = RollbackPlan(demo.failed_instant, "deltacommit", (
        RollbackRequest("", "fid-0", "20230101000000000", log_blocks_to_delete={"hoodie.properties": 10}),))
    with pytest.raises(UnsafePlanError, match="is not a log file"):
        check_plan(table, hostile, Instant("20250101000000000", "rollback", State.REQUESTED))
