"""New instant times take the wall clock (Hudi's HoodieInstantTimeGenerator), stepping past an instant
within the allowed clock skew (`hoodie.time.generator.max_expected_clock_skew_ms`, Hudi 1.x's key and
default); an instant beyond it is refused by every action but its own rollback or discard."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from support.builders import base_file, ts

from hudi_assets.cli import main
from hudi_assets.timeline.instant import State
from hudi_assets.timeline.instant_time import format_instant_time, new_instant_time, now_in_zone

FAR = "99999999999999999"  # a hand-named instant: month 99, not a date


def _ahead(minutes: float) -> str:
    return format_instant_time(now_in_zone() + timedelta(minutes=minutes))


def test_an_instant_beyond_the_allowed_skew_does_not_drag_new_times():
    """Before: FAR + 1, an 18-digit time that sorts before every instant."""
    before = format_instant_time(now_in_zone())
    made = new_instant_time([ts(1), FAR])
    assert len(made) == 17 and before <= made < FAR
    assert new_instant_time([ts(1), made, FAR]) > made  # and two new times never repeat


def test_an_instant_within_the_allowed_skew_is_stepped_past():
    close = _ahead(0.001)  # 60 ms ahead: within the default 200 ms
    stepped = new_instant_time([close])
    assert stepped > close and datetime.strptime(stepped[:14], "%Y%m%d%H%M%S")
    assert new_instant_time([_ahead(10)], max_skew_ms=3_600_000) > _ahead(9)


def _table_with_future_write(builder, t: str):
    b = builder()
    for n in range(1, 4):
        b.commit(ts(n), {"2024/01/01": [base_file("f1", ts(n))]})
    b.commit(t, state=State.INFLIGHT)
    return b


def _listing(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("t", [FAR, "later"])
def test_every_action_but_rolling_back_that_instant_is_refused(builder, capsys, t):
    t = _ahead(10) if t == "later" else t
    b = _table_with_future_write(builder, t)
    before = _listing(b.root)
    retain = ["--hoodie-conf", "hoodie.cleaner.commits.retained=1"]
    for args in (["clean", str(b.root), "--engine", "local", *retain],
                 ["clean", str(b.root), "--dry-run", *retain],
                 ["archive", str(b.root)], ["archive", str(b.root), "--dry-run"],
                 ["clean", str(b.root), "--discard-pending", ts(2)], ["rollback", str(b.root), ts(2)]):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert f"instant {t} lies beyond this clock" in err and "hoodie.time.generator" in err, err
        assert f"hudi-assets rollback {b.root} {t}" in err
    assert _listing(b.root) == before

    assert main(["rollback", str(b.root), t]) == 0  # its own rollback is not refused
    [rollback] = [p.name.split(".")[0] for p in (b.root / ".hoodie").glob("*.rollback")]
    assert len(rollback) == 17 and rollback < t
    assert main(["clean", str(b.root), "--engine", "local", *retain]) == 0  # and then all goes on
    [clean] = [p.name.split(".")[0] for p in (b.root / ".hoodie").glob("*.clean")]
    assert clean > rollback


def test_the_allowance_is_a_setting(builder, capsys):
    b = _table_with_future_write(builder, _ahead(10))
    wide = ["--hoodie-conf", "hoodie.time.generator.max_expected_clock_skew_ms=3600000"]
    assert main(["clean", str(b.root), "--engine", "local", *wide]) == 0
    assert main(["clean", str(b.root), "--engine", "local"]) == 2
    assert "hoodie.time.generator.max_expected_clock_skew_ms=200 (default)" in capsys.readouterr().err


def test_a_pending_clean_in_the_future_can_be_discarded(builder, capsys):
    b = builder()
    for n in range(1, 4):
        b.commit(ts(n), {"2024/01/01": [base_file("f1", ts(n))]})
    b.clean(FAR, ts(2), State.REQUESTED)
    retain = ["--hoodie-conf", "hoodie.cleaner.commits.retained=1"]
    assert main(["clean", str(b.root), "--engine", "local", *retain]) == 2
    assert f"discard it first: hudi-assets clean {b.root} --discard-pending {FAR}" in capsys.readouterr().err
    assert main(["clean", str(b.root), "--discard-pending", FAR]) == 0
    assert main(["clean", str(b.root), "--engine", "local", *retain]) == 0
    [clean] = [p.name for p in (b.root / ".hoodie").glob("*.clean")]
    assert len(clean.split(".")[0]) == 17


def test_a_rollback_steps_past_an_instant_within_the_allowance_set(builder):
    """The rollback's own instant time honours the skew setting, as the refusal does: before, it took
    the default allowance and landed before the commit it had let pass."""
    ahead = _ahead(10)
    b = builder()
    for n in range(1, 4):
        b.commit(ts(n), {"2024/01/01": [base_file("f1", ts(n))]})
    b.commit(ts(4), state=State.INFLIGHT)
    b.commit(ahead, {"2024/01/01": [base_file("f2", ahead)]})
    wide = ["--hoodie-conf", "hoodie.time.generator.max_expected_clock_skew_ms=3600000"]
    assert main(["rollback", str(b.root), ts(4), *wide]) == 0
    [rollback] = [p.name.split(".")[0] for p in (b.root / ".hoodie").glob("*.rollback")]
    assert rollback > ahead
