"""The UI launcher's process handling, without Dagster: a stop reaches the whole group of the child,
SIGKILL follows for what ignores SIGTERM, and a launcher started with SIGINT ignored (as from a
non-interactive shell's `&`) still gives its child default signal handling."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from support.load import doomed, scheduling_slack, wait_until

from hudi_assets.orchestration.ui import GRACE_SECONDS, STOP_SECONDS, ProcessGroup, run

# A parent that ignores SIGTERM, with a grandchild in its group; it writes the grandchild's pid once both
# are in place.
STUBBORN = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            "open(sys.argv[1], 'w').write(str(child.pid)); time.sleep(60)")


def test_stop_kills_the_whole_group_even_when_it_ignores_sigterm(tmp_path):
    ready = tmp_path / "grandchild"
    group = ProcessGroup([sys.executable, "-c", STUBBORN, str(ready)], dict(os.environ))
    wait_until(lambda: ready.exists() and ready.read_text(), 60, "the group ignoring SIGTERM")
    grandchild = int(ready.read_text())
    started = time.monotonic()
    group.stop()
    taken = time.monotonic() - started
    assert GRACE_SECONDS <= taken < STOP_SECONDS + 0.5 + scheduling_slack()  # SIGTERM ignored: SIGKILL
    assert doomed(group.process.pid) and doomed(grandchild)
    wait_until(lambda: not group.alive(), 60, "the killed group reaped")


def test_a_launcher_with_sigint_ignored_still_stops_its_child_on_sigterm(tmp_path):
    marker = tmp_path / "child"
    # The child reports its SIGINT disposition, then waits to be stopped (default SIGTERM: it dies).
    child = (f"import signal, time; open({str(marker)!r}, 'w').write(str(signal.getsignal(signal.SIGINT))); "
             "time.sleep(60)")
    launcher = subprocess.Popen(
        [sys.executable, "-c", f"import sys; from hudi_assets.orchestration.ui import run; "
                               f"sys.exit(run([sys.executable, '-c', {child!r}], {{}}))"],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    wait_until(lambda: launcher.poll() is not None or (marker.exists() and marker.read_text()), 60,
               "the child started")
    assert launcher.poll() is None
    assert "default_int_handler" in marker.read_text()  # not Handlers.SIG_IGN
    started = time.monotonic()
    launcher.send_signal(signal.SIGTERM)
    assert launcher.wait(timeout=60) == 128 + signal.SIGTERM
    # The child went at SIGTERM, no grace period needed (a SIGKILL would come after GRACE_SECONDS).
    assert time.monotonic() - started < min(3 + scheduling_slack(), GRACE_SECONDS)


def test_run_returns_the_exit_code_of_a_child_that_ends_by_itself():
    assert run([sys.executable, "-c", "raise SystemExit(3)"], dict(os.environ)) == 3
