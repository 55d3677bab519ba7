"""SIGKILL at every step of the metadata table's services leaves the metadata table readable
(`metadata --validate` exits 0, hudi-rs reads the data table the same), and the next run completes
the work as Hudi's writer would (a compaction under its own instant, never a second one)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.stalled_metadata import uncleaned_metadata_table

from hudi_assets.cli import main
from hudi_assets.metadata import MetadataTable

CONF = ["hoodie.metadata.compact.max.delta.commits=3"]
STEPS = ["CLEAN_DELETES:3", "CLEAN_COMPLETE", "COMPACTION_REQUESTED", "COMPACTION_INFLIGHT",
         "COMPACTION_BASE_FILE_WRITTEN:2", "COMPACTION_COMPLETED", "ARCHIVE_BEFORE_WRITE",
         "ARCHIVE_BEFORE_DELETE", "ARCHIVE_DELETING_COMPLETED"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    return uncleaned_metadata_table(tmp_path_factory.mktemp("mdt"))


def _rows(base: Path) -> list[str] | None:
    try:
        import hudi
        import pyarrow as pa
    except ImportError:
        return None
    batches = hudi.HudiTable(str(base)).read()
    return sorted(r["_hoodie_record_key"] + r["_hoodie_commit_time"]
                  for r in pa.Table.from_batches(batches).to_pylist())


def _killed(command: list[str], stderr: Path) -> int:
    """Run `command` in a session of its own; when it dies, end the worker processes it forked
    (the local engine's), which a SIGKILL leaves behind."""
    with stderr.open("w") as err:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        try:
            return proc.wait(timeout=300)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.parametrize("step", STEPS)
def test_kill_9_at_each_step_leaves_the_metadata_table_readable_and_the_next_run_finishes(pristine, tmp_path,
                                                                                          capsys, step):
    base = Path(shutil.copytree(pristine, tmp_path / "t"))
    rows = _rows(base)
    listing = MetadataTable(str(base)).files_listing.partitions
    old_compaction = MetadataTable(str(base)).latest_compaction().timestamp
    script = Path(__file__).parents[1] / "support" / "kill_metadata_services.py"
    kill = [sys.executable, str(script), str(base), step, *CONF]
    assert _killed(kill, tmp_path / "stderr") == -9, (tmp_path / "stderr").read_text()
    assert main(["metadata", str(base), "--validate"]) == 0, capsys.readouterr()
    assert MetadataTable(str(base)).files_listing.partitions == listing
    assert _rows(base) == rows

    args = ["metadata", str(base), "--run-services", "--no-active-writer", "--hoodie-conf", CONF[0]]
    assert main(args) == 0, capsys.readouterr().err
    after = MetadataTable(str(base))
    compactions = [i.timestamp for i in after.timeline.filter_actions({"commit", "compaction"})
                   if i.timestamp > old_compaction]
    assert len(compactions) == 1 and after.latest_compaction().timestamp == compactions[0]
    assert after.deltacommits_since(after.latest_compaction()) == []
    assert not after.timeline.filter_pending()
    assert after.files_listing.partitions == listing
    assert main(["metadata", str(base), "--validate"]) == 0, capsys.readouterr()
    assert _rows(base) == rows
