"""`hudi-assets metadata --run-services` in a loop beside the live writer of `tests/test_live_writer.py`
keeping a metadata table (issue 22's soak), with the clean and archive loops of that soak, on a
copy-on-write and a merge-on-read table.

Every process shares the FileSystemBasedLockProvider through one properties file. The writer runs the
metadata table's compaction itself, as Hudi's does, at its own `hoodie.metadata.compact.max.delta
.commits` (12: a setting of the writer alone here, so that the loop, at the shared setting of 4,
compacts first most of the time). Afterwards: no metadata record was lost (every completed commit has
its metadata deltacommit, `metadata --validate` exits 0, hudi-rs reads the last commit as the writer
wrote it; the files it names as orphans, not drift, are crashed appends no rollback names), no
compaction ran twice or was left pending, the loop compacted, cleaned and archived the
metadata table, and no two processes ever held the lock at once.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from hudi_assets.cli import main
from hudi_assets.metadata_services.write_config import metadata_table
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import COPY_ON_WRITE, MERGE_ON_READ
from hudi_assets.timeline.archived import ArchivedTimeline
from hudi_assets.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT, State
from tests.repair.test_orphans_soak import failed_appends_no_rollback_names
from tests.test_live_writer import (
    ARCHIVE_ARGS,
    CLEAN_ARGS,
    SETTINGS,
    _check_lock_never_shared,
    _outcomes,
    _read,
    _run_soak,
)

pytestmark = pytest.mark.soak

MAX_DELTA = "hoodie.metadata.compact.max.delta.commits"
SERVICES_ARGS = ("metadata", "--run-services", "--json")


def _instants(mdt: HoodieTable, actions: set[str]) -> Counter:
    """Each metadata-table instant of `actions` (any state: once per time) on the active timeline,
    plus each completed one on the archived timeline."""
    found = Counter(i.timestamp for i in mdt.reload_timeline().filter_actions(actions))
    found.update(e.instant.timestamp for e in ArchivedTimeline.load(mdt).entries()
                 if e.instant.action in actions and e.instant.state == State.COMPLETED)
    return found


@pytest.mark.parametrize("table_type", [COPY_ON_WRITE, MERGE_ON_READ])
def test_metadata_services_beside_a_live_writer_keeping_a_metadata_table(tmp_path, table_type, request,
                                                                         capsys):
    seconds = min(request.config.getoption("--soak-seconds"), 30.0)
    settings = {**SETTINGS, MAX_DELTA: "4"}
    soak = _run_soak(tmp_path, table_type, seconds, (CLEAN_ARGS, ARCHIVE_ARGS, SERVICES_ARGS),
                     settings=settings, writer_args=("--metadata-table", "--hoodie-conf", f"{MAX_DELTA}=12"))
    soak.cli(*SERVICES_ARGS)  # after _run_soak's last clean rolled back the last crashed writes
    failures = [(args, code, out[-3000:]) for args, code, out in soak.runs if code != 0]
    assert not failures, "\n".join(f"{a} {c} {o}" for a, c, o in failures)

    capsys.readouterr()
    code = main(["metadata", str(soak.base), "--validate", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report["differences"][:5]
    # What the listing leaves out are the writer's crashed appends no rollback names (on MOR): orphans.
    orphans = {f"{o['partition']}/{o['file']}" for o in report["orphans"]}
    assert orphans <= failed_appends_no_rollback_names(soak), sorted(orphans)[:5]
    completed = {r["instant"]: r for r in _outcomes(soak)["completed"]}
    assert _read(soak.base) == completed[max(completed)]["rows"]
    _check_lock_never_shared(soak)

    # Each run's output starts with its JSON report (stdout), its log (stderr) follows.
    runs = [json.JSONDecoder().raw_decode(out)[0] for args, _, out in soak.runs if args[0] == "metadata"]
    assert len(runs) >= 3
    assert any(r["compacted"] for r in runs), "the loop compacted the metadata table"
    assert any(r["files_cleaned"] for r in runs), "the loop's clean deleted metadata files"
    assert any(r["instants_archived"] for r in runs), "the loop archived metadata instants"

    mdt = metadata_table(HoodieTable(str(soak.base), props_file=str(soak.props)))
    assert set(completed) <= set(_instants(mdt, {DELTA_COMMIT})), "a completed commit has no deltacommit"
    compactions = _instants(mdt, {COMMIT, COMPACTION})
    assert len(compactions) >= 3 and set(compactions.values()) == {1}, compactions
    assert not mdt.reload_timeline().filter_pending(), "no metadata-table instant left pending"
