"""Commit records to a data table's metadata table as one deltacommit, as Hudi 0.15's
`HoodieBackedTableMetadataWriter.commit` does through the metadata table's write client (table
version 6 only).

One deltacommit at the data instant's time: `<t>.deltacommit.requested` (empty) -> `.inflight` (the
workload profile) -> per file group an APPEND marker, then one HFILE_DATA block in a new log file of
the group's latest slice -> `<t>.deltacommit` (HoodieCommitMetadata) -> the marker directory goes.
Neither local file systems nor object stores append (Hudi's `StorageSchemes`), so every block opens
the next log version, as Hudi's log writer rolls over.

An instant already on the metadata timeline, completed or not, is a retry after a crash: it is rolled
back first (planned, un-published if completed, then logged out by rollback command blocks) and then
written again. Readers ignore its blocks meanwhile: a metadata deltacommit counts only once the data
instant of the same time completes.

Table versions 8 and 9 (Hudi 1.x, observed on the Java-written tables of ../shared and read in
apache/hudi's HoodieAppendHandle / WriteMarkers of 1.0.x): every deltacommit writes NEW log files,
`.<fileId>_<deltacommit>.log.1_<token>`, one per file group it touches, each after its
`<log file>.marker.CREATE` marker; the inflight holds empty Avro commit metadata (UPSERT_PREPPED);
a write stat names the deltacommit as `prevCommit` and no base file; the completed instant is
`<t>_<completion>.deltacommit` in Avro; records are encoded with the metadata table's own schema (the
latest deltacommit's `schema`, meta fields in front for the block), so a v9 table's column stats carry
`valueType`. A retry after a crash removes what the earlier attempt wrote (its completed file first,
then its log files, then its pending states): every file of it is its own, nothing was appended.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from fastavro.types import Schema

from hudi_assets.exceptions import CorruptFileError, HudiAssetsError
from hudi_assets.listener import QUIET, Listener, ServiceRun, Step
from hudi_assets.logformat import LogFileName, encode_block
from hudi_assets.logformat.hfile_block import avro_schema, encode_hfile_data_block
from hudi_assets.metadata.clean_records import refuse_pending_compaction
from hudi_assets.metadata.file_group import BlockFilter, MetadataFileSlice, latest_file_slices
from hudi_assets.metadata.keys import file_group_index
from hudi_assets.metadata.payloads import (
    METADATA_RECORD_SCHEMA,
    WRITER_SCHEMA,
    MetadataRecord,
    with_meta_fields,
)
from hudi_assets.metadata.table import METADATA_FOLDER
from hudi_assets.rollback.executor import ROLLBACK_WRITE_TOKEN, RollbackActionExecutor
from hudi_assets.rollback.markers import delete_marker_dir, marker_dir
from hudi_assets.rollback.metadata import RollbackPlan, RollbackRequest
from hudi_assets.rollback.pending import pending_rollbacks
from hudi_assets.rollback.planner import plan_rollback
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_assets.timeline.instant import DELTA_COMMIT, ROLLBACK, Instant, State
from hudi_assets.timeline.instant_time import clock_skew_conf, new_instant_time
from hudi_assets.timeline.metadata import commit_metadata
from hudi_assets.timeline.timeline import ActiveTimeline

log = logging.getLogger(__name__)

# HoodieLogFormat.UNKNOWN_WRITE_TOKEN: the token of writers without a Spark task.
WRITE_TOKEN = ROLLBACK_WRITE_TOKEN
UPSERT_PREPPED = "UPSERT_PREPPED"
HFILE = ".hfile"

@dataclass
class _Target:
    """A file group's latest slice, the instant its log files are named after, and its new records."""

    file_slice: MetadataFileSlice
    base_instant: str
    records: list[MetadataRecord] = field(default_factory=list)


class MetadataTableWriter:
    """Writes deltacommits to the metadata table of `data_table` (whose lock the caller holds).

    The listener hears `Step.MDT_REQUESTED`, each `Step.MDT_BLOCK_WRITTEN` (with the number of blocks
    written so far) and `Step.MDT_COMPLETED`, so a test can crash the write there.
    """

    def __init__(self, data_table: HoodieTable, listener: Listener = QUIET,
                 metadata_table: HoodieTable | None = None,
                 completed_at: Callable[[str], str] | None = None):
        self.data_table = data_table
        self.listener = listener
        # A deltacommit's completion time on a layout-2 timeline, for a writer replaying a history on
        # its own clock (the demo); None: generated now, as Hudi's time generator does.
        self.completed_at = completed_at
        self._mdt = metadata_table  # opened once, by the run's refusal check or on first use
        self.storage = (metadata_table.storage if metadata_table is not None else
                        Storage(f"{data_table.base_path}/{METADATA_FOLDER}", data_table.storage.options))

    def open(self) -> HoodieTable:
        """The metadata table as a MERGE_ON_READ table of its own, opened once per writer; each use
        reads its timeline again (`reload_timeline`)."""
        if self._mdt is None:
            self._mdt = HoodieTable(self.storage, hoodie_conf=clock_skew_conf(self.data_table.clock_skew_ms))
        return self._mdt

    def commit(self, instant_time: str, records: Iterable[MetadataRecord]) -> CommitMetadata:
        """Write `records` as deltacommit `instant_time`; returns the completed commit metadata."""
        started = time.monotonic()
        mdt = self.open()
        # Hudi 1.x's deltacommits write new log files named by themselves.
        write = self._commit_new_logs if mdt.config.is_hudi_1x else self._commit_appends
        metadata = write(mdt, instant_time, records)
        taken = int((time.monotonic() - started) * 1000)
        self.listener.finished(ServiceRun(DELTA_COMMIT, instant_time, taken, metadata_table=True,
                                          commit=metadata))
        return metadata

    def _commit_appends(self, mdt: HoodieTable, instant_time: str, records: Iterable[MetadataRecord]
                        ) -> CommitMetadata:
        """`commit` on table version 6: log blocks appended to each file group's latest log file."""
        timeline = refuse_pending_compaction(mdt, "write a deltacommit")
        if any(i.timestamp == instant_time for i in timeline.commits_timeline()):
            self.roll_back(instant_time)
            timeline = mdt.reload_timeline()
        by_group = self._route(records, timeline)
        requested = Instant(instant_time, DELTA_COMMIT, State.REQUESTED)
        self.storage.create_if_absent(timeline.state_file_path(requested), b"")
        self.listener.reached(Step.MDT_REQUESTED)
        inflight = requested.with_state(State.INFLIGHT)
        self.storage.create_if_absent(timeline.state_file_path(inflight),
                                      timeline.commit_metadata_serde.serialize(_workload(by_group)))
        stats: dict[str, list[WriteStat]] = defaultdict(list)
        for count, target in enumerate(by_group, 1):
            stats[target.file_slice.partition].append(self._append(instant_time, target))
            self.listener.reached(Step.MDT_BLOCK_WRITTEN, count)
        metadata = CommitMetadata(dict(stats), False, {"schema": WRITER_SCHEMA}, UPSERT_PREPPED)
        completed = requested.with_state(State.COMPLETED)
        self.storage.create_if_absent(timeline.state_file_path(completed),
                                      timeline.commit_metadata_serde.serialize(metadata))
        self.listener.reached(Step.MDT_COMPLETED)
        delete_marker_dir(self.storage, instant_time)
        log.info("metadata table deltacommit %s: %d log blocks", instant_time, len(by_group))
        return metadata

    def _commit_new_logs(self, mdt: HoodieTable, instant_time: str, records: Iterable[MetadataRecord]
                         ) -> CommitMetadata:
        """`commit` on table versions 8 and 9 (module docstring), to the metadata table `commit` opened."""
        timeline = refuse_pending_compaction(mdt, "write a deltacommit")
        if any(i.timestamp == instant_time for i in timeline.commits_timeline()):
            self._remove_attempt(instant_time, timeline)
            timeline = mdt.reload_timeline()
        writer_schema = _writer_schema(timeline, self.storage.uri(".hoodie"))
        block_schema = with_meta_fields(writer_schema)
        parsed = avro_schema(block_schema, self.storage.uri(".hoodie"), "the metadata table's schema")
        by_group = self._route(records, timeline)
        requested = Instant(instant_time, DELTA_COMMIT, State.REQUESTED)
        serde = timeline.commit_metadata_serde
        self.storage.create_if_absent(timeline.new_state_file_path(requested), b"")
        self.listener.reached(Step.MDT_REQUESTED)
        self.storage.create_if_absent(timeline.new_state_file_path(requested.with_state(State.INFLIGHT)),
                                      serde.serialize(CommitMetadata({}, False, {}, UPSERT_PREPPED)))
        stats: dict[str, list[WriteStat]] = defaultdict(list)
        for count, target in enumerate(by_group, 1):
            stats[target.file_slice.partition].append(
                self._write_new_log(instant_time, target, block_schema, parsed))
            self.listener.reached(Step.MDT_BLOCK_WRITTEN, count)
        metadata = CommitMetadata(dict(stats), False, {"schema": writer_schema}, UPSERT_PREPPED)
        completed = requested.with_state(State.COMPLETED)
        self.storage.create_if_absent(self.new_completed_path(timeline, completed), serde.serialize(metadata))
        self.listener.reached(Step.MDT_COMPLETED)
        delete_marker_dir(self.storage, instant_time)
        log.info("metadata table deltacommit %s: %d log files", instant_time, len(by_group))
        return metadata

    def new_completed_path(self, timeline: ActiveTimeline, completed: Instant) -> str:
        """Where the completed state file of a new deltacommit goes (`completed_at`)."""
        at = self.completed_at(completed.timestamp) if self.completed_at is not None else None
        return timeline.new_state_file_path(completed, at)

    def _write_new_log(self, instant_time: str, target: _Target, block_schema: str,
                       parsed: Schema) -> WriteStat:
        """One HFILE_DATA block in a new log file named by the deltacommit, after its CREATE marker."""
        partition, file_id = target.file_slice.partition, target.file_slice.file_id
        name = LogFileName(file_id, instant_time, "log", 1, WRITE_TOKEN).format()
        self.storage.create_if_absent(f"{marker_dir(instant_time)}/{partition}/{name}.marker.CREATE", b"")
        block = encode_hfile_data_block(((r.key, r.encode(parsed)) for r in target.records), instant_time,
                                        block_schema)
        data = encode_block(block)
        if not self.storage.create_if_absent(f"{partition}/{name}", data):
            raise HudiAssetsError(f"{self.storage.uri(f'{partition}/{name}')} already exists")
        return WriteStat.new(
            fileId=file_id, path=f"{partition}/{name}", prevCommit=instant_time,
            numWrites=len(target.records), numUpdateWrites=len(target.records),
            totalWriteBytes=len(data), partitionPath=partition,
            fileSizeInBytes=len(data), logVersion=1, logOffset=0, baseFile="", logFiles=[name])

    def _remove_attempt(self, instant_time: str, timeline: ActiveTimeline) -> None:
        """Undo an earlier attempt of deltacommit `instant_time` on versions 8/9: its completed file
        first (readers ignored it anyway: the data instant did not complete), then the log files named
        by it, then its pending state files and markers."""
        states = [i for i in timeline.raw_instants
                  if i.timestamp == instant_time and i.action == DELTA_COMMIT]
        completed = [timeline.state_file_path(i) for i in states if i.is_completed]
        self.storage.delete_checked(completed)
        for partition in self.data_table.config.metadata_partitions:
            parsed = map(LogFileName.parse, self.storage.list_names(partition)[0])
            self.storage.delete_checked(f"{partition}/{name.format()}" for name in parsed
                                        if name is not None and name.base_instant == instant_time)
        pending = [timeline.state_file_path(i) for i in reversed(states) if not i.is_completed]
        self.storage.delete_checked(pending)
        delete_marker_dir(self.storage, instant_time)
        log.info("removed the earlier attempt of metadata table deltacommit %s", instant_time)

    # ------------------------------------------------------------------------------- routing
    def _route(self, records: Iterable[MetadataRecord], timeline: ActiveTimeline) -> list[_Target]:
        """The file groups the records go to (`mapRecordKeyToFileGroupIndex`), in partition and
        file-group order, each with its records; `timeline`: the metadata table's, as just read."""
        by_partition: dict[str, list[MetadataRecord]] = defaultdict(list)
        for record in records:
            by_partition[record.partition].append(record)
        routed: list[_Target] = []
        for partition, partition_records in sorted(by_partition.items()):
            targets = [_Target(file_slice, base)
                       for file_slice, base in self.latest_slices(partition, timeline)]
            for record in partition_records:
                targets[file_group_index(record.key, len(targets))].records.append(record)
            routed.extend(t for t in targets if t.records)
        return routed

    def latest_slices(self, partition: str, timeline: ActiveTimeline) -> list[tuple[MetadataFileSlice, str]]:
        """Every file group's latest slice of one metadata partition (base files of completed
        compactions only), in file-group order, with the slice's base instant (its base file's, or its
        log files' when it has none yet)."""
        committed = BlockFilter.of(timeline.commits_timeline(), frozenset()).is_committed
        slices = latest_file_slices(partition, self.storage.list(partition), committed,
                                    timeline.completion_times)
        if not slices:
            raise CorruptFileError(self.storage.uri(partition), "the metadata partition has no file group")
        result = []
        for file_slice in slices:
            instants = [f.instant for f in file_slice.log_files]
            if file_slice.base_file is not None:
                instants.append(file_slice.base_file.instant)
            result.append((file_slice, max(instants)))
        return result

    # ------------------------------------------------------------------------------- writing
    def _append(self, instant_time: str, target: _Target) -> WriteStat:
        """One HFILE_DATA block in the next log version of the slice, after its APPEND marker."""
        file_slice, base_instant, records = target.file_slice, target.base_instant, target.records
        partition, file_id = file_slice.partition, file_slice.file_id
        marker = f"{file_id}_{WRITE_TOKEN}_{base_instant}{HFILE}.marker.APPEND"
        self.storage.create_if_absent(f"{marker_dir(instant_time)}/{partition}/{marker}", b"")
        versions = [name.version for name in map(LogFileName.parse, self._log_names(partition, file_id))
                    if name is not None and name.base_instant == base_instant]
        version = max(versions, default=0) + 1
        name = LogFileName(file_id, base_instant, "log", version, WRITE_TOKEN).format()
        block = encode_hfile_data_block(((r.key, r.encode()) for r in records), instant_time,
                                        METADATA_RECORD_SCHEMA)
        data = encode_block(block)
        if not self.storage.create_if_absent(f"{partition}/{name}", data):
            raise HudiAssetsError(f"{self.storage.uri(f'{partition}/{name}')} already exists")
        base_file = file_slice.base_file.name if file_slice.base_file else ""
        return WriteStat.new(
            fileId=file_id, path=f"{partition}/{name}", prevCommit=base_instant, numWrites=len(records),
            numUpdateWrites=len(records), totalWriteBytes=len(data), partitionPath=partition,
            fileSizeInBytes=len(data), logVersion=version, logOffset=0, baseFile=base_file, logFiles=[name])

    def _log_names(self, partition: str, file_id: str) -> list[str]:
        names, _ = self.storage.list_names(partition)
        return [n for n in names if n.startswith(f".{file_id}_")]

    # ------------------------------------------------------------------------------ recovery
    def roll_back(self, instant_time: str, rollback_time: str | None = None) -> None:
        """Roll back the metadata instant `instant_time`, as the metadata table's write client does:
        resume its pending rollback, or plan one at `rollback_time` (a new instant time when None) from
        the markers of a pending instant or the commit metadata of a completed one; un-publish a
        completed instant (its inflight file stays); then execute."""
        mdt = self.open()
        pending = pending_rollbacks(mdt).get(instant_time)
        timeline = mdt.reload_timeline()
        target = next((i for i in timeline.commits_timeline() if i.timestamp == instant_time), None)
        if pending is not None:
            plan, rollback = pending.plan, pending.instant
        elif target is None:
            return
        else:
            plan = (_plan_from_commit(timeline, target) if target.is_completed
                    else plan_rollback(mdt, target))
            rollback_time = rollback_time or new_instant_time(
                (i.timestamp for i in timeline.raw_instants), mdt.config.timeline_timezone,
                max_skew_ms=timeline.clock_skew_ms)
            rollback = Instant(rollback_time, ROLLBACK, State.REQUESTED)
            self.storage.create_if_absent(timeline.state_file_path(rollback), plan.serialize())
        if target is not None and target.is_completed:  # HoodieActiveTimeline.revertToInflight
            inflight = target.with_state(State.INFLIGHT)
            self.storage.create_if_absent(timeline.state_file_path(inflight), b"")
            self.storage.delete_checked([timeline.state_file_path(target)])
        log.info("rolling back metadata table instant %s at %s", instant_time, rollback.timestamp)
        RollbackActionExecutor(mdt, rollback, plan).execute()


def _plan_from_commit(timeline: ActiveTimeline, instant: Instant) -> RollbackPlan:
    """A completed deltacommit's rollback: a command block in each log it appended to (its markers
    are gone), as Hudi plans from the commit's write stats."""
    requests = []
    for stat in commit_metadata(timeline, instant).write_stats:
        partition = stat.partition_path or ""
        sizes = {name: stat.file_size for name in stat.log_files}
        requests.append(RollbackRequest(partition, stat.file_id, stat.prev_commit or "",
                                        log_blocks_to_delete=sizes))
    return RollbackPlan(instant.timestamp, instant.action, tuple(requests))


def _writer_schema(timeline: ActiveTimeline, where: str) -> str:
    """The metadata table's own record schema: the `schema` of its latest completed deltacommit that
    has one (Hudi writes `HoodieMetadataRecord.getClassSchema()` there)."""
    for instant in reversed(timeline.filter_completed().filter_actions({DELTA_COMMIT}).instants):
        schema = commit_metadata(timeline, instant).extra_metadata.get("schema")
        if schema:
            return schema
    raise CorruptFileError(where, "no completed deltacommit of the metadata table records its schema")


def _workload(targets: list[_Target]) -> CommitMetadata:
    """The inflight file: per partition the insert stat, then per file group its update count
    (BaseCommitActionExecutor.saveWorkloadProfileMetadataToInflight; prepped records are updates)."""
    stats: dict[str, list[WriteStat]] = {}
    for target in targets:
        partition_stats = stats.setdefault(target.file_slice.partition,
                                           [WriteStat.new(fileId="", prevCommit="null")])
        partition_stats.append(WriteStat.new(fileId=target.file_slice.file_id, prevCommit=target.base_instant,
                                             numUpdateWrites=len(target.records)))
    return CommitMetadata(stats, False, {}, UPSERT_PREPPED)
