"""The files a savepoint lists: per partition, the latest file slice of every file group as of the
savepointed instant, as Hudi 0.15's SavepointActionExecutor collects them (`getLatestFileSlicesBeforeOrOn`
with pending-compaction slices included, or `getAllLatestFileSlicesBeforeOrOn` over a metadata-table
listing): file groups replaced at or before the instant are left out; of the committed slices whose
base instant is at or before it, the newest wins; a slice opened by a pending compaction shows its log
files only (its base file is still being written) and is skipped when it has none. A slice contributes
its base file and all its log files (HUDI-6007, 0.14.0): in table version 6 a log file carries its
slice's base instant, not its deltacommit's, so it cannot be told apart by time. Hudi 1.x (8/9) does
the same over slices made by completion time, leaving out files of writes not completed
(AbstractTableFileSystemView.getLatestFileSliceFilteringUncommittedFiles): the view's slicing does
that here (`fsview.CompletionTimeSlicing`), so this code is one for both."""

from __future__ import annotations

from hudi_assets.engine import Engine
from hudi_assets.fsview import FileSlice, FileSystemView, PartitionListing
from hudi_assets.metadata.table import listing_metadata_table
from hudi_assets.table import HoodieTable


def listing_view(table: HoodieTable, engine: Engine | None, metadata_enabled: bool) -> FileSystemView:
    """The table's file-system view, listed from the metadata table's files partition when the table
    has one and `hoodie.metadata.enable` is on (as the cleaner lists), else from storage."""
    view = FileSystemView(table, engine)
    mdt = listing_metadata_table(table.storage, table.config, metadata_enabled)
    if mdt is not None:
        listed = mdt.files_in_partitions(mdt.partition_paths())
        view.partition_listings = {p: PartitionListing(p, list(listed[p])) for p in sorted(listed)}
    return view


def latest_files_as_of(view: FileSystemView, instant: str) -> dict[str, tuple[str, ...]]:
    """Partition -> names of the base and log files of its latest file slices as of `instant`
    (every partition, an empty one too, as Hudi maps each listed partition)."""
    replaced = view.replaced_file_groups
    compactions = view.pending_compaction_operations
    files: dict[str, tuple[str, ...]] = {}
    for partition in view.partitions:
        names: list[str] = []
        for group in sorted(view.all_file_groups(partition), key=lambda g: g.file_id):
            when = replaced.get((partition, group.file_id))
            if when is not None and when <= instant:
                continue
            pending = compactions.get((partition, group.file_id))
            latest = _latest_slice(group.sorted_slices(), instant,
                                   pending.compaction_instant if pending is not None else None)
            if latest is not None:
                names.extend(latest)
        files[partition] = tuple(names)
    return files


def _latest_slice(slices: list[FileSlice], instant: str, compaction_instant: str | None) -> list[str] | None:
    """File names of the newest slice at or before `instant` (newest first in `slices`)."""
    for file_slice in slices:
        if file_slice.base_instant > instant:
            continue
        if file_slice.base_instant == compaction_instant:
            logs = [log.name for log in file_slice.log_files]
            if logs:
                return logs
            continue
        if not file_slice.is_empty:
            return file_slice.file_names
    return None
