"""What differs for savepoints on Hudi 1.x tables (table versions 8 and 9; the shared behaviour is
tested on both versions in the other files here): the completed file is named by a completion time,
which must not move the savepointed commit's own completion time, and the metadata table is left as
it was (Hudi 1.x writes nothing into it for a savepoint)."""

from __future__ import annotations

from hudi_assets.demo import generate_table
from hudi_assets.savepoint import Savepointer
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.layout2 import parse_layout2_name


def test_each_commit_keeps_its_completion_time_beside_its_savepoint(tmp_path):
    """A savepoint's file carries its commit's requested time and a later completion time; the
    commit's completion time (the file-slicing key of its log files) is the commit's whatever order
    the folder lists the two files in (Hudi: the first in timeline order wins)."""
    made = generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", partitions=2, commits=12, seed=11,
                          savepoint=False, failed_write=False, pending_compaction=False, table_version=9)
    service = Savepointer(HoodieTable(made.storage))
    for instant in made.completed_commits:
        service.create(instant)
    commits, savepoints = {}, {}
    for status in made.storage.list(".hoodie/timeline"):
        parsed = None if status.is_dir else parse_layout2_name(status.name)
        if parsed is not None and parsed[0].is_completed:
            (savepoints if parsed[0].action == "savepoint" else commits)[parsed[0].timestamp] = parsed[1]
    assert savepoints.keys() == set(made.completed_commits)
    assert all(savepoints[t] > commits[t] for t in savepoints)
    timeline = HoodieTable(made.storage).active_timeline
    assert {t: timeline.completion_times[t] for t in savepoints} == {t: commits[t] for t in savepoints}


def test_create_and_delete_leave_the_metadata_table_as_it_was(tmp_path):
    made = generate_table(Storage(str(tmp_path / "t")), "MERGE_ON_READ", partitions=2, commits=6, seed=2,
                          savepoint=False, failed_write=False, pending_compaction=False, metadata_table=True,
                          table_version=9)

    def metadata_files() -> dict[str, int]:
        return {s.path: s.size for s in made.storage.list(".hoodie/metadata", recursive=True) if not s.is_dir}

    before = metadata_files()
    assert before
    table = HoodieTable(made.storage)
    savepoint = table.maintenance.savepoint(made.completed_commits[2])
    assert savepoint.file_count > 0 and metadata_files() == before
    assert [u.savepoint.instant for u in table.maintenance.savepoints()] == [savepoint.instant]
    table.maintenance.delete_savepoint(savepoint.instant)
    assert metadata_files() == before and table.maintenance.savepoints() == []
