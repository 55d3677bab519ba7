"""Which writes failed, and what rolling one back must do (Hudi 0.15's
BaseHoodieTableServiceClient.getInstantsToRollback, BaseRollbackPlanActionExecutor,
MarkerBasedRollbackStrategy and ListingBasedRollbackStrategy).

- Failed writes: pending commits, deltacommits and replacecommits that are not clustering (pending
  compaction and clustering are table services that are resumed, never rolled back), newest first.
  Under LAZY only those whose heartbeat expired, checked again against a reloaded timeline.
- Marker-based requests: CREATE/MERGE markers delete their base file. An APPEND marker names either
  the log file written (since HUDI-1517) or, as older 0.x writers do, the slice's base file: a log
  file of a slice the failed write itself created is deleted; a log file of an existing slice gets a
  rollback command block instead (its earlier blocks are committed data).
- Listing-based requests (`hoodie.rollback.using.markers=false`, or an instant with no markers: Hudi
  0.15 would then roll back no file at all): every base file carrying the instant's time and every
  log file whose slice it opened, in every partition.
- Table versions 8 and 9 (Hudi 1.x, `deletes_only`): a rollback only deletes. Every log file is
  named by the deltacommit that wrote it and has a CREATE marker, so each marker names a file of the
  failed write, deleted by its own request (fileId, the failed instant as latestBaseInstant, the
  absolute path): MarkerBasedRollbackStrategy of apache/hudi 1.x (`table.version() >= EIGHT`
  branches, stored-file id 205226268), requests not grouped per file group. Listing is as above.
"""

from __future__ import annotations

import logging
import time

from hudi_assets import config_options as opt
from hudi_assets.engine import Engine, LocalEngine
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.fsview import LogFile, list_partitions, parse_base_file_name
from hudi_assets.heartbeat import HeartbeatConfig, is_heartbeat_expired
from hudi_assets.rollback.markers import Marker, marker_dir, read_markers
from hudi_assets.rollback.metadata import RollbackPlan, RollbackRequest, deletes_only
from hudi_assets.rollback.safety import checked_markers
from hudi_assets.table import HoodieTable
from hudi_assets.table_paths import written_instant
from hudi_assets.timeline import metadata
from hudi_assets.timeline.instant import REPLACE_COMMIT, Instant, State
from hudi_assets.timeline.timeline import COMMIT_ACTIONS, ActiveTimeline, Timeline

log = logging.getLogger(__name__)

CLUSTER_OPERATION = "CLUSTER"


# ------------------------------------------------------------------------------ failed writes
def is_clustering(timeline: ActiveTimeline, instant: Instant) -> bool:
    """ClusteringUtils.getClusteringPlan(...).isPresent(): a replacecommit requested as CLUSTER."""
    if instant.action != REPLACE_COMMIT:
        return False
    requested = Instant(instant.timestamp, REPLACE_COMMIT, State.REQUESTED)
    if not timeline.has_state_file(requested):
        return False
    plan = metadata.requested_plan(timeline, instant) or {}
    return plan.get("operationType") == CLUSTER_OPERATION


def pending_writes(timeline: ActiveTimeline) -> Timeline:
    """getInflightTimelineExcludeCompactionAndClustering: the writes a rollback may undo."""
    return timeline.filter_actions(COMMIT_ACTIONS).filter_pending().filter(
        lambda i: not is_clustering(timeline, i))


def failed_writes(table: HoodieTable, heartbeat: HeartbeatConfig, now_ms: int | None = None) -> list[Instant]:
    """Pending writes whose heartbeat expired (or that have none), newest first (the LAZY policy)."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    expired = [i for i in reversed(pending_writes(table.reload_timeline()).instants)
               if is_heartbeat_expired(table.storage, i.timestamp, heartbeat, now_ms)]
    if not expired:
        return []
    still_pending = {i.timestamp for i in pending_writes(table.reload_timeline())}  # not completed since
    return [i for i in expired if i.timestamp in still_pending]


# ------------------------------------------------------------------------------------ planning
def plan_rollback(table: HoodieTable, instant: Instant, engine: Engine | None = None) -> RollbackPlan:
    """The plan Hudi writes to `<t>.rollback.requested` for a pending write."""
    if instant.is_requested:  # nothing was written: only the state file goes
        return RollbackPlan(instant.timestamp, instant.action)
    markers = read_markers(table.storage, instant.timestamp)
    if table.write_config.get(opt.ROLLBACK_USING_MARKERS) and markers:
        requests = [_marker_request(table, instant, m)
                    for m in checked_markers(table, instant.timestamp, markers)]
    else:
        log.info("rolling back %s by listing: %s", instant,
                 "markers disabled" if markers else "the write left no markers")
        return plan_rollback_by_listing(table, instant, engine)
    return RollbackPlan(instant.timestamp, instant.action, tuple(requests))


def plan_rollback_by_listing(table: HoodieTable, instant: Instant, engine: Engine | None = None
                             ) -> RollbackPlan:
    """ListingBasedRollbackStrategy: delete every file named by `instant`. Hudi 1.x plans a
    completed instant's rollback this way too (its markers are gone); that is sound where every file
    names the instant that wrote it, as on table versions 8 and 9."""
    requests = _listing_requests(table, instant, engine or LocalEngine())
    return RollbackPlan(instant.timestamp, instant.action, tuple(requests))


def table_path(table: HoodieTable, rel: str) -> str:
    """A path as `new Path(basePath, rel)` prints it, the base path as the table is addressed."""
    return f"{table.base_path}/{rel}" if rel else table.base_path


def _marker_request(table: HoodieTable, instant: Instant, marker: Marker) -> RollbackRequest:
    where = table.storage.uri(marker_dir(instant.timestamp))
    if deletes_only(table.config):
        return _delete_request(table, instant, marker, where)
    if marker.io_type == "APPEND":
        return _append_request(table, instant, marker)
    if LogFile.parse(marker.file_name) is not None:
        raise CorruptFileError(where, f"log file {marker.file_path} has a {marker.io_type} marker; "
                                      "log files have only APPEND markers")
    parsed = parse_base_file_name(marker.file_name)
    if parsed is None:
        raise CorruptFileError(where, f"marker of {marker.file_path}: not a base file name")
    file_id, _, base_instant = parsed
    return RollbackRequest(marker.partition_path, file_id, base_instant,
                           (table_path(table, marker.file_path),))


def _delete_request(table: HoodieTable, instant: Instant, marker: Marker, where: str) -> RollbackRequest:
    """Hudi 1.x: the marked file is deleted, whatever its IO type. 1.x writers give log files CREATE
    markers; an APPEND marker (which Java would turn into log blocks and then refuse) is taken only
    when it names a log file of the failed write itself, which no other instant reads."""
    log_file = LogFile.parse(marker.file_name)
    if log_file is not None:
        file_id = log_file.file_id
        if marker.io_type == "APPEND" and log_file.base_instant != instant.timestamp:
            raise CorruptFileError(where, f"APPEND marker of {marker.file_path}, a log file of instant "
                                          f"{log_file.base_instant}: a table version "
                                          f"{table.config.table_version} rollback only deletes files "
                                          "the failed write created")
    else:
        parsed = parse_base_file_name(marker.file_name)
        if parsed is None or marker.io_type == "APPEND":
            expected = "a log" if marker.io_type == "APPEND" else "a base or log"
            raise CorruptFileError(where, f"{marker.io_type} marker of {marker.file_path}: not {expected} "
                                          "file name")
        file_id = parsed[0]
    return RollbackRequest(marker.partition_path, file_id, instant.timestamp,
                           (table_path(table, marker.file_path),))


def latest_log_file(table: HoodieTable, partition: str, file_id: str, base_instant: str) -> LogFile | None:
    """FSUtils.getLatestLogFile: the highest (version, write token) log file of a slice."""
    names, _ = table.storage.list_names(partition)
    logs = [f for f in map(LogFile.parse, names)
            if f is not None and f.file_id == file_id and f.base_instant == base_instant]
    return max(logs, key=lambda f: (f.version, f.write_token), default=None)


def _append_request(table: HoodieTable, instant: Instant, marker: Marker) -> RollbackRequest:
    partition = marker.partition_path
    log_file = LogFile.parse(marker.file_name)
    if log_file is None:  # a pre-HUDI-1517 marker naming the slice's base file
        parsed = parse_base_file_name(marker.file_name)
        if parsed is None:
            raise CorruptFileError(table.storage.uri(marker_dir(instant.timestamp)),
                                   f"APPEND marker {marker.file_path}: neither a log nor a base file name")
        file_id, _, base_instant = parsed
        latest = latest_log_file(table, partition, file_id, base_instant)
        if latest is None:
            return RollbackRequest(partition, file_id, base_instant)
        rel = f"{partition}/{latest.name}" if partition else latest.name
        if base_instant == instant.timestamp:
            return RollbackRequest(partition, files_to_delete=(table_path(table, rel),))
        status = table.storage.status(rel)
        size = status.size if status else 0
        return RollbackRequest(partition, file_id, base_instant,
                               log_blocks_to_delete={table.storage.uri(rel): size})
    status = table.storage.status(marker.file_path)
    if status is None:  # nothing was appended
        return RollbackRequest(partition, log_file.file_id, log_file.base_instant)
    if log_file.base_instant == instant.timestamp:  # the log file opened a new file group
        return RollbackRequest(partition, files_to_delete=(table_path(table, marker.file_path),))
    return RollbackRequest(partition, log_file.file_id, log_file.base_instant,
                           log_blocks_to_delete={log_file.name: status.size})


def _listing_requests(table: HoodieTable, instant: Instant, engine: Engine) -> list[RollbackRequest]:
    """ListingBasedRollbackStrategy for a pending commit, deltacommit or replacecommit: its path
    filter matches names that contain the base file extension, so Hadoop `.crc` sidecars go too."""
    extension = table.config.base_file_extension
    requests = []
    for listing in list_partitions(table.storage, engine):
        for name in listing.files:
            if written_instant(name, extension) == instant.timestamp:
                rel = f"{listing.partition}/{name}" if listing.partition else name
                uri = table.storage.uri(rel)
                # formatDeletePath: Hudi strips the scheme from a listed path.
                requests.append(RollbackRequest(listing.partition,
                                                files_to_delete=(uri[uri.index(":") + 1:],)))
    return requests
