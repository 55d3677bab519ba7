"""The safety rule: no clean plan, whoever wrote it, deletes a file that a reader still needs.

Hudi trusts its own plans; we re-validate every plan against the current timeline and one listing
of each planned partition before the first delete (and before a new plan is requested). A plan is
refused whole when any entry:
- is not a data file (base or log file of the table) directly inside the partition the plan files
  it under, or its partition directory resolves (symbolic links included) outside the base path
  or into `.hoodie`;
- belongs to the latest committed slice of a file group that is not replaced, or to a slice that
  is not committed (an in-flight or failed write: rollback owns those files);
- under a policy by commits or hours: belongs to a slice at or after the plan's earliest commit to
  retain (ECTR), to the newest slice before it (what a reader as of the ECTR reads), or to a group
  replaced at or after the ECTR;
- was superseded (its superseding commit completed) less than the reader window ago
  (`hudi_assets.cleaner.reader.window`, `clean.reader_window`), when the window is on;
- is listed by a savepoint (matched by name across all partitions, as Hudi does) or read by a
  pending compaction, log compaction or clustering plan;
- names a partition to delete that still holds a file group that is not replaced, is not a
  partition, or is not a normalised path inside the base path and outside `.hoodie`;
and when the plan's own metadata contradicts its instant time (ECTR or last completed commit not
before it) or retains fewer commits than the table's cleaning policy asks for now.

One listing per planned partition, with the view's timeline-derived sets computed once; each
partition directory is resolved once, not each file. Per file the work is string operations: listed
names are grouped by splitting them (no object per file slice), and a planned path in the spelling
the plan records is recognised by its partition's prefix (any other spelling takes the full rule of
`Storage.relativize`). Partitions are checked in forked workers on a local file system
(`store_map`), each returning its verdict as strings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hudi_assets.clean.config import CleanConfig, CleaningPolicy
from hudi_assets.clean.plan import CleanerPlan, CleanFileInfo
from hudi_assets.clean.reader_window import ReaderWindow
from hudi_assets.engine import Engine, LocalEngine, gc_paused, store_map
from hudi_assets.exceptions import PathOutsideTableError, UnsafePlanError
from hudi_assets.fsview import (
    PARTITION_METAFILE,
    FileSystemView,
    LogFile,
    NameSearch,
    file_group_instants,
)
from hudi_assets.retention import earliest_commit_to_retain
from hudi_assets.storage import Storage
from hudi_assets.table import HoodieTable
from hudi_assets.table_paths import is_normal, partition_problem, table_relative
from hudi_assets.timeline.instant_time import wall_clock

DISCARD_HINT = ("Nothing was deleted. A refused plan blocks every later clean and a Hudi writer with "
                "automatic cleaning would execute it: inspect it, then remove it with "
                "`hudi-assets clean {path} --discard-pending {instant}`")
NEW_PLAN_HINT = "Nothing was written or deleted: the new plan was refused before it was requested"


@dataclass(frozen=True, slots=True)
class PlanViolation:
    """One offending entry of a plan: which plan, which path, and why it may not be deleted."""

    instant: str
    plan_file: str
    path: str
    problem: str


@dataclass(slots=True)
class ValidatedPlan:
    """A plan that passed: the files the executor may delete, by name per partition (what the clean
    metadata records and what a delete relative to the partition's directory takes), with the Hadoop
    `.crc` companions that exist beside them (relative paths), and the partition directories it may
    remove."""

    instant: str
    files: dict[str, list[str]] = field(default_factory=dict)  # partition -> file names
    companions: list[str] = field(default_factory=list)
    partitions_to_delete: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ValidationReport:
    plans: list[ValidatedPlan] = field(default_factory=list)
    violations: list[PlanViolation] = field(default_factory=list)

    @property
    def safe(self) -> bool:
        return not self.violations

    def raise_if_unsafe(self, base_path: str, requested: bool = True) -> None:
        """`requested`: the plans are on the timeline (the hint says how to remove one); a new plan
        refused before it is written leaves nothing to discard."""
        if self.violations:
            first = self.violations[0]
            hint = DISCARD_HINT.format(path=base_path, instant=first.instant) if requested else NEW_PLAN_HINT
            raise UnsafePlanError(first.plan_file, first.path, first.problem, hint)


def _is_plain_name(name: str) -> bool:
    """A file name that `posixpath.normpath` leaves as it is (`#`, `?` are characters of a name)."""
    return "/" not in name and "\0" not in name and name not in ("", ".", "..")


class _Partition:
    """One planned partition, listed once: the committed base instants of each file group. Names are
    grouped by string splits alone (no object per file slice): this runs over every listed file."""

    def __init__(self, view: FileSystemView, partition: str):
        storage = view.table.storage
        names, self.subdirs = storage.list_names(partition)
        search = NameSearch(names)
        self.has_checksums = search.any_ends_with(".crc")
        self.exists = bool(names or self.subdirs) or storage.exists(partition) if partition else True
        self.is_partition = search.any_starts_with(PARTITION_METAFILE)
        keys = view.slicing.slice_keys(names)
        # every listed name -> (file id, base instant) of a data file, None for any other file
        self.key_of = dict(zip(names, keys, strict=True))
        groups = file_group_instants(self.key_of.values())
        self.file_ids = groups.keys()
        visible = {i: view.is_committed(i) for i in set().union(*groups.values())}
        # file id -> its committed base instants, newest first
        self.committed = {fid: sorted((i for i in instants if visible[i]), reverse=True)
                          for fid, instants in groups.items()}
        self._newest_before: dict[tuple[str, str], str | None] = {}

    def newest_before(self, file_id: str, ectr: str) -> str | None:
        """The newest committed base instant of a group before `ectr`, found once per group."""
        key = (file_id, ectr)
        if key not in self._newest_before:
            self._newest_before[key] = next((i for i in self.committed.get(file_id, ()) if i < ectr), None)
        return self._newest_before[key]


class PlanValidator:
    """Validates plans against one snapshot of the timeline and one listing per partition."""

    def __init__(self, table: HoodieTable, config: CleanConfig, now: datetime | None = None,
                 engine: Engine | None = None):
        self.table = table
        self.engine = engine or LocalEngine()
        self.config = config
        self.storage: Storage = table.storage
        self.view = FileSystemView(table)
        self._partitions: dict[str, _Partition] = {}
        self._resolved: dict[str, str | None] = {}
        timeline = table.active_timeline
        self.window = ReaderWindow.of(table, config.reader_window_s, now or wall_clock())
        self._required_ectr = None if config.policy == CleaningPolicy.KEEP_LATEST_FILE_VERSIONS else \
            earliest_commit_to_retain(timeline.commits_and_compaction_timeline(), config, now)

    # ------------------------------------------------------------------ helpers
    def _partition(self, partition: str) -> _Partition:
        found = self._partitions.get(partition)
        if found is None:
            found = self._partitions[partition] = _Partition(self.view, partition)
        return found

    def _directory_problem(self, partition: str) -> str | None:
        """Why a partition directory may not be touched (None when it may), resolved once: its
        canonical form (`table_relative`), as given and with symbolic links resolved, must be a
        partition's place (not the base path, nothing under `.hoodie`)."""
        if partition in self._resolved:
            return self._resolved[partition]
        problem = None
        if partition and not is_normal(partition):
            problem = "partition path is not a normalised relative path"
        else:
            try:
                lexical = self.storage.relativize(partition)
                resolved = table_relative(self.storage, partition, directory=True)
            except PathOutsideTableError:
                problem = "partition directory resolves outside the base path"
            else:
                if partition and (why := partition_problem(lexical)):
                    problem = why
                elif partition and (why := partition_problem(resolved)):
                    problem = f"partition directory {why} (resolves to {resolved or 'the base path'})"
        self._resolved[partition] = problem
        return problem

    def _relative(self, path: str) -> str | None:
        try:
            return self.storage.relativize(path)
        except PathOutsideTableError:
            return None

    # --------------------------------------------------------------- the rule
    def validate(self, plans: Iterable[tuple[str, str, CleanerPlan]],
                 meanwhile: Callable[[], Any] | None = None) -> ValidationReport:
        """`plans`: (instant time, plan file as shown to people, plan). Every plan is checked; each
        offending entry becomes a row of the report. `meanwhile`: work of the caller's done once,
        while forked workers check the partitions (it must decide and write nothing)."""
        report = ValidationReport()
        for instant, plan_file, plan in plans:
            validated, problems = self._validate_plan(instant, plan, meanwhile)
            meanwhile = None
            report.violations.extend(PlanViolation(instant, plan_file, path, why) for path, why in problems)
            if not problems:
                report.plans.append(validated)
        return report

    def _validate_plan(self, instant: str, plan: CleanerPlan, meanwhile: Callable[[], Any] | None
                       ) -> tuple[ValidatedPlan, list[tuple[str, str]]]:
        problems: list[tuple[str, str]] = []
        validated = ValidatedPlan(instant)
        problems.extend(self._metadata_problems(instant, plan))
        entries = plan.file_paths_to_delete
        planned = [partition for partition, infos in entries.items() if infos]
        # The view's timeline-derived sets are made here, once, before the workers fork.
        replaced = self.view.replaced_file_groups
        _ = self.view.savepointed_files, self.view.pending_plan_files
        with gc_paused():
            verdicts = store_map(self.engine, self.storage.is_local,
                                 lambda partition: self._check_partition(partition, entries[partition],
                                                                         plan.ectr_timestamp),
                                 planned, self.config.parallelism, meanwhile=meanwhile)
        checked = dict(zip(planned, verdicts, strict=True))
        for partition in entries:
            names, companions, found = checked.get(partition, ([], [], []))
            validated.files[partition] = names
            validated.companions.extend(companions)
            problems.extend(found)
        if self.table.config.is_partitioned:  # Hudi ignores partitionsToBeDeleted otherwise
            for partition in plan.partitions_to_delete:
                why = self._partition_delete_problem(partition, replaced)
                if why:
                    problems.append((partition or "(base path)", why))
                else:
                    validated.partitions_to_delete.append(partition)
        return validated, problems

    def _check_partition(self, partition: str, infos: list[CleanFileInfo], ectr: str | None
                         ) -> tuple[list[str], list[str], list[tuple[str, str]]]:
        """One planned partition, listed once: (names of the files that may go, their `.crc` companions
        as relative paths, problems). Runs in a forked worker on a local file system, so it returns
        only strings."""
        if why := self._directory_problem(partition):
            return [], [], [(infos[0].file_path, f"its partition {partition!r}: {why}")]
        # Not kept for later (as `_partition` keeps those of partitions to delete): a worker checks
        # many partitions, and each freed listing leaves its memory to the next.
        listed = _Partition(self.view, partition)
        rel_prefix = f"{partition}/" if partition else ""
        prefix = self._plain_prefix(partition, rel_prefix)
        cut = len(prefix or "")
        names: list[str] = []
        companions: list[str] = []
        problems: list[tuple[str, str]] = []
        for info in infos:
            path = info.file_path
            name = path[cut:] if prefix is not None and path.startswith(prefix) else ""
            if not _is_plain_name(name):  # any other spelling: the full rule of `Storage.relativize`
                if "\0" in path:
                    problems.append((path.replace("\0", "\\0"), "contains a NUL byte"))
                    continue
                rel = self._relative(path)
                if rel is None:
                    problems.append((path, "resolves outside the table's base path"))
                    continue
                directory, _, name = rel.rpartition("/")
                if directory != partition:
                    problems.append((path, f"is not a file of partition {partition!r}"))
                    continue
            if why := self._file_problem(partition, name, listed, ectr):
                problems.append((path, why))
                continue
            names.append(name)
            if listed.has_checksums and f".{name}.crc" in listed.key_of:
                companions.append(f"{rel_prefix}.{name}.crc")
        return names, companions, problems

    def _plain_prefix(self, partition: str, rel_prefix: str) -> str | None:
        """`<base uri>/<partition>/`, the spelling a plan records its paths in, when a plain file name
        after it is known to relativize to `<partition>/<name>` (checked once per partition); a path
        in any other spelling takes the full rule, so the per-file cost is a prefix test."""
        prefix = f"{self.storage.uri(partition)}/"
        if self._relative(f"{prefix}f") != f"{rel_prefix}f":
            return None
        return prefix

    def _metadata_problems(self, instant: str, plan: CleanerPlan) -> list[tuple[str, str]]:
        problems = []
        ectr, last = plan.ectr_timestamp, plan.last_completed_commit_timestamp
        if ectr is not None and not ectr < instant:
            problems.append((f"earliestInstantToRetain={ectr}",
                             f"is not before the plan's instant {instant}"))
        if last and not last < instant:
            problems.append((f"lastCompletedCommitTimestamp={last}",
                             f"is not before the plan's instant {instant}"))
        if ectr is not None and last and ectr > last:
            problems.append((f"earliestInstantToRetain={ectr}",
                             f"is after the plan's last completed commit {last}"))
        if self.config.policy != CleaningPolicy.KEEP_LATEST_FILE_VERSIONS and plan.total_files:
            required = self._required_ectr
            if ectr is None:
                problems.append((f"policy={plan.policy or '(none)'}",
                                 f"the plan keeps no earliest commit to retain, but the table's policy is "
                                 f"{self.config.policy}"))
            elif required is None or ectr > required.timestamp:
                problems.append((f"earliestInstantToRetain={ectr}",
                                 f"retains fewer commits than {self.config.policy} allows now (earliest "
                                 f"commit to retain: {required.timestamp if required else 'none'})"))
        return problems

    def _file_problem(self, partition: str, name: str, listed: _Partition, ectr: str | None) -> str | None:
        """Why a file directly inside a planned partition may not be deleted (None when it may)."""
        if name in self.view.savepointed_files:
            return "is listed by a savepoint"
        if name in self.view.pending_plan_files:
            return "is read by a pending compaction or clustering plan"
        where = listed.key_of.get(name)
        if where is None:
            if LogFile.parse(name) is None and not name.endswith(self.table.config.base_file_extension):
                return "is not a data file of the table"
            if name in listed.key_of:
                return "is not a data file of the table"
            return None  # already gone: a resumed clean
        file_id, instant = where
        committed = listed.committed.get(file_id) or []
        if instant not in committed:
            return "belongs to a write that is not committed (in flight or failed)"
        replaced_at = self.view.replaced_file_groups.get((partition, file_id))
        if replaced_at is None and committed[0] == instant:
            return "is part of the latest file slice of its file group"
        if ectr is not None:  # a policy by commits or hours
            if replaced_at is not None:
                if not replaced_at < ectr:
                    return f"its file group was replaced at {replaced_at}, not before the earliest commit " \
                           f"to retain {ectr}"
            elif not instant < ectr:
                return f"belongs to a slice at or after the earliest commit to retain {ectr}"
            elif instant == listed.newest_before(file_id, ectr):
                return f"is part of the newest slice before the earliest commit to retain {ectr} " \
                       "(what a reader as of it reads)"
        if self.window is not None:  # superseded by the next committed slice, the newest by the replace
            position = committed.index(instant)
            return self.window.why(committed[position - 1] if position else replaced_at)
        return None

    def _partition_delete_problem(self, partition: str, replaced: dict[tuple[str, str], str]) -> str | None:
        if not partition:
            return "the base path is not a partition"
        if why := self._directory_problem(partition):
            return why
        listed = self._partition(partition)
        if not listed.exists:
            return None  # already deleted: a resumed clean
        if not listed.is_partition:
            return f"is not a partition (no {PARTITION_METAFILE})"
        live = self._live_groups(partition, replaced)
        if live:
            return f"still holds {len(live)} file group(s) that are not replaced, e.g. {live[0]}"
        for nested, groups in self._nested_live_groups(partition, replaced):
            return (f"holds partition {nested} beneath it (deleted with it) with {len(groups)} file "
                    f"group(s) that are not replaced, e.g. {groups[0]}")
        if self.window is not None:  # every group is replaced: its replace commit superseded it
            for file_id in sorted(listed.file_ids):
                if why := self.window.why(replaced[(partition, file_id)]):
                    return f"holds file group {file_id}, whose latest version {why}"
        return None

    def _live_groups(self, partition: str, replaced: dict[tuple[str, str], str]) -> list[str]:
        return sorted(fid for fid in self._partition(partition).file_ids if (partition, fid) not in replaced)

    def _nested_live_groups(self, partition: str, replaced: dict[tuple[str, str], str]
                            ) -> Iterator[tuple[str, list[str]]]:
        """Directories at any depth beneath `partition` that hold live file groups: a partition
        directory is deleted recursively, and partitions may nest at mixed depths."""
        for name in self._partition(partition).subdirs:
            nested = f"{partition}/{name}"
            if live := self._live_groups(nested, replaced):
                yield nested, live
            yield from self._nested_live_groups(nested, replaced)
