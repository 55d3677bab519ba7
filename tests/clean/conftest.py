"""Hand-built tables for the cleaner tests: every instant, data file and savepoint written by hand,
so that the files a clean must delete are obvious from the spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_assets.avro import serialize_metadata
from hudi_assets.clean import CleanConfig
from hudi_assets.config import WriteConfig
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config
from hudi_assets.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_assets.timeline.instant import Instant, State


def ts(n: int) -> str:
    """A 17-digit instant time: 2024-01-01 00:00 plus n minutes."""
    return f"20240101{n // 60:02d}{n % 60:02d}00000"


class TableBuilder:
    def __init__(self, root: Path, table_type: str = "COPY_ON_WRITE", partitioned: bool = True,
                 extra_props: dict[str, str] | None = None):
        self.root = root
        self.storage = Storage(str(root))
        self.is_mor = table_type == "MERGE_ON_READ"
        props = {"hoodie.table.name": "t", "hoodie.table.type": table_type, "hoodie.table.version": "6",
                 "hoodie.timeline.layout.version": "1", "hoodie.table.base.file.format": "PARQUET",
                 "hoodie.table.partition.fields": "dt" if partitioned else "",
                 "hoodie.table.recordkey.fields": "id", **(extra_props or {})}
        self.storage.mkdirs(".hoodie")
        write_table_config(self.storage, props)

    @staticmethod
    def base(fid: str, instant: str) -> str:
        return f"{fid}_0-1-1_{instant}.parquet"

    @staticmethod
    def log(fid: str, base_instant: str, version: int = 1) -> str:
        return f".{fid}_{base_instant}.log.{version}_0-1-1"

    def _instant(self, instant: Instant, data: bytes = b"") -> None:
        self.storage.write(f".hoodie/{instant.file_name}", data)

    def files(self, partition: str, *names: str) -> list[str]:
        self.storage.write(f"{partition}/.hoodie_partition_metadata" if partition
                           else ".hoodie_partition_metadata", b"#partition metadata\n")
        for name in names:
            self.storage.write(f"{partition}/{name}" if partition else name, b"x")
        return [f"{partition}/{n}" if partition else n for n in names]

    def commit(self, instant_time: str, writes: dict[str, list[str]], action: str | None = None,
               replaced: dict[str, list[str]] | None = None, state: State = State.COMPLETED) -> None:
        """Write data files and the instant (requested, inflight, and completed unless pending)."""
        action = action or ("deltacommit" if self.is_mor else "commit")
        if replaced is not None:
            action = "replacecommit"
        stats: dict[str, list[WriteStat]] = {}
        for partition, names in writes.items():
            for rel in self.files(partition, *names):
                name = rel.rpartition("/")[2]
                fid = name.lstrip(".").partition("_")[0]
                stats.setdefault(partition, []).append(WriteStat.new(fileId=fid, path=rel,
                                                                     partitionPath=partition))
        requested = Instant(instant_time, action, State.REQUESTED)
        self._instant(requested)
        self._instant(requested.with_state(State.INFLIGHT))
        if state is State.COMPLETED:
            meta = CommitMetadata(stats, operation_type="UPSERT", partition_to_replace_file_ids=replaced)
            self._instant(requested.with_state(State.COMPLETED), meta.to_json())

    def savepoint(self, instant_time: str, files: dict[str, list[str]]) -> None:
        record = {"savepointedBy": "t", "savepointedAt": 0, "comments": "", "version": 1,
                  "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": n}
                                        for p, n in files.items()}}
        self._instant(Instant(instant_time, "savepoint", State.INFLIGHT))
        data = serialize_metadata("HoodieSavepointMetadata", record)
        self._instant(Instant(instant_time, "savepoint"), data)

    def compaction(self, instant_time: str, ops: list[tuple[str, str, str]]) -> None:
        """A pending compaction of (partition, file id, base instant) operations."""
        plan = {"operations": [{"baseInstantTime": b, "deltaFilePaths": [], "dataFilePath": None,
                                "fileId": f, "partitionPath": p, "metrics": {}, "bootstrapFilePath": None}
                               for p, f, b in ops],
                "extraMetadata": None, "version": 2, "strategy": None, "preserveHoodieMetadata": False}
        self._instant(Instant(instant_time, "compaction", State.REQUESTED),
                      serialize_metadata("HoodieCompactionPlan", plan))

    def completed_clean(self, instant_time: str, ectr: str, empty: bool = False,
                        savepoints: str | None = None, last_commit: str = "") -> None:
        record = {"startCleanTime": instant_time, "timeTakenInMillis": 1, "totalFilesDeleted": 0,
                  "earliestCommitToRetain": ectr, "lastCompletedCommitTimestamp": last_commit,
                  "partitionMetadata": {}, "version": 2, "bootstrapPartitionMetadata": {},
                  "extraMetadata": None if savepoints is None else {"savepointed_timestamps": savepoints}}
        for state in (State.REQUESTED, State.INFLIGHT):
            self._instant(Instant(instant_time, "clean", state))
        data = b"" if empty else serialize_metadata("HoodieCleanMetadata", record)
        self._instant(Instant(instant_time, "clean"), data)

    def table(self) -> HoodieTable:
        return HoodieTable(str(self.root))

    ts = staticmethod(ts)

    @staticmethod
    def config(conf: dict[str, str] | None = None) -> CleanConfig:
        return CleanConfig.from_write_config(WriteConfig.load({}, None, conf or {}))


@pytest.fixture
def builder(tmp_path):
    def make(table_type: str = "COPY_ON_WRITE", partitioned: bool = True, **props) -> TableBuilder:
        return TableBuilder(tmp_path / "t", table_type, partitioned, props)
    return make
