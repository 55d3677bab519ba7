"""The file facts of the status report, per partition, from the listing the clean plan reads anyway:
the latest committed base file of each file group (size percentiles, small files under
`hoodie.parquet.small.file.limit`) and, on MERGE_ON_READ, the log files of each group's latest slice
(the compaction backlog). Only those files are sized, so a local table costs one `stat` per file
group beyond the listing, not one per file.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hudi_assets.fsview import FileSlicing
from hudi_assets.storage import DirectoryListing, Storage


@dataclass(frozen=True, slots=True)
class PartitionFacts:
    """One partition: the sizes of its file groups' latest base files, and per group with log files
    in its latest slice, their count and bytes (arrays: a task sends them back compactly)."""

    partition: str
    base_sizes: array
    small_files: int
    log_counts: array
    log_bytes: array


@dataclass(frozen=True)
class FactsOfPartitions:
    """What every partition task shares; `is_committed` is the view's own rule (Hudi's
    isFileSliceCommitted), which forked workers inherit with the view."""

    storage: Storage
    slicing: FileSlicing
    is_committed: Callable[[str], bool]
    small_file_limit: int

    def of(self, partition: str, names: list[str], listing: DirectoryListing | None = None) -> PartitionFacts:
        """The facts of one listed partition (`listing` carries sizes on object stores)."""
        groups = self.slicing.file_groups(partition, names)
        bases: list[str] = []
        logs: list[list[str]] = []
        for group in groups.values():
            committed = (group.slices[i] for i in sorted(group.slices, reverse=True) if self.is_committed(i))
            latest = next(committed, None)
            if latest is None:
                continue
            if latest.base_file:
                bases.append(latest.base_file)
            if latest.log_files:
                logs.append([log.name for log in latest.log_files])
        sizes = self.storage.file_sizes(partition, [*bases, *(n for g in logs for n in g)], listing)
        base_sizes = array("q", sizes[:len(bases)])
        log_sizes = iter(sizes[len(bases):])
        log_bytes = array("q", (sum(next(log_sizes) for _ in group) for group in logs))
        return PartitionFacts(partition, base_sizes, sum(1 for s in base_sizes if s < self.small_file_limit),
                              array("q", map(len, logs)), log_bytes)


def percentiles(values: Sequence[int], points: Iterable[int] = (10, 50, 90)) -> dict[str, int]:
    """Nearest-rank percentiles and the maximum (empty: zeros)."""
    ordered = sorted(values)
    if not ordered:
        return {**{f"p{p}": 0 for p in points}, "max": 0}
    return {**{f"p{p}": ordered[max(0, -(-p * len(ordered) // 100) - 1)] for p in points}, "max": ordered[-1]}


def files_summary(facts: list[PartitionFacts], small_file_limit: int) -> dict[str, Any]:
    """Table-wide base-file facts, and the partitions holding small files (most first)."""
    sizes = [s for f in facts for s in f.base_sizes]
    small = sorted(((f.partition, f.small_files, len(f.base_sizes)) for f in facts if f.small_files),
                   key=lambda item: (-item[1], item[0]))
    return {"partitions": len(facts), "file_groups": len(sizes), "base_bytes": sum(sizes),
            "base_file_size": percentiles(sizes), "small_file_limit": small_file_limit,
            "small_files": sum(f.small_files for f in facts),
            "small_files_by_partition": [{"partition": p, "small_files": n, "file_groups": g}
                                         for p, n, g in small]}


def compaction_backlog(facts: list[PartitionFacts]) -> dict[str, Any]:
    """Log files and bytes waiting in the latest slice of each file group (MERGE_ON_READ)."""
    counts = [c for f in facts for c in f.log_counts]
    sizes = [b for f in facts for b in f.log_bytes]
    return {"file_groups_with_logs": len(counts), "log_files": sum(counts), "log_bytes": sum(sizes),
            "log_files_per_file_group": percentiles(counts, (50,)),
            "log_bytes_per_file_group": percentiles(sizes, (50,))}
