"""The file-system view: partitions, file groups and file slices of a table, as the cleaner sees them.

A partition is a directory holding a file whose name starts with `.hoodie_partition_metadata` (the
text metafile, or `.parquet`/`.orc` with `hoodie.partition.metafile.use.base.format`). Hadoop's
`.<name>.crc` checksum files are never data files: Hudi reads the local file system through Hadoop's
`ChecksumFileSystem`, whose listings hide them.
A file group is every data file with one file id in a partition; a file slice is a base instant's
base file plus its log files: those carrying that instant in table versions 5 and 6, those whose
deltacommit completed at or after it (and before the next) in versions 8 and 9 (the rule is a
`FileSlicing`, picked by the table version). A slice is committed when its base instant is
on the view's timeline (completed writes plus every compaction, pending ones included) or older
than its first instant. Partitions are listed as one engine task each, so a table with many
partitions lists in parallel, locally or on Spark.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from typing import Any, Protocol

from hudi_assets.engine import Engine, LocalEngine, gc_paused, store_map
from hudi_assets.exceptions import UnsupportedTableError
from hudi_assets.logformat.names import LogFileName
from hudi_assets.storage import DirectoryListing, Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_config import TableConfig
from hudi_assets.timeline import metadata
from hudi_assets.timeline.history import ArchivedCompletionTimes, LSMHistory
from hudi_assets.timeline.instant import COMPACTION, LOG_COMPACTION
from hudi_assets.timeline.layout import timeline_layout
from hudi_assets.timeline.savepoint import completed_savepoints
from hudi_assets.timeline.timeline import ActiveTimeline, Timeline

log = logging.getLogger(__name__)
PARTITION_METAFILE = ".hoodie_partition_metadata"
# The names HoodiePartitionMetadata.hasPartitionMetadata looks for before listing a directory.
PARTITION_METAFILE_NAMES = frozenset({PARTITION_METAFILE, f"{PARTITION_METAFILE}.parquet",
                                      f"{PARTITION_METAFILE}.orc"})


def is_checksum_file(name: str) -> bool:
    """Hadoop's ChecksumFileSystem.isChecksumFile: `.<name>.crc`."""
    return name.startswith(".") and name.endswith(".crc")


def checksum_guarded(name: str) -> str:
    """The name of the file a Hadoop `.<name>.crc` sidecar guards; any other name as it is."""
    return name[1:-4] if is_checksum_file(name) else name


def parse_base_file_name(name: str) -> tuple[str, str, str] | None:
    """(file id, write token, instant) of `<fileId>_<writeToken>_<instant>.<ext>`, as Hudi's FSUtils
    splits it; None for a name without three `_`-separated parts."""
    file_id, _, rest = name.partition("_")
    write_token, _, rest = rest.partition("_")
    instant = rest.partition(".")[0]
    return (file_id, write_token, instant) if instant and file_id else None


@dataclass(frozen=True, slots=True)
class LogFile:
    """A log file of a file slice; ordered within the slice by version, then write token."""

    name: str
    file_id: str
    base_instant: str
    version: int
    write_token: str

    @classmethod
    def parse(cls, name: str) -> LogFile | None:
        parsed = LogFileName.parse(name)
        if parsed is None or parsed.extension != "log":
            return None
        return cls(name, parsed.file_id, parsed.base_instant, parsed.version, parsed.write_token or "")


@dataclass(slots=True)
class FileSlice:
    """A base instant's files in one file group; log files newest version first, as in Hudi."""

    partition: str
    file_id: str
    base_instant: str
    base_file: str | None = None
    # A shared empty tuple until a log file arrives: most slices have none, and a million empty
    # lists would be a million more objects for Python's collector to track.
    log_files: list[LogFile] | tuple[()] = ()

    @property
    def file_names(self) -> list[str]:
        names = [self.base_file] if self.base_file else []
        if not self.log_files:
            return names
        return names + [log.name for log in self.log_files]

    @property
    def paths(self) -> list[str]:
        """Paths relative to the base path."""
        prefix = f"{self.partition}/" if self.partition else ""
        return [prefix + name for name in self.file_names]

    @property
    def is_empty(self) -> bool:
        return self.base_file is None and not self.log_files


@dataclass(slots=True)
class FileGroup:
    """All slices of one file id in one partition, keyed by base instant."""

    partition: str
    file_id: str
    slices: dict[str, FileSlice] = field(default_factory=dict)

    def slice_at(self, base_instant: str) -> FileSlice:
        found = self.slices.get(base_instant)
        if found is None:
            found = self.slices[base_instant] = FileSlice(self.partition, self.file_id, base_instant)
        return found

    def sorted_slices(self) -> list[FileSlice]:
        """Every slice, newest base instant first."""
        return [self.slices[k] for k in sorted(self.slices, reverse=True)]


@dataclass(slots=True)
class PartitionListing:
    """The data-file names of one partition (sizes: `Storage.file_sizes`)."""

    partition: str
    files: list[str]


# A partition found by discovery, handed its file names (checksum files left out) and its listing
# (whose sizes, where the store returned them, are free): what the task returns for that partition.
PartitionVisitor = Callable[[str, list[str], DirectoryListing], Any]


class NameSearch:
    """Questions about all of a directory's names at once, answered by one substring search of the
    names joined by '/' (which no name in a listing holds) instead of a Python step per name."""

    __slots__ = ("_text",)

    def __init__(self, names: list[str]):
        self._text = "/" + "/".join(names) + "/"

    def any_starts_with(self, prefix: str) -> bool:
        return f"/{prefix}" in self._text

    def any_ends_with(self, suffix: str) -> bool:
        return f"{suffix}/" in self._text


def list_directory(storage: Storage, directory: str, visit: PartitionVisitor | None = None
                   ) -> tuple[str, Any, list[str]]:
    """One directory: (directory, its file names if it is a partition else None, subdirs to descend).

    Like FileSystemBackedTableMetadata: any file named with the metafile prefix makes a partition; a
    directory whose metafile has one of the three exact names is known as a partition from its parent
    and is not descended; the base path, and a partition known only by listing it, are descended.
    With `visit`, a partition's entry is what `visit` returns for it, computed in the same task, so
    that a partition is listed once for discovery and its own work both.
    """
    listing = storage.list_directory(directory)
    files = listing.files
    names = NameSearch(files)
    if names.any_ends_with(".crc"):
        files = [name for name in files if not is_checksum_file(name)]
        names = NameSearch(files)
    is_partition = names.any_starts_with(PARTITION_METAFILE)
    prefix = f"{directory}/" if directory else ""
    descend = [] if directory and PARTITION_METAFILE_NAMES.intersection(files) else [
        prefix + d for d in listing.dirs if not d.startswith(".")]
    if not is_partition:
        return directory, None, descend
    return directory, files if visit is None else visit(directory, files, listing), descend


def discover_partitions(storage: Storage, engine: Engine, parallelism: int = 200,
                        visit: PartitionVisitor | None = None,
                        before_fork: Callable[[], Any] | None = None) -> list[tuple[str, Any]]:
    """Find every partition, level by level, one engine task per directory: (partition, its file
    names or what `visit` returns for it). `before_fork`: what `visit` imports, imported once before
    local workers fork (`store_map`).

    Partitions come in Hudi's order (FSUtils.getAllPartitionPaths without a metadata table): by
    depth, then in the order their parents were listed and each directory lists its entries; the
    cleaner's batches and its HashMap tie-breaks follow this order.
    """
    found: list[tuple[str, Any]] = []
    level = [""]
    depth = 0
    while level:
        results = store_map(engine, storage.is_local, lambda d: list_directory(storage, d, visit), level,
                            parallelism, before_fork=before_fork)
        log.info("Listed %d directories at depth %d of %s: %d partitions so far", len(level), depth,
                 storage.base_uri, len(found) + sum(1 for _, entry, _ in results if entry is not None))
        level = []
        depth += 1
        for directory, entry, subdirs in results:
            if entry is not None:
                found.append((directory, entry))
            level.extend(subdirs)
    return found


def list_partitions(storage: Storage, engine: Engine, parallelism: int = 200) -> list[PartitionListing]:
    """Every partition with its data-file names, in Hudi's order (see `discover_partitions`)."""
    return [PartitionListing(p, files) for p, files in discover_partitions(storage, engine, parallelism)]


def build_file_groups(partition: str, names: Iterable[str], base_extension: str) -> dict[str, FileGroup]:
    """Group a partition's data files by file id and base instant; other files are ignored.

    Groups come in the order Hudi's buildFileGroups adds their ids to its HashSet: those with a base
    file by their first base file in the listing, then those with log files only. This runs once per
    file of the table, so it is written for speed: no helper calls per name.
    """
    groups: dict[str, FileGroup] = {}
    with_base: dict[str, None] = {}
    for name in names:
        log = None
        if name.startswith("."):
            if name.endswith(".crc"):
                continue  # a Hadoop checksum file (is_checksum_file), inlined for speed
            log = LogFile.parse(name)
            if log is None:
                continue
            file_id, instant = log.file_id, log.base_instant
        elif name.endswith(base_extension):
            file_id, _, rest = name.partition("_")
            instant = rest.partition("_")[2].partition(".")[0]
            if not instant or not file_id:
                continue
        else:
            continue
        group = groups.get(file_id)
        if group is None:
            group = groups[file_id] = FileGroup(partition, file_id)
        file_slice = group.slices.get(instant)
        if file_slice is None:
            file_slice = group.slices[instant] = FileSlice(partition, file_id, instant)
        if log is None:
            file_slice.base_file = name
            if file_id not in with_base:
                with_base[file_id] = None
        else:
            if file_slice.log_files:
                file_slice.log_files.append(log)
            else:
                file_slice.log_files = [log]
    for group in groups.values():
        for file_slice in group.slices.values():
            if len(file_slice.log_files) > 1:
                file_slice.log_files.sort(key=lambda lf: (lf.version, lf.write_token), reverse=True)
    ordered = {file_id: groups[file_id] for file_id in with_base}
    ordered.update(groups)
    return ordered


# The pending (log) compaction operations by (partition, file id), read when a slicing rule asks.
Compactions = Callable[[], Mapping[tuple[str, str], "CompactionOperation"]]


class FileSlicing(Protocol):
    """Which file slice each data file of a partition joins: the rule of Hudi's file-system view that
    changes with the table version (log files named by their base instant up to version 6; by
    their deltacommit, sliced by its completion time, from version 8)."""

    def file_groups(self, partition: str, names: Iterable[str]) -> dict[str, FileGroup]:
        """A partition's file groups, in the order Hudi's buildFileGroups makes them."""
        ...

    def slice_keys(self, names: list[str]) -> list[tuple[str, str] | None]:
        """(file id, slice instant) of each name as `file_groups` slices it, None for a name that is
        not a data file: the grouping without an object per slice (`file_group_instants`)."""
        ...


@dataclass(frozen=True, slots=True)
class BaseInstantSlicing:
    """Table versions 5 and 6: a slice is a base instant's base file and the log files naming it."""

    base_extension: str

    @classmethod
    def of(cls, config: TableConfig, timeline: ActiveTimeline, compactions: Compactions
           ) -> BaseInstantSlicing:
        return cls(config.base_file_extension)

    def file_groups(self, partition: str, names: Iterable[str]) -> dict[str, FileGroup]:
        return build_file_groups(partition, names, self.base_extension)

    def slice_keys(self, names: list[str]) -> list[tuple[str, str] | None]:
        return list(map(data_file_key, names, repeat(self.base_extension)))


_LOG_ORDER = operator.attrgetter("base_instant", "version", "write_token")
_MDT_INIT_PREFIX = "00000000000000"  # HoodieTableMetadata.SOLO_COMMIT_TIMESTAMP: MDT initialization instants


def _add_log(group: FileGroup, instant: str, log: LogFile) -> None:
    file_slice = group.slice_at(instant)
    file_slice.log_files = [*file_slice.log_files, log]


@dataclass(frozen=True, slots=True)
class CompletionTimeSlicing:
    """Table versions 8 and 9: a log file is named by the deltacommit that wrote it and joins the
    slice of the greatest base instant at or before that deltacommit's completion time (its own
    slice, keyed by its deltacommit, when no slice is that old); a pending compaction opens an empty
    slice first, so logs completing after its request land there. Logs of deltacommits that have
    not completed are left out (archived instants count as completed). Hudi 1.0.x/1.1:
    AbstractTableFileSystemView.buildFileGroups, HoodieFileGroup.addLogFile/getBaseInstantTime,
    CompletionTimeQueryViewV2.getCompletionTime/isCompleted (apache/hudi, the commits of
    ../reference/hudi-1x.md section 4)."""

    base_extension: str
    # Requested -> completion time of every completed instant of the active timeline.
    completion_times: Mapping[str, str]
    # Instants before the first write instant of the active timeline are archived, hence completed
    # (CompletionTimeQueryViewV2.isArchived); "" when there is none.
    first_active: str
    # (partition, file id) -> instant of the pending compaction planned on the file group.
    pending_compactions: Mapping[tuple[str, str], str]
    # The archived instants' completion times, read only when a log's deltacommit is not active.
    archived: ArchivedCompletionTimes = field(compare=False)

    @classmethod
    def of(cls, config: TableConfig, timeline: ActiveTimeline, compactions: Compactions
           ) -> CompletionTimeSlicing:
        history = LSMHistory(timeline.storage, timeline_layout(config).paths.history_path(config))
        first = timeline.write_timeline().first()
        pending = {key: op.compaction_instant for key, op in compactions().items()}
        return cls(config.base_file_extension, timeline.completion_times, first.timestamp if first else "",
                   pending, ArchivedCompletionTimes(history))

    def is_completed(self, instant: str) -> bool:
        return instant in self.completion_times or instant < self.first_active or \
            self.archived.get(instant) is not None

    def completion_time(self, begin: str, instant: str) -> str | None:
        """getCompletionTime(begin, instant): None while pending; the instant itself where the times
        are not of one format (integer ids of tests and legacy tables: ordered as requested)."""
        completed = self.completion_times.get(instant) or self.archived.get(instant)
        if completed is not None and len(completed) != len(begin):
            return instant
        return completed

    def file_groups(self, partition: str, names: Iterable[str]) -> dict[str, FileGroup]:
        groups: dict[str, FileGroup] = {}
        logs: dict[str, list[LogFile]] = {}
        for name in names:  # each log name parsed once (data_file_key would parse it again)
            if name.startswith("."):
                log = None if name.endswith(".crc") else LogFile.parse(name)
                if log is not None:
                    if log.file_id not in groups:
                        groups[log.file_id] = FileGroup(partition, log.file_id)
                    logs.setdefault(log.file_id, []).append(log)
            elif (key := data_file_key(name, self.base_extension)) is not None:
                group = groups.get(key[0])
                if group is None:
                    group = groups[key[0]] = FileGroup(partition, key[0])
                group.slice_at(key[1]).base_file = name
        for file_id, group in groups.items():
            compaction = self.pending_compactions.get((partition, file_id))
            if compaction is not None:
                group.slice_at(compaction)
            group_logs = sorted(logs.get(file_id, ()), key=_LOG_ORDER)
            self._check_naming(partition, group, group_logs)
            pending = []
            for log in group_logs:
                if self.is_completed(log.base_instant):
                    _add_log(group, self.slice_instant(group, log.base_instant), log)
                else:
                    pending.append(log)
            # Logs of writes not completed go into slices of their own deltacommit, which the view
            # leaves out as uncommitted (filterUncommittedFiles), once the others are placed.
            for log in pending:
                _add_log(group, log.base_instant, log)
        for group in groups.values():
            for file_slice in group.slices.values():
                if len(file_slice.log_files) > 1:
                    file_slice.log_files.sort(key=_LOG_ORDER, reverse=True)  # HoodieLogFile's reverse order
        with_base = [fid for fid, g in groups.items() if any(s.base_file for s in g.slices.values())]
        return {fid: groups[fid] for fid in [*with_base, *groups]}

    def slice_instant(self, group: FileGroup, deltacommit: str) -> str:
        """The base instant of the slice a log of `deltacommit` joins (HoodieFileGroup.getBaseInstantTime)."""
        if not group.slices:
            return deltacommit
        latest = max(group.slices)
        completed = self.completion_time(latest, deltacommit)
        if completed is None:
            return latest
        return max((instant for instant in group.slices if instant <= completed), default=deltacommit)

    @staticmethod
    def _check_naming(partition: str, group: FileGroup, logs: list[LogFile]) -> None:
        """Refuse a file group holding logs named by a base instant (table version 6's naming) beside
        logs named by their deltacommit: what an upgrade to version 8 that stopped half way leaves.
        A 1.x metadata table's initialization writes a base file and a log of one instant (`0...0N`,
        observed on the Java-written v8/v9 tables): that log is named by its deltacommit."""
        bases = {i for i, s in group.slices.items() if s.base_file and not i.startswith(_MDT_INIT_PREFIX)}
        old = [log.name for log in logs if log.base_instant in bases]
        if old and len(old) != len(logs):
            new = next(log.name for log in logs if log.base_instant not in bases)
            raise UnsupportedTableError(
                f"{partition or '.'}/{group.file_id}: log files named by their base instant ({old[0]}) "
                f"beside log files named by their deltacommit ({new}): an unfinished upgrade to table "
                "version 8? Finish it with Hudi first")

    def slice_keys(self, names: list[str]) -> list[tuple[str, str] | None]:
        keys: dict[str, tuple[str, str]] = {}
        for group in self.file_groups("", names).values():
            for instant, file_slice in group.slices.items():
                keys.update((name, (group.file_id, instant)) for name in file_slice.file_names)
        return [keys.get(name) for name in names]


# hoodie.table.version -> how a view of the table is sliced (given the table's config, timeline and
# pending compaction operations).
_SLICING: dict[int, Callable[[TableConfig, ActiveTimeline, Compactions], FileSlicing]] = {
    5: BaseInstantSlicing.of, 6: BaseInstantSlicing.of,
    8: CompletionTimeSlicing.of, 9: CompletionTimeSlicing.of}


def file_slicing(config: TableConfig, timeline: ActiveTimeline,
                 compactions: Compactions | None = None) -> FileSlicing:
    """The slicing rule of the table's version, resolved once per view (never per file).
    `compactions`: the view's pending compaction operations, read from `timeline` when not given."""
    make = _SLICING.get(config.table_version)
    if make is None:
        raise UnsupportedTableError(f"file slices of table version {config.table_version} are not supported")
    return make(config, timeline, compactions or (lambda: compaction_operations(timeline)))


def data_file_key(name: str, base_extension: str) -> tuple[str, str] | None:
    """(file id, base instant) of a data file name, split as `build_file_groups` splits it; None for
    any other name (checksum files, other extensions, names without the parts)."""
    if name.startswith("."):
        if name.endswith(".crc"):
            return None
        log = LogFile.parse(name)
        return (log.file_id, log.base_instant) if log is not None else None
    if not name.endswith(base_extension):
        return None
    file_id, _, rest = name.partition("_")
    instant = rest.partition("_")[2].partition(".")[0]
    return (file_id, instant) if instant and file_id else None


def file_group_instants(keys: Iterable[tuple[str, str] | None]) -> dict[str, set[str]]:
    """File id -> the base instants of its slices, from `data_file_key`s (None skipped): the grouping
    of `build_file_groups` without an object per slice, for checks that ask only which slices exist
    (the clean's re-validation)."""
    groups: dict[str, set[str]] = {}
    for key in keys:
        if key is not None:
            instants = groups.get(key[0])
            if instants is None:
                groups[key[0]] = {key[1]}
            else:
                instants.add(key[1])
    return groups


@dataclass(frozen=True, slots=True)
class CompactionOperation:
    """A file group in a pending (log) compaction plan and the instant of the plan."""

    partition: str
    file_id: str
    base_instant: str
    compaction_instant: str


def compaction_operations(active: ActiveTimeline) -> dict[tuple[str, str], CompactionOperation]:
    """(partition, file id) -> its operation in a pending compaction or log compaction plan."""
    operations: dict[tuple[str, str], CompactionOperation] = {}
    for instant in active.filter_actions({COMPACTION, LOG_COMPACTION}).filter_pending():
        plan = metadata.requested_plan(active, instant) or {}
        for op in plan.get("operations") or []:
            key = (op.get("partitionPath") or "", op["fileId"])
            operations[key] = CompactionOperation(key[0], key[1], op.get("baseInstantTime") or "",
                                                  instant.timestamp)
    return operations


class FileSystemView:
    """Hudi's table file-system view over one listing of the table's partitions."""

    def __init__(self, table: HoodieTable, engine: Engine | None = None,
                 timeline: Timeline | None = None, parallelism: int = 200):
        self.table = table
        self.engine = engine or LocalEngine()
        self.parallelism = parallelism
        active = table.active_timeline
        self.timeline = timeline if timeline is not None else active.write_timeline().filter(
            lambda i: i.is_completed or i.action == COMPACTION
        )
        # One read of the compaction plans serves the slicing rule (versions 8/9) and the view.
        self.slicing = file_slicing(table.config, active, lambda: self.pending_compaction_operations)
        self._last = self.timeline.last()
        self._first = self.timeline.first()
        self._timestamps = frozenset(self.timeline.timestamps)
        self._loaded: dict[str, tuple[dict[str, FileGroup], list[str]]] = {}

    # -------------------------------------------------------------- listing
    @cached_property
    def partition_listings(self) -> dict[str, PartitionListing]:
        listings = list_partitions(self.table.storage, self.engine, self.parallelism)
        return {p.partition: p for p in sorted(listings, key=lambda p: p.partition)}

    @property
    def partitions(self) -> list[str]:
        return list(self.partition_listings)

    def load_all(self) -> int:
        """Build every partition's file groups now; returns the number of file groups.

        The cyclic garbage collector is paused meanwhile: the view is millions of small acyclic
        objects, and Python's collector would otherwise rescan them over and over as they are made
        (measured: more than half of the build time of a 1,000,000-file table).
        """
        with gc_paused():
            return sum(len(self._load_partition(p)[0]) for p in self.partitions)

    def _load_partition(self, partition: str) -> tuple[dict[str, FileGroup], list[str]]:
        """A partition's committed file groups and the paths of its uncommitted files, built once."""
        loaded = self._loaded.get(partition)
        if loaded is not None:
            return loaded
        listings = self.__dict__.get("partition_listings")  # no table-wide discovery just for one
        if listings is not None:
            names = listings[partition].files if partition in listings else []
        else:
            names = self.table.storage.list_names(partition)[0]
        groups = self.slicing.file_groups(partition, names)
        for op in self._compactions_by_partition.get(partition, []):
            if op.file_id in groups:
                groups[op.file_id].slice_at(op.compaction_instant)
        uncommitted: list[str] = []
        # A partition has few distinct instants: decide each once, then touch only affected groups.
        instants = {i for group in groups.values() for i in group.slices}
        if invisible := {i for i in instants if not self.is_committed(i)}:
            for file_id in list(groups):
                slices = groups[file_id].slices
                for instant in invisible.intersection(slices):
                    uncommitted.extend(slices.pop(instant).paths)
                if not slices:
                    del groups[file_id]
        loaded = self._loaded[partition] = (groups, uncommitted)
        return loaded

    @cached_property
    def _compactions_by_partition(self) -> dict[str, list[CompactionOperation]]:
        by_partition: dict[str, list[CompactionOperation]] = {}
        for op in self.pending_compaction_operations.values():
            by_partition.setdefault(op.partition, []).append(op)
        return by_partition

    # ----------------------------------------------------------- visibility
    def is_committed(self, instant_time: str) -> bool:
        """Hudi's isFileSliceCommitted: on the view timeline, or older than its first instant."""
        if self._last is None or instant_time > self._last.timestamp:
            return False
        return instant_time in self._timestamps or instant_time < self._first.timestamp

    def all_file_groups(self, partition: str) -> list[FileGroup]:
        """Every file group with its committed slices (groups with none are left out)."""
        return list(self._load_partition(partition)[0].values())

    def uncommitted_files(self, partition: str) -> list[str]:
        """Files of slices whose base instant is not committed: in-flight or failed writes."""
        return list(self._load_partition(partition)[1])

    def latest_file_slices(self, partition: str) -> list[FileSlice]:
        """The newest committed slice of every file group not replaced (Hudi's getLatestFileSlices)."""
        replaced = self.replaced_file_groups
        return [
            group.sorted_slices()[0]
            for group in self.all_file_groups(partition)
            if (partition, group.file_id) not in replaced
        ]

    # ------------------------------------------------ timeline-derived sets
    @cached_property
    def replaced_file_groups(self) -> dict[tuple[str, str], str]:
        """(partition, file id) -> time of the completed replacecommit that replaced it (latest wins)."""
        active = self.table.active_timeline
        replaced: dict[tuple[str, str], str] = {}
        for instant in active.filter_actions({"replacecommit"}).filter_completed():
            commit = metadata.commit_metadata(active, instant)
            for partition, file_ids in commit.replaced_file_ids.items():
                for file_id in file_ids:
                    replaced[(partition, file_id)] = instant.timestamp
        return replaced

    @cached_property
    def pending_compaction_operations(self) -> dict[tuple[str, str], CompactionOperation]:
        """(partition, file id) -> its pending compaction or log compaction operation."""
        return compaction_operations(self.table.active_timeline)

    @cached_property
    def pending_clustering_file_groups(self) -> dict[tuple[str, str], str]:
        """(partition, file id) -> instant of the pending clustering (replacecommit) planning it."""
        active = self.table.active_timeline
        groups: dict[tuple[str, str], str] = {}
        for instant in active.pending_replace_timeline():
            requested = metadata.requested_plan(active, instant) or {}
            plan = requested.get("clusteringPlan") or {}
            for input_group in plan.get("inputGroups") or []:
                for file_slice in input_group.get("slices") or []:
                    key = (file_slice.get("partitionPath") or "", file_slice["fileId"])
                    groups[key] = instant.timestamp
        return groups

    @cached_property
    def pending_plan_files(self) -> frozenset[str]:
        """Names of the data files that pending compaction and clustering plans will read."""
        active = self.table.active_timeline
        names: set[str] = set()
        pending = active.filter_actions({COMPACTION, LOG_COMPACTION}).filter_pending()
        for instant in pending:
            for op in (metadata.requested_plan(active, instant) or {}).get("operations") or []:
                names.update(p for p in [op.get("dataFilePath"), *(op.get("deltaFilePaths") or [])] if p)
        for instant in active.pending_replace_timeline():
            plan = (metadata.requested_plan(active, instant) or {}).get("clusteringPlan") or {}
            for group in plan.get("inputGroups") or []:
                for file_slice in group.get("slices") or []:
                    paths = [file_slice.get("dataFilePath"), *(file_slice.get("deltaFilePaths") or [])]
                    names.update(p for p in paths if p)
        return frozenset(path.rpartition("/")[2] for path in names)

    @cached_property
    def savepointed_files(self) -> frozenset[str]:
        """Names of data files listed by completed savepoints; slices holding one are never cleaned."""
        return frozenset(name for savepoint in completed_savepoints(self.table.active_timeline)
                         for names in savepoint.files.values() for name in names)

