"""Hand-built v6 tables (and, with `version=9`, Hudi 1.x ones) for tests: every state file holds the
payload Hudi writes there (commit JSON, or Avro in 1.x; Avro plans and metadata), and the data files a
commit names exist, so what a table service must do follows from the test itself."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from pathlib import Path

from hudi_assets.avro import serialize_metadata
from hudi_assets.clean.plan import CleanerPlan
from hudi_assets.demo.generator import generate_table
from hudi_assets.metadata.initializer import initialize_from_filesystem
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import load_table_config, write_table_config
from hudi_assets.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_assets.timeline.instant import Instant, State
from hudi_assets.timeline.instant_time import new_instant_time
from hudi_assets.timeline.layout2 import CommitMetadataSerDeV2, layout2_file_name

DEFAULT_PARTITION = "p1"


def ts(n: int) -> str:
    """A parsable 17-digit instant time, n minutes after 2024-01-01 00:00."""
    return (datetime(2024, 1, 1) + timedelta(minutes=n)).strftime("%Y%m%d%H%M%S") + "000"


def base_file(file_id: str, instant: str) -> str:
    """A base file name of `file_id` written at `instant`."""
    return f"{file_id}_0-1-1_{instant}.parquet"


def log_file(file_id: str, base_instant: str, version: int = 1) -> str:
    """A log file name of `file_id`'s slice at `base_instant`."""
    return f".{file_id}_{base_instant}.log.{version}_0-1-1"


def _file_id(name: str) -> str:
    return name.lstrip(".").partition("_")[0]


def pending_clean(table: HoodieTable, plan: CleanerPlan | None, inflight: bool = False) -> Instant:
    """A clean requested (and, with `inflight`, started) at a new instant time of an existing table,
    its state files holding `plan` (None: empty files)."""
    t = new_instant_time(i.timestamp for i in table.reload_timeline().raw_instants)
    requested = Instant(t, "clean", State.REQUESTED)
    data = b"" if plan is None else plan.serialize()
    table.storage.write(f".hoodie/{requested.file_name}", data)
    if inflight:
        table.storage.write(f".hoodie/{requested.with_state(State.INFLIGHT).file_name}", data)
    return requested


def demo_table(root: Path, table_type: str, props: Mapping[str, str] | None = None, **shape) -> Path:
    """A demo table at `root` (the generator's data files and timeline, readable by Hudi), its
    hoodie.properties overlaid with `props`; `shape` goes to `generate_table`."""
    storage = Storage(str(root))
    generate_table(storage, table_type, **shape)
    if props:
        write_table_config(storage, {**load_table_config(storage).props, **props})
    return Path(root)


def completion_time(t: str) -> str:
    """The completion time the builder gives an instant of layout 2: 30 seconds after it was requested."""
    return (datetime.strptime(t, "%Y%m%d%H%M%S%f") + timedelta(seconds=30)).strftime("%Y%m%d%H%M%S%f")[:17]


class TableBuilder:
    """A v6 table (or, with `version=9`, a Hudi 1.x table: state files in `.hoodie/timeline`, completed
    ones named with `completion_time`, commit metadata in Avro, empty clean inflights) written instant
    by instant; the methods writing instants return the builder."""

    def __init__(self, root: Path | str, table_type: str = "COPY_ON_WRITE", partitioned: bool = True,
                 props: dict[str, str] | None = None, version: int = 6):
        self.root = Path(root)
        self.storage = Storage(str(root))
        self.is_mor = table_type == "MERGE_ON_READ"
        self.layout2 = version >= 8
        self.timeline_folder = ".hoodie/timeline" if self.layout2 else ".hoodie"
        layout = ({"hoodie.timeline.layout.version": "2", "hoodie.timeline.path": "timeline",
                   "hoodie.timeline.history.path": "history", "hoodie.table.timeline.timezone": "UTC"}
                  if self.layout2 else {"hoodie.timeline.layout.version": "1"})
        write_table_config(self.storage, {
            "hoodie.table.name": "t", "hoodie.table.type": table_type, "hoodie.table.version": str(version),
            **layout, "hoodie.table.base.file.format": "PARQUET",
            "hoodie.table.partition.fields": "dt" if partitioned else "",
            "hoodie.table.recordkey.fields": "id", "hoodie.archivelog.folder": "archived", **(props or {})})
        self.storage.mkdirs(".hoodie/.aux")  # Hudi's initTable creates it; the maintenance lock lives there

    def table(self) -> HoodieTable:
        return HoodieTable(self.storage)

    # ------------------------------------------------------------------ raw files
    def state_file(self, name: str, data: bytes = b"") -> TableBuilder:
        """Any file of the timeline folder, as given (for state files no writer would leave)."""
        self.storage.write(f"{self.timeline_folder}/{name}", data)
        return self

    def state_files(self, *names: str) -> TableBuilder:
        """Empty files of `.hoodie`, as named."""
        for name in names:
            self.state_file(name)
        return self

    def write(self, files: Mapping[str, bytes]) -> TableBuilder:
        """Any files under the base path, as given (layouts no writer would leave)."""
        for path, data in files.items():
            self.storage.write(path, data)
        return self

    def _instant(self, instant: Instant, data: bytes = b"") -> None:
        if self.layout2 and instant.is_completed:
            self.state_file(layout2_file_name(instant, completion_time(instant.timestamp)), data)
        else:
            self.state_file(instant.file_name, data)

    def _commit_bytes(self, meta: CommitMetadata) -> bytes:
        """Commit metadata as the table's version writes it (JSON; Avro in Hudi 1.x)."""
        return CommitMetadataSerDeV2().serialize(meta) if self.layout2 else meta.to_json()

    def _requested_then_inflight(self, requested: Instant, plan: bytes, state: State,
                                 inflight: bytes = b"") -> bool:
        """A table service's plan requested, and inflight unless `state` is REQUESTED; whether the
        caller is to complete it."""
        self._instant(requested, plan)
        if state is not State.REQUESTED:
            self._instant(requested.with_state(State.INFLIGHT), inflight)
        return state is State.COMPLETED

    def files(self, partition: str, *names: str) -> list[str]:
        """Data files (and the partition's metafile); returns their paths relative to the base."""
        self.storage.write(f"{partition}/.hoodie_partition_metadata" if partition
                           else ".hoodie_partition_metadata", b"#partition metadata\n")
        for name in names:
            self.storage.write(f"{partition}/{name}" if partition else name, b"x")
        return [f"{partition}/{n}" if partition else n for n in names]

    def _write_stats(self, writes: dict[str, list[str]]) -> dict[str, list[WriteStat]]:
        """The data files written and one stat for each."""
        stats: dict[str, list[WriteStat]] = {}
        for partition, names in writes.items():
            stats[partition] = [WriteStat.new(fileId=_file_id(rel.rpartition("/")[2]), path=rel,
                                              partitionPath=partition)
                                for rel in self.files(partition, *names)]
        return stats

    # ------------------------------------------------------------------ writes
    def commit(self, t: str, writes: dict[str, list[str]] | None = None, *, action: str | None = None,
               state: State = State.COMPLETED, operation: str = "UPSERT",
               replaced: dict[str, list[str]] | None = None) -> TableBuilder:
        """A write: requested, inflight holding its workload profile, the data files, and unless
        pending the completed commit metadata. `writes` maps partition -> file names (default: a
        new file group in p1); `replaced` (partition -> file ids) makes it a replacecommit."""
        if writes is None:
            writes = {DEFAULT_PARTITION: [base_file(f"f-{t}", t)]}
        action = action or ("replacecommit" if replaced is not None
                            else "deltacommit" if self.is_mor else "commit")
        requested = Instant(t, action, State.REQUESTED)
        # Spark's insert_overwrite requests `new HoodieRequestedReplaceMetadata()`: every field null.
        self._instant(requested, b"" if action != "replacecommit" else serialize_metadata(
            "HoodieRequestedReplaceMetadata",
            {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}))
        if state is State.REQUESTED:
            return self
        workload = {p: [WriteStat.new(fileId=_file_id(n), path=None, partitionPath=None) for n in names]
                    for p, names in writes.items()}
        self._instant(requested.with_state(State.INFLIGHT),
                      self._commit_bytes(CommitMetadata(workload, operation_type=operation)))
        stats = self._write_stats(writes)
        if state is State.COMPLETED:
            meta = CommitMetadata(stats, operation_type=operation, partition_to_replace_file_ids=replaced)
            self._instant(requested.with_state(State.COMPLETED), self._commit_bytes(meta))
        return self

    def compaction(self, t: str, ops: Iterable[tuple[str, str, str]] = (),
                   state: State = State.REQUESTED) -> TableBuilder:
        """A compaction of (partition, file id, base instant) operations; completed, it writes a new
        base file for each and a `commit`."""
        ops = list(ops)
        plan = {"operations": [{"baseInstantTime": b, "deltaFilePaths": [], "dataFilePath": None,
                                "fileId": f, "partitionPath": p, "metrics": {}, "bootstrapFilePath": None}
                               for p, f, b in ops],
                "extraMetadata": None, "version": 2, "strategy": None, "preserveHoodieMetadata": False}
        requested = Instant(t, "compaction", State.REQUESTED)
        if self._requested_then_inflight(requested, serialize_metadata("HoodieCompactionPlan", plan), state):
            writes: dict[str, list[str]] = {}
            for p, f, _ in ops:
                writes.setdefault(p, []).append(base_file(f, t))
            meta = CommitMetadata(self._write_stats(writes), compacted=True, operation_type="COMPACT")
            self._instant(Instant(t, "commit"), self._commit_bytes(meta))
        return self

    def clustering(self, t: str, replaced: dict[str, list[str]] | None = None,
                   state: State = State.REQUESTED) -> TableBuilder:
        """A clustering of the file groups `replaced` (partition -> file ids; default one group of
        p1) into one new group per partition."""
        if replaced is None:
            replaced = {DEFAULT_PARTITION: [f"old-{t}"]}
        groups = [{"slices": [{"dataFilePath": None, "deltaFilePaths": [], "fileId": f, "partitionPath": p,
                               "bootstrapFilePath": None, "version": 1} for f in ids],
                   "metrics": {}, "numOutputFileGroups": 1, "extraMetadata": None, "version": 1}
                  for p, ids in replaced.items()]
        plan = {"operationType": "CLUSTER", "clusteringPlan": {
            "inputGroups": groups, "strategy": None, "extraMetadata": None, "version": 1,
            "preserveHoodieMetadata": True}, "extraMetadata": None, "version": 1}
        requested = Instant(t, "replacecommit", State.REQUESTED)
        data = serialize_metadata("HoodieRequestedReplaceMetadata", plan)
        if self._requested_then_inflight(requested, data, state):
            stats = self._write_stats({p: [base_file(f"f-{t}", t)] for p in replaced})
            meta = CommitMetadata(stats, operation_type="CLUSTER", partition_to_replace_file_ids=replaced)
            self._instant(requested.with_state(State.COMPLETED), self._commit_bytes(meta))
        return self

    # ------------------------------------------------------------------ table services
    def clean(self, t: str, ectr: str | None, state: State = State.COMPLETED, *,
              last_commit: str | None = None, savepoints: str | None = None, empty: bool = False,
              ) -> TableBuilder:
        """A clean that retained from `ectr` (None: no earliest commit to retain); the plan is in the
        requested and inflight files. `last_commit` defaults to `ectr`; `savepoints` is the completed
        clean's savepointed_timestamps; `empty` leaves the completed file empty (a crashed writer's)."""
        last = (ectr or "") if last_commit is None else last_commit
        plan = {"earliestInstantToRetain": {"timestamp": ectr, "action": "commit", "state": "COMPLETED"}
                if ectr else None,
                "lastCompletedCommitTimestamp": last, "policy": "KEEP_LATEST_COMMITS",
                "filesToBeDeletedPerPartition": {}, "version": 2, "filePathsToBeDeletedPerPartition": {},
                "partitionsToBeDeleted": [], "extraMetadata": None}
        data = serialize_metadata("HoodieCleanerPlan", plan)
        inflight = b"" if self.layout2 else data  # Hudi 1.x writes an empty clean inflight
        requested = Instant(t, "clean", State.REQUESTED)
        if self._requested_then_inflight(requested, data, state, inflight=inflight):
            meta = {"startCleanTime": t, "timeTakenInMillis": 5, "totalFilesDeleted": 0,
                    "earliestCommitToRetain": ectr or "", "lastCompletedCommitTimestamp": last,
                    "partitionMetadata": {}, "version": 2, "bootstrapPartitionMetadata": {},
                    "extraMetadata": None if savepoints is None else {"savepointed_timestamps": savepoints}}
            data = b"" if empty else serialize_metadata("HoodieCleanMetadata", meta)
            self._instant(Instant(t, "clean"), data)
        return self

    def archivable(self, commits: int = 40, cleans: int = 12) -> TableBuilder:
        """The archive tests' timeline: `commits` commits at ts(0).., then `cleans` cleans at
        ts(100).. that each retained from ts(30)."""
        for i in range(commits):
            self.commit(ts(i))
        for i in range(cleans):
            self.clean(ts(100 + i), ts(30))
        return self

    def rollback(self, t: str, target: str) -> TableBuilder:
        """A completed rollback of the commit `target` (which this does not touch)."""
        self._instant(Instant(t, "rollback", State.REQUESTED), serialize_metadata("HoodieRollbackPlan", {
            "instantToRollback": {"commitTime": target, "action": "commit"}, "RollbackRequests": [],
            "version": 1}))
        self._instant(Instant(t, "rollback", State.INFLIGHT))
        self._instant(Instant(t, "rollback"), serialize_metadata("HoodieRollbackMetadata", {
            "startRollbackTime": t, "timeTakenInMillis": 3, "totalFilesDeleted": 0,
            "commitsRollback": [target], "partitionMetadata": {}, "version": 1,
            "instantsRollback": [{"commitTime": target, "action": "commit"}]}))
        return self

    def savepoint(self, t: str, files: dict[str, list[str]] | None = None) -> TableBuilder:
        """A savepoint of `files` (partition -> data file names)."""
        record = {"savepointedBy": "t", "savepointedAt": 0, "comments": "", "version": 1,
                  "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": names}
                                        for p, names in (files or {}).items()}}
        self._instant(Instant(t, "savepoint", State.INFLIGHT))
        self._instant(Instant(t, "savepoint"), serialize_metadata("HoodieSavepointMetadata", record))
        return self

    def metadata_table_from_storage(self) -> TableBuilder:
        """A metadata table whose `files` partition lists what storage holds now (Hudi's bootstrap
        of a metadata table from the file system)."""
        initialize_from_filesystem(self.table())
        return self

    def metadata_table(self, compactions: list[str], deltas: list[str]) -> TableBuilder:
        """A minimal .hoodie/metadata table with the given completed compactions and deltacommits."""
        mdt = TableBuilder(self.root / ".hoodie" / "metadata", "MERGE_ON_READ", partitioned=False,
                           props={"hoodie.table.name": "t_metadata"})
        for t in deltas:
            mdt.commit(t, {}, operation="UPSERT_PREPPED")
        for t in compactions:
            mdt.compaction(t, state=State.COMPLETED)
        return self

