"""Hand-built v6 timelines for archive tests: real state files with real payloads, no data files."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from hudi_assets.avro import serialize_metadata
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import write_table_config


def ts(n: int) -> str:
    """A parsable 17-digit instant time, n minutes after 2024-01-01 00:00."""
    return (datetime(2024, 1, 1) + timedelta(minutes=n)).strftime("%Y%m%d%H%M%S") + "000"


def commit_json(t: str, operation: str = "UPSERT", compacted: bool = False,
                replace: dict | None = None) -> bytes:
    stat = {"fileId": f"f-{t}", "path": f"p1/f-{t}_0-1-1_{t}.parquet", "cdcStats": None, "prevCommit": "null",
            "numWrites": 3, "numDeletes": 0, "numUpdateWrites": 1, "numInserts": 2, "totalWriteBytes": 100,
            "totalWriteErrors": 0, "tempPath": None, "partitionPath": "p1", "totalLogRecords": 0,
            "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0,
            "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
            "fileSizeInBytes": 100, "minEventTime": None, "maxEventTime": None, "runtimeStats": None}
    obj = {"partitionToWriteStats": {"p1": [stat]}, "compacted": compacted,
           "extraMetadata": {"schema": "{}"}, "operationType": operation}
    if replace is not None:
        obj["partitionToReplaceFileIds"] = replace
    return json.dumps(obj, indent=2).encode()


def action_instant(t: str, action: str = "commit") -> dict:
    return {"timestamp": t, "action": action, "state": "COMPLETED"}


class TimelineBuilder:
    def __init__(self, path, table_type: str = "COPY_ON_WRITE", props: dict | None = None):
        self.storage = Storage(str(path))
        base = {"hoodie.table.name": "t", "hoodie.table.type": table_type, "hoodie.table.version": "6",
                "hoodie.archivelog.folder": "archived", "hoodie.timeline.layout.version": "1"}
        base.update(props or {})
        write_table_config(self.storage, base)
        self.storage.mkdirs(".hoodie/.aux")  # Hudi's initTable creates it; the maintenance lock lives there
        self.mtime = 0

    def file(self, name: str, data: bytes = b"") -> None:
        self.storage.write(f".hoodie/{name}", data)

    def commit(self, t: str, action: str = "commit", state: str = "COMPLETED", **kw) -> TimelineBuilder:
        inflight = f"{t}.inflight" if action == "commit" else f"{t}.{action}.inflight"
        self.file(f"{t}.{action}.requested")
        if state in ("INFLIGHT", "COMPLETED"):
            self.file(inflight, commit_json(t, kw.get("operation", "UPSERT")))
        if state == "COMPLETED":
            self.file(f"{t}.{action}", commit_json(t, **kw))
        return self

    def clean(self, t: str, ectr: str | None, state: str = "COMPLETED") -> TimelineBuilder:
        plan = {"earliestInstantToRetain": action_instant(ectr) if ectr else None,
                "lastCompletedCommitTimestamp": ectr or "", "policy": "KEEP_LATEST_COMMITS",
                "filesToBeDeletedPerPartition": {}, "version": 2,
                "filePathsToBeDeletedPerPartition": {
                    "p1": [{"filePath": f"p1/x_{t}.parquet", "isBootstrapBaseFile": False}]},
                "partitionsToBeDeleted": [], "extraMetadata": None}
        data = serialize_metadata("HoodieCleanerPlan", plan)
        self.file(f"{t}.clean.requested", data)
        if state != "REQUESTED":
            self.file(f"{t}.clean.inflight", data)
        if state == "COMPLETED":
            meta = {"startCleanTime": t, "timeTakenInMillis": 5, "totalFilesDeleted": 1,
                    "earliestCommitToRetain": ectr or "", "lastCompletedCommitTimestamp": ectr or "",
                    "partitionMetadata": {}, "version": 2, "bootstrapPartitionMetadata": {},
                    "extraMetadata": None}
            self.file(f"{t}.clean", serialize_metadata("HoodieCleanMetadata", meta))
        return self

    def rollback(self, t: str, target: str) -> TimelineBuilder:
        self.file(f"{t}.rollback.requested", serialize_metadata("HoodieRollbackPlan", {
            "instantToRollback": {"commitTime": target, "action": "commit"}, "RollbackRequests": [],
            "version": 1}))
        self.file(f"{t}.rollback.inflight")
        self.file(f"{t}.rollback", serialize_metadata("HoodieRollbackMetadata", {
            "startRollbackTime": t, "timeTakenInMillis": 3, "totalFilesDeleted": 0,
            "commitsRollback": [target], "partitionMetadata": {}, "version": 1,
            "instantsRollback": [{"commitTime": target, "action": "commit"}]}))
        return self

    def savepoint(self, t: str) -> TimelineBuilder:
        self.file(f"{t}.savepoint.inflight")
        self.file(f"{t}.savepoint", serialize_metadata("HoodieSavepointMetadata", {
            "savepointedBy": "me", "savepointedAt": 1, "comments": "", "partitionMetadata": {},
            "version": 1}))
        return self

    def compaction(self, t: str, state: str = "REQUESTED") -> TimelineBuilder:
        plan = {"operations": [], "extraMetadata": None, "version": 2}
        self.file(f"{t}.compaction.requested", serialize_metadata("HoodieCompactionPlan", plan))
        if state in ("INFLIGHT", "COMPLETED"):
            self.file(f"{t}.compaction.inflight")
        if state == "COMPLETED":
            self.file(f"{t}.commit", commit_json(t, "COMPACT", compacted=True))
        return self

    def clustering(self, t: str, state: str = "REQUESTED") -> TimelineBuilder:
        plan = {"operationType": "CLUSTER", "clusteringPlan": {
            "inputGroups": [], "strategy": None, "extraMetadata": None, "version": 1,
            "preserveHoodieMetadata": True}, "extraMetadata": None, "version": 1}
        self.file(f"{t}.replacecommit.requested", serialize_metadata("HoodieRequestedReplaceMetadata", plan))
        if state in ("INFLIGHT", "COMPLETED"):
            self.file(f"{t}.replacecommit.inflight")
        if state == "COMPLETED":
            self.file(f"{t}.replacecommit", commit_json(t, "CLUSTER", replace={"p1": [f"old-{t}"]}))
        return self

    def table(self) -> HoodieTable:
        return HoodieTable(self.storage)

    def metadata_table(self, compactions: list[str], deltas: list[str]) -> TimelineBuilder:
        """A minimal .hoodie/metadata table with the given completed compactions and deltacommits."""
        mdt = Storage(f"{self.storage.base_uri}/.hoodie/metadata")
        write_table_config(mdt, {"hoodie.table.name": "t_metadata", "hoodie.table.type": "MERGE_ON_READ",
                                 "hoodie.table.version": "6"})
        for t in deltas:
            mdt.write(f".hoodie/{t}.deltacommit.requested", b"")
            mdt.write(f".hoodie/{t}.deltacommit", commit_json(t, "UPSERT_PREPPED"))
        for t in compactions:
            mdt.write(f".hoodie/{t}.compaction.requested", serialize_metadata(
                "HoodieCompactionPlan", {"operations": [], "extraMetadata": None, "version": 2}))
            mdt.write(f".hoodie/{t}.commit", commit_json(t, "COMPACT", compacted=True))
        return self
