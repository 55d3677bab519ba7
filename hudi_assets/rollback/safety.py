"""The rollback's safety rule: no marker and no rollback plan, whoever wrote it, makes a rollback
delete a file the failed instant did not write.

Hudi trusts its markers (MarkerBasedRollbackStrategy deletes what they name). We judge every path
on its canonical form (`table_paths.table_relative`) before anything is written: markers when a
rollback is planned, the plan's files when a pending rollback is resumed. One offending entry
refuses the whole rollback (`UnsafePlanError`, exit 2) naming the marker file and line, or the plan
file: nothing written, nothing deleted. A data file a rollback deletes is one the failed instant
wrote (the instant in its name), inside a partition directory; a log file of a slice another
instant opened is appended to, never deleted (on table versions 8 and 9 nothing is appended: a plan
naming log blocks is refused); partition metadata and `.hoodie` are never touched.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from hudi_assets.exceptions import PathOutsideTableError, UnsafePlanError
from hudi_assets.fsview import PARTITION_METAFILE_NAMES, LogFile
from hudi_assets.rollback.markers import Marker
from hudi_assets.rollback.metadata import RollbackPlan, deletes_only
from hudi_assets.table import HoodieTable
from hudi_assets.table_paths import data_file_problem, rollback_file_problem, table_relative, written_instant
from hudi_assets.timeline.instant import Instant, State

REFUSED = ("Nothing was written or deleted; the write stays pending. Inspect the markers, then remove "
           "the offending lines (a marker only ever names a file its own write created or appended to)")
REFUSED_PLAN = ("Nothing was deleted. Inspect the plan; `hudi-assets rollback {path} --discard-pending "
                "{instant}` removes it while the write it rolls back is still pending")


def checked_markers(table: HoodieTable, instant_time: str, markers: Iterable[Marker]) -> list[Marker]:
    """Every marker in canonical form, or `UnsafePlanError` for the first that breaks the rule."""
    partitions: dict[str, bool] = {}
    resolved: dict[str, str] = {}
    checked = []
    for marker in markers:
        rel, why = _canonical(table, marker.file_path, resolved)
        if why is None:
            why = _marker_problem(table, instant_time, marker, rel)
        if why is None:
            directory = rel.rpartition("/")[0]
            if directory not in partitions:
                partitions[directory] = _is_partition_directory(table, directory)
            if not partitions[directory]:
                why = f"its directory {directory or '(base path)'!r} holds no partition metadata"
        if why is not None:
            raise UnsafePlanError(marker.where, marker.file_path, why, REFUSED)
        checked.append(Marker(rel, marker.io_type, marker.source, marker.line))
    return checked


def check_plan(table: HoodieTable, plan: RollbackPlan, rollback_instant: Instant) -> None:
    """A pending rollback plan (ours or a Java writer's) before its first delete: every file it
    deletes is one the failed instant wrote; every log file it appends to is a data file."""
    requested = rollback_instant.with_state(State.REQUESTED)
    plan_file = table.storage.uri(table.active_timeline.state_file_path(requested))
    hint = REFUSED_PLAN.format(path=table.base_path, instant=rollback_instant.timestamp)
    extension = table.config.base_file_extension
    resolved: dict[str, str] = {}
    for request in plan.requests:
        for path in request.files_to_delete:
            rel, why = _canonical(table, path, resolved)
            why = why or rollback_file_problem(rel, plan.instant_time, extension)
            if why is not None:
                raise UnsafePlanError(plan_file, path, why, hint)
        for path in request.log_blocks_to_delete:
            if deletes_only(table.config):
                raise UnsafePlanError(plan_file, path, f"is a log file to append a rollback block to, which "
                                      f"a table version {table.config.table_version} rollback never does "
                                      "(Hudi 1.x only deletes the failed write's files)", hint)
            name = path.rpartition("/")[2]
            rel, why = _canonical(table, posixpath.join(request.partition_path, name), resolved)
            why = why or data_file_problem(rel) or (None if LogFile.parse(rel.rpartition("/")[2])
                                                     else "is not a log file")
            if why is not None:
                raise UnsafePlanError(plan_file, path, why, hint)


def _canonical(table: HoodieTable, path: str, resolved: dict[str, str]) -> tuple[str, str | None]:
    try:
        return table_relative(table.storage, path, resolved_dirs=resolved), None
    except PathOutsideTableError:
        return "", "resolves outside the table's base path"


def _marker_problem(table: HoodieTable, instant_time: str, marker: Marker, rel: str) -> str | None:
    """CREATE and MERGE markers name a base file the rollback deletes; an APPEND marker a log file
    (deleted when the failed instant opened its slice, else appended to) or, as pre-HUDI-1517
    writers left them, the slice's base file (never deleted)."""
    extension = table.config.base_file_extension
    name = rel.rpartition("/")[2]
    if marker.io_type != "APPEND":
        return rollback_file_problem(rel, instant_time, extension)
    if written_instant(name, extension) == instant_time and LogFile.parse(name) is not None:
        return rollback_file_problem(rel, instant_time, extension)
    return data_file_problem(rel) or (None if written_instant(name, extension) else "is not a data file")


def _is_partition_directory(table: HoodieTable, directory: str) -> bool:
    """A directory Hudi writes data files into: it holds partition metadata (the base path of a
    table without partitions counts as one)."""
    if not directory and not table.config.is_partitioned:
        return True
    names, _ = table.storage.list_names(directory)
    return not PARTITION_METAFILE_NAMES.isdisjoint(names)
