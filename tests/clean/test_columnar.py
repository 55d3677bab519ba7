"""The columnar decision of a partition of base files decides what the object-by-object path decides."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_assets.clean.columnar import decide_base_files
from hudi_assets.clean.config import CleaningPolicy
from hudi_assets.clean.planner import PartitionTask, PlanContext, _decide_partition
from hudi_assets.fsview import BaseInstantSlicing, FileGroup, build_file_groups

PARTITION = "2024/01/02"
INSTANTS = [f"202401010000000{n:02d}" for n in range(12)]


@dataclass(frozen=True)
class ObjectSlicing:
    """BaseInstantSlicing's grouping under another type, which the columnar path does not take."""

    base_extension: str

    def file_groups(self, partition: str, names: list[str]) -> dict[str, FileGroup]:
        return build_file_groups(partition, names, self.base_extension)


def _context(slicing, policy: str, ectr: str, keep: int, committed: frozenset[str]) -> PlanContext:
    ordered = sorted(committed)
    return PlanContext(storage=None, slicing=slicing, policy=policy, ectr=ectr, gate=True,
                       file_versions_retained=keep, view_timestamps=committed,
                       view_first=ordered[0] if ordered else None, view_last=ordered[-1] if ordered else None)


file_ids = st.sampled_from(["f1", "f2", "f3", "a-0", "ab-0", "a", "b.c", "3f-1", "f1x"])
tokens = st.sampled_from(["1-0-1", "0-12-345", "", "2_3"])
instants = st.sampled_from([*INSTANTS, *INSTANTS, "2024", "x_y", ""])
extensions = st.sampled_from([".parquet", ".parquet", ".parquet", ".orc", ".parquet.tmp"])
# One name per slice, as Hudi writes them; now and then a second base file of a slice.
slices = st.dictionaries(st.tuples(file_ids, instants), st.tuples(tokens, extensions), max_size=40).map(
    lambda found: [f"{f}_{t}_{i}{e}" for (f, i), (t, e) in found.items()])
other_names = st.lists(st.sampled_from([
    ".hoodie_partition_metadata", f".f1_1-0-1_{INSTANTS[0]}.parquet.crc", "f1.parquet", "f1_1-0-1.parquet",
    f"_1-0-1_{INSTANTS[1]}.parquet", "README", f"f2_9-9-9_{INSTANTS[3]}.parquet"]), max_size=3)
listings = st.tuples(slices, other_names).flatmap(
    lambda found: st.permutations(list(dict.fromkeys(found[0] + found[1]))))


@settings(max_examples=300, deadline=None)
@given(names=listings, committed=st.sets(st.sampled_from(INSTANTS), min_size=1),
       ectr=st.sampled_from(INSTANTS), keep=st.integers(0, 3),
       policy=st.sampled_from([CleaningPolicy.KEEP_LATEST_COMMITS, CleaningPolicy.KEEP_LATEST_FILE_VERSIONS]))
def test_columnar_and_object_paths_decide_alike(names, committed, ectr, keep, policy):
    context = _context(ObjectSlicing(".parquet"), policy, ectr, keep, frozenset(committed))
    general = _decide_partition(context, PartitionTask(PARTITION, {}, {}, frozenset()), names)
    by_commits = policy == CleaningPolicy.KEEP_LATEST_COMMITS
    decided = decide_base_files(PARTITION, names, ".parquet", ectr=ectr if by_commits else None,
                                keep=1 if by_commits else keep, is_committed=context.is_committed)
    if decided is not None:
        assert decided == (general.files, general.delete_partition)


def test_hudis_names_take_the_columnar_path_in_the_order_of_hudis_file_group_set():
    ids = ["f1", "f2", "f3", "f4", "f5"]
    names = [f"{f}_1-0-1_{i}.parquet" for i in INSTANTS[:3] for f in ids] + [".hoodie_partition_metadata"]
    decided = decide_base_files("2024/01/01", names, ".parquet", ectr=INSTANTS[2], keep=1,
                                is_committed=lambda instant: True)
    # new HashSet<>(Pair("2024/01/01", fileId)...) on Java 17 iterates f1, f4, f5, f2, f3 (as in
    # test_clean_planner).
    assert decided == ([f"{f}_1-0-1_{INSTANTS[0]}.parquet" for f in ["f1", "f4", "f5", "f2", "f3"]], False)


def test_the_planner_decides_a_large_partition_by_columns_as_by_objects():
    ids = [f"{n:08x}-0" for n in range(500)]  # 500 groups in 1024 buckets: many share one
    names = [f"{f}_1-0-1_{i}.parquet" for i in INSTANTS[:3] for f in ids]
    task = PartitionTask(PARTITION, {}, {}, frozenset())
    general, planned = (
        _decide_partition(_context(slicing, CleaningPolicy.KEEP_LATEST_COMMITS, INSTANTS[2], 1,
                                   frozenset(INSTANTS)), task, names)
        for slicing in (ObjectSlicing(".parquet"), BaseInstantSlicing(".parquet")))
    assert decide_base_files(PARTITION, names, ".parquet", ectr=INSTANTS[2], keep=1,
                             is_committed=lambda i: True) == (planned.files, False)
    assert planned == general and len(planned.files) == 500


def test_partitions_it_cannot_read_as_the_object_path_does_are_left_to_it():
    def decide(*names: str):
        return decide_base_files("p", list(names), ".parquet", ectr=INSTANTS[5], keep=1,
                                 is_committed=lambda instant: True)

    one = f"f1_1-0-1_{INSTANTS[0]}.parquet"
    assert decide(one, f".f1_{INSTANTS[0]}.log.1_1-0-1") is None  # a log file joins the slice
    assert decide(one, f"f1_1-0-2_{INSTANTS[0]}.parquet") is None  # two base files of one slice
    assert decide(one, f"f1_1-0-1_{INSTANTS[1]}.parquet", "é") is None  # not ASCII
    assert decide(one, ".hoodie_partition_metadata", f".{one}.crc") == ([], False)
    assert decide(".hoodie_partition_metadata") == ([], True)
