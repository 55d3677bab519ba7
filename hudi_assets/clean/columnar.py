"""The commonest partition decided on numpy arrays of its names, not with an object per file slice.

A partition of base files only (table versions 5 and 6, where a file slice is one base instant's base
file and its logs; here there are no logs), with nothing in it replaced, being compacted or
savepointed, and the reader window off, is decided by one rule: in each file group, of the committed
slices that are candidates (by commits: those before ECTR; by file versions: all of them), the newest
`keep` stay and the others go. That is what `planner._decide_partition` decides for such a partition,
here as a few array operations over the whole partition, so that the Python work is per file group and
per distinct instant, not per file (measured on the 1,000,000-file bench table: half the CPU of
grouping and deciding object by object). Any other partition, or names this could read differently
from `build_file_groups`, is left to the general path (None).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hudi_assets.fsview import LogFile, is_checksum_file
from hudi_assets.java_collections import JavaHashMap, java_string_hash, java_string_hash_array

_S = np.strings


def decide_base_files(partition: str, names: list[str], base_extension: str, *, ectr: str | None,
                      keep: int, is_committed: Callable[[str], bool]) -> tuple[list[str], bool] | None:
    """(the names to delete, in plan order; whether the partition has no file group at all), or None
    when the general path must decide (a log file, a name that is not ASCII, two base files of one
    slice). `ectr`: the candidates are the committed slices before it; None: every committed slice.
    `keep`: how many candidates of each file group stay, newest first.

    Plan order: the file groups as the view's HashSet of (partition, file id) iterates them (filled
    in the order of each group's first base file in the listing), then newest slice first.
    """
    text = "".join(names)
    if not text.isascii() or "\x00" in text:  # as bytes: one byte a character, nothing taken as padding
        return None
    listed = np.array(names, dtype=np.bytes_)
    dotted = _S.startswith(listed, b".")
    for index in np.flatnonzero(dotted).tolist():  # the metafile, checksums, or a log: few per partition
        name = names[index]
        if not is_checksum_file(name) and LogFile.parse(name) is not None:
            return None
    # <fileId>_<writeToken>_<instant>.<ext> split as build_file_groups splits it: the file id up to the
    # first '_', the instant from the second '_' to the next '.' (there is one: the extension's).
    first = _S.find(listed, b"_")
    second = _S.find(listed, b"_", first + 1)
    dot = _S.find(listed, b".", second + 1)
    is_base = (_S.endswith(listed, base_extension.encode()) & ~dotted & (first > 0) & (second >= 0)
               & (dot > second + 1))
    rows = np.flatnonzero(is_base)
    if not len(rows):
        return [], True
    picked = listed[rows]
    file_ids = _S.slice(picked, first[rows])
    instants = _S.slice(picked, second[rows] + 1, dot[rows])
    inserted = list(dict.fromkeys(file_ids.tolist()))  # the groups by their first base file
    ids = sorted(inserted)
    group = np.searchsorted(np.array(ids, dtype=np.bytes_), file_ids)  # index in `ids`
    distinct = sorted(set(instants.tolist()))
    instant = np.searchsorted(np.array(distinct, dtype=np.bytes_), instants)  # ranks instants as strings
    newest_first = len(distinct) - 1 - instant
    slices = group * len(distinct) + newest_first  # one number per slice
    order = np.argsort(slices)  # by group, newest slice first
    ordered = slices[order]
    if (ordered[1:] == ordered[:-1]).any():
        return None  # two base files of one slice: build_file_groups keeps the last, the other stays
    candidate = np.array([is_committed(i) and (ectr is None or i < ectr)
                          for i in (b.decode() for b in distinct)], dtype=bool)
    chosen = order[candidate[instant[order]]]
    of_group = group[chosen]
    place = np.arange(len(chosen))
    group_start = np.maximum.accumulate(np.where(of_group != np.roll(of_group, 1), place, 0))
    doomed = chosen[place - group_start >= max(keep, 0)]  # `keep` newer candidates of its group stand
    if not len(doomed):
        return [], False
    in_view = _view_positions(partition, inserted)
    position = {file_id: n for n, file_id in enumerate(inserted)}
    view_rank = in_view[[position[file_id] for file_id in ids]]
    doomed = doomed[np.argsort(view_rank[group[doomed]] * len(distinct) + newest_first[doomed])]
    return list(map(names.__getitem__, rows[doomed].tolist())), False


def _view_positions(partition: str, file_ids: list[bytes]) -> np.ndarray:
    """The position of each of `file_ids` (in insertion order) as the view's `HashSet` of (partition,
    file id) pairs iterates them: by bucket of `partition.hashCode() ^ fileId.hashCode()`, then in
    insertion order (as `planner._in_view_order`)."""
    view = JavaHashMap(max(len(file_ids) * 4 // 3 + 1, 16))
    view.put_each(file_ids)  # the capacity a put of each leaves
    hashes = java_string_hash_array(file_ids) ^ np.uint32(java_string_hash(partition) & 0xFFFFFFFF)
    buckets = (hashes ^ (hashes >> 16)) & (view.capacity - 1)
    positions = np.empty(len(file_ids), dtype=np.intp)
    positions[np.argsort(buckets, kind="stable")] = np.arange(len(file_ids))
    return positions
