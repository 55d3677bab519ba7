"""The Java-written v9 rollback fixture of ../shared put back as it was before its rollback, and its
Java-written plan and metadata, for the tests of rollback on table versions 8 and 9.

The fixture holds a rollback Java 1.1 made of deltacommit 20260403184242950 (on the data table and,
at the same instant, on its metadata table). `failed_v9` puts the table back as it was before: the
rollback's state files gone, the deltacommit pending again and its files back (copies of other files
of the same kind: they are deleted unread).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
from hudi import HudiReadOptions, HudiTable

from hudi_assets.avro import deserialize_metadata
from hudi_assets.storage import Storage
from hudi_assets.table_config import load_table_config, write_table_config
from support.refdata import shared_path, unzip_table

FIXTURE = "sample_table__mor__avro__v9_nonpartitioned_rollback"
FAILED = "20260403184242950"
ROLLBACK = "20260403184259077"
NEXT = "20260403184302162"  # the deltacommit after the rollback
JAVA_BASE = "/opt/data/warehouse/v9_nonpartitioned_rollback_mor"
FAILED_FILE = "cefd0149-a1ea-4981-abda-34e0b9d9ef12-0_0-33-86_20260403184242950.parquet"
TIMELINE = ".hoodie/timeline"
MDT_TIMELINE = ".hoodie/metadata/.hoodie/timeline"


def _fixture(tmp_path: Path) -> Path:
    shared_path("tables", f"{FIXTURE}.zip")  # skips when ../shared is absent
    return unzip_table(FIXTURE, tmp_path / "java")


def java_table(tmp_path: Path) -> Path:
    return tmp_path / "java" / "v9_nonpartitioned_rollback"


def java_records(base: Path, folder: str = TIMELINE) -> tuple[dict, dict]:
    """The Java-written plan and metadata of the fixture's rollback (`MDT_TIMELINE`: its metadata
    table's)."""
    timeline = base / folder
    plan_file = timeline / f"{ROLLBACK}.rollback.requested"
    completed = next(timeline.glob(f"{ROLLBACK}_*.rollback"))
    return (deserialize_metadata(plan_file.read_bytes(), "HoodieRollbackPlan", str(plan_file)),
            deserialize_metadata(completed.read_bytes(), "HoodieRollbackMetadata", str(completed)))


def _pending_again(timeline: Path) -> None:
    """`FAILED` back on a timeline as a pending deltacommit, the rollback's state files gone. A
    deltacommit's inflight holds its workload as Avro commit metadata; the next one's will do."""
    for state in timeline.glob(f"{ROLLBACK}*"):
        state.unlink()
    (timeline / f"{FAILED}.deltacommit.requested").write_bytes(b"")
    shutil.copy(timeline / f"{NEXT}.deltacommit.inflight", timeline / f"{FAILED}.deltacommit.inflight")


def failed_v9(tmp_path: Path, *, metadata_table: bool = False) -> Path:
    """The fixture before Java rolled `FAILED` back. With `metadata_table`, the metadata table too:
    its deltacommit of `FAILED` completed (the data write failed after it) and its log files back;
    else the metadata table is dropped."""
    java = _fixture(tmp_path)
    base = tmp_path / "ours"
    shutil.copytree(java, base)
    _pending_again(base / TIMELINE)
    shutil.copy(next(base.glob("*_20260403184238571.parquet")), base / FAILED_FILE)
    if metadata_table:
        mdt_timeline = base / MDT_TIMELINE
        _pending_again(mdt_timeline)
        completed = next(mdt_timeline.glob(f"{NEXT}_*.deltacommit"))
        shutil.copy(completed, mdt_timeline / f"{FAILED}_20260403184243900.deltacommit")
        plan, _ = java_records(java, MDT_TIMELINE)
        for request in plan["RollbackRequests"]:
            for path in request["filesToBeDeleted"]:
                log_file = base / _relative(path, JAVA_BASE)
                shutil.copy(next(log_file.parent.glob(f"*_{NEXT}.log.*")), log_file)
    else:
        shutil.rmtree(base / ".hoodie" / "metadata")
        storage = Storage(str(base))
        props = dict(load_table_config(storage).props)
        props["hoodie.table.metadata.partitions"] = ""
        write_table_config(storage, props)
    return base


def _relative(path: str, base: str) -> str:
    assert path.startswith(base + "/"), path
    return path[len(base) + 1:]


def plan_relative(plan: dict, base: str) -> dict:
    return {**plan, "RollbackRequests": [
        {**r, "filesToBeDeleted": [_relative(p, base) for p in r["filesToBeDeleted"]]}
        for r in plan["RollbackRequests"]]}


def metadata_relative(record: dict, base: str) -> dict:
    partitions = {name: {**p, "successDeleteFiles": [_relative(f, base) for f in p["successDeleteFiles"]],
                         "failedDeleteFiles": [_relative(f, base) for f in p["failedDeleteFiles"]]}
                  for name, p in record["partitionMetadata"].items()}
    return {**record, "partitionMetadata": partitions}


def rows(base: Path) -> list[dict]:
    batches = HudiTable(str(base)).read(HudiReadOptions())
    rows = pa.Table.from_batches(batches).to_pylist()
    return sorted(rows, key=lambda r: (r["txn_id"], r["_hoodie_commit_time"]))


def files(base: Path) -> list[str]:
    return sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())
