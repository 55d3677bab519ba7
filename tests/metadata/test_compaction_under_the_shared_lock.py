"""A metadata-table compaction that is running under the lock provider the writers share is not one a
writer left behind: a clean or a rollback that finds it pending waits for the lock and then goes on,
instead of refusing as it must for a compaction still pending once it holds the lock (a crashed one).
Found by the live-writer soak (`test_mdt_services_soak.py`): the data table's clean failed whenever it
looked while the writer or `metadata --run-services` compacted the metadata table."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from hudi_assets.clean import Cleaner
from hudi_assets.demo import generate_table
from hudi_assets.exceptions import HudiAssetsError
from hudi_assets.metadata import MetadataTable
from hudi_assets.metadata.compaction import compaction_due, execute_compaction, schedule_compaction
from hudi_assets.metadata.rollback_records import MetadataTableSink
from hudi_assets.metadata.validate import validate_files
from hudi_assets.rollback.rollbacker import Rollbacker
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.transaction import table_lock

PROVIDER = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
SHARED_LOCK = {"hoodie.write.lock.provider": PROVIDER, "hoodie.write.lock.client.num_retries": "200",
               "hoodie.write.lock.client.wait_time_ms_between_retry": "50",
               "hoodie.cleaner.commits.retained": "3", "hoodie.metadata.compact.max.delta.commits": "3"}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, str]:
    demo = generate_table(Storage(str(tmp_path_factory.mktemp("mdt") / "t")), "MERGE_ON_READ", commits=14,
                          bloom_entries=100, seed=3, metadata_table=True, pending_compaction=False,
                          failed_write=True)
    return Path(demo.base_path), demo.failed_instant


def _beside_a_running_compaction(base: Path, service) -> object:
    """Run `service()` in a thread while this one holds the shared lock with a metadata-table
    compaction requested (as its writer holds it while compacting), then completes the compaction
    and releases the lock. Returns what the service returned, or raises what it raised."""
    data = HoodieTable(str(base), hoodie_conf=SHARED_LOCK)
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = service()
        except HudiAssetsError as error:
            outcome["error"] = error

    with table_lock(data, "metadata table services"):
        metadata = MetadataTable(str(base))
        instant = compaction_due(metadata, 3)
        assert instant is not None
        schedule_compaction(metadata, instant)
        thread = threading.Thread(target=run)
        thread.start()
        time.sleep(1.0)  # the service looks while the compaction is pending
        execute_compaction(MetadataTable(str(base)), instant)
    thread.join(60)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def test_a_clean_waits_for_a_compaction_running_under_the_shared_lock(pristine, tmp_path):
    base = Path(shutil.copytree(pristine[0], tmp_path / "t"))
    table = HoodieTable(str(base), hoodie_conf=SHARED_LOCK)
    result = _beside_a_running_compaction(base, lambda: Cleaner.for_table(table).clean())
    assert result.files_deleted > 0
    assert validate_files(MetadataTable(str(base))) == []


def test_a_rollback_waits_for_a_compaction_running_under_the_shared_lock(pristine, tmp_path):
    base = Path(shutil.copytree(pristine[0], tmp_path / "t"))
    table = HoodieTable(str(base), hoodie_conf=SHARED_LOCK)
    rollbacker = Rollbacker(table, metadata=MetadataTableSink(table))
    result = _beside_a_running_compaction(base, lambda: rollbacker.rollback(pristine[1], force=True))
    assert [r.instant_time for r in result.executed] == [pristine[1]]
    assert validate_files(MetadataTable(str(base))) == []
