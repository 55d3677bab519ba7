"""The UI launcher's process handling, without Dagster: a stop reaches the whole group of the child,
SIGKILL follows for what ignores SIGTERM, and a launcher started with SIGINT ignored (as from a
non-interactive shell's `&`) still gives its child default signal handling."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from hudi_assets.orchestration.ui import STOP_SECONDS, ProcessGroup, run

# A parent that ignores SIGTERM, with a grandchild in its group.
STUBBORN = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)")


def test_stop_kills_the_whole_group_even_when_it_ignores_sigterm():
    group = ProcessGroup([sys.executable, "-c", STUBBORN], dict(os.environ))
    time.sleep(1)
    started = time.monotonic()
    group.stop()
    assert time.monotonic() - started < STOP_SECONDS + 0.5
    assert not group.alive()


def test_a_launcher_with_sigint_ignored_still_stops_its_child_on_sigterm(tmp_path):
    marker = tmp_path / "child"
    # The child reports its SIGINT disposition, then waits to be stopped (default SIGTERM: it dies).
    child = (f"import signal, time; open({str(marker)!r}, 'w').write(str(signal.getsignal(signal.SIGINT))); "
             "time.sleep(60)")
    launcher = subprocess.Popen(
        [sys.executable, "-c", f"import sys; from hudi_assets.orchestration.ui import run; "
                               f"sys.exit(run([sys.executable, '-c', {child!r}], {{}}))"],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.monotonic() + 30
    while not (marker.exists() and marker.read_text()):
        assert time.monotonic() < deadline and launcher.poll() is None
        time.sleep(0.1)
    assert "default_int_handler" in marker.read_text()  # not Handlers.SIG_IGN
    started = time.monotonic()
    launcher.send_signal(signal.SIGTERM)
    assert launcher.wait(timeout=15) == 128 + signal.SIGTERM
    assert time.monotonic() - started < 3  # the child went at SIGTERM, no grace period needed


def test_run_returns_the_exit_code_of_a_child_that_ends_by_itself():
    assert run([sys.executable, "-c", "raise SystemExit(3)"], dict(os.environ)) == 3
