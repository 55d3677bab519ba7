"""Merging small archive files and recovering a half-done merge (HoodieTimelineArchiver.mergeArchiveFiles,
verifyLastMergeArchiveFilesIfNecessary).

Only on storage that cannot append (local, object stores), and only with hoodie.archive.merge.enable.
The plan file `mergeArchivePlan` is written first, so a crash at any later step is recovered at the
start of the next run: all candidates still there -> drop the partial merged file; some gone and the
merged file there -> finish deleting the candidates; then drop the plan.

A candidate that cannot be read whole (a corrupt block, or any block but Avro data) stops the merge,
as Hudi's cast of every block to HoodieAvroDataBlock does: no byte is dropped, the sources stay and
the plan goes at once (what Hudi's recovery would do on the next run), and ArchiveMergeError says so.
"""

from __future__ import annotations

import logging

from hudi_assets.avro import deserialize_metadata, java_schema_json, serialize_metadata
from hudi_assets.exceptions import ArchiveMergeError, CorruptFileError, HudiAssetsError
from hudi_assets.listener import QUIET, Listener, Step
from hudi_assets.logformat.archived import archive_file_name, archive_file_version
from hudi_assets.logformat.avro_block import decode_avro_data_block, encode_avro_data_block
from hudi_assets.logformat.block import BlockType, encode_block
from hudi_assets.logformat.reader import read_blocks
from hudi_assets.storage import FileStatus, Storage
from hudi_assets.timeline.archived import ARCHIVED_META_ENTRY, MERGE_PLAN_FILE, ArchivedTimeline

log = logging.getLogger(__name__)
APPEND_SCHEMES = frozenset({"hdfs", "afs", "maprfs", "igfs", "viewfs", "ofs", "jfs", "cfs", "dfs"})


def can_append(storage: Storage) -> bool:
    """Hudi's StorageSchemes.isAppendSupported for the table's scheme."""
    return storage.scheme in APPEND_SCHEMES


def _sorted_archive_files(archived: ArchivedTimeline) -> list[FileStatus]:
    """Archive files by version, newest first (ArchiveFileVersionComparator)."""
    return sorted(archived.archive_files(), key=lambda s: archive_file_version(s.name), reverse=True)


def next_archive_version(archived: ArchivedTimeline) -> int:
    """Version of the next new archive file: one past the latest (the writer's roll-over), or 1."""
    versions = [archive_file_version(s.name) for s in archived.archive_files()]
    return max(versions) + 1 if versions else 1


def recover_pending_merge(archived: ArchivedTimeline) -> str | None:
    """verifyLastMergeArchiveFilesIfNecessary: finish or undo a merge a crash interrupted."""
    storage, folder = archived.storage, archived.folder
    plan_path = f"{folder}/{MERGE_PLAN_FILE}"
    if not storage.exists(plan_path):
        return None
    try:
        plan = deserialize_metadata(storage.read(plan_path), "HoodieMergeArchiveFilePlan",
                                    storage.uri(plan_path))
    except CorruptFileError as exc:
        log.warning("Deleting unreadable merge plan %s: %s", exc.path, exc.problem)
        storage.delete_checked([plan_path])
        return "deleted an unreadable merge plan"
    merged = f"{folder}/{plan.get('mergedArchiveFileName')}"
    candidates = [storage.relativize(c) for c in plan.get("candidate") or []]
    if all(storage.exists(c) for c in candidates):
        outcome = "merge had not finished: removed the partial merged file"
        if storage.exists(merged):
            storage.delete_checked([merged])
    else:
        outcome = "merged file complete: removed the remaining candidates"
        if storage.exists(merged):
            result = storage.delete_many(candidates)
            for path, why in result.failed.items():
                log.warning("Ignoring failed delete of merged candidate %s: %s", path, why)
    storage.delete_checked([plan_path])
    log.info("Recovered the merge of small archive files: %s", outcome)
    return outcome


def _merged_blocks(storage: Storage, candidates: list[FileStatus], archival_batch: int
                   ) -> tuple[list[bytes], int]:
    """Every entry of the candidates (newest first, as Hudi reads them) re-encoded in blocks of at
    most `archival_batch`, and the number of entries; ArchiveMergeError if one cannot be read."""
    schema = java_schema_json(ARCHIVED_META_ENTRY)
    blocks: list[bytes] = []
    pending: list[dict] = []
    total = 0
    for status in candidates:
        name = storage.uri(status.path)
        try:
            for block in read_blocks(storage.read(status.path), name):
                if block.block_type != BlockType.AVRO_DATA:
                    kind = "corrupt" if block.block_type == BlockType.CORRUPT else block.block_type.name
                    raise ArchiveMergeError(f"merging stopped: {name} holds a {kind} block at offset "
                                            f"{block.offset}; sources kept")
                pending.extend(decode_avro_data_block(block, schema, path=name))
                if len(pending) >= archival_batch:
                    blocks.append(encode_block(encode_avro_data_block(pending, schema)))
                    total += len(pending)
                    pending = []
        except CorruptFileError as exc:
            raise ArchiveMergeError(f"merging stopped: {exc}; sources kept") from exc
    if pending:
        blocks.append(encode_block(encode_avro_data_block(pending, schema)))
        total += len(pending)
    return blocks, total


def merge_small_archive_files(archived: ArchivedTimeline, small_file_limit: int, files_batch_size: int,
                              archival_batch: int, listener: Listener = QUIET) -> str | None:
    """mergeArchiveFilesIfNecessary; returns the merged file's name, None when nothing was merged."""
    storage, folder = archived.storage, archived.folder
    files = _sorted_archive_files(archived)
    candidates: list[FileStatus] = []
    for status in files:
        if status.size > small_file_limit:
            break
        candidates.append(status)
    if len(candidates) < files_batch_size:
        return None
    merged_name = archive_file_name(next_archive_version(archived))
    merged = f"{folder}/{merged_name}"
    plan = {"version": 1, "candidate": [storage.uri(c.path) for c in candidates],
            "mergedArchiveFileName": merged_name}
    plan_path = f"{folder}/{MERGE_PLAN_FILE}"
    if not storage.create_if_absent(plan_path, serialize_metadata("HoodieMergeArchiveFilePlan", plan)):
        raise HudiAssetsError(f"{storage.uri(plan_path)}: a merge plan appeared while merging; "
                              "another archiver is running")
    listener.reached(Step.MERGE_PLAN_WRITTEN)
    log.info("Merging %d small archive files into %s", len(candidates), merged_name)
    try:
        blocks, total = _merged_blocks(storage, candidates, archival_batch)
    except ArchiveMergeError:
        storage.delete_checked([plan_path])  # nothing merged was written; every candidate is still there
        raise
    if not storage.create_if_absent(merged, b"".join(blocks)):
        raise HudiAssetsError(f"{storage.uri(merged)}: already exists; another archiver is running")
    listener.reached(Step.MERGE_FILE_WRITTEN)
    result = storage.delete_many([c.path for c in candidates])
    for path, why in result.failed.items():
        log.warning("Ignoring failed delete of merged archive file %s: %s", path, why)
    listener.reached(Step.MERGE_CANDIDATES_DELETED)
    storage.delete_checked([plan_path])
    log.info("Merged %d archived entries of %d small archive files into %s", total, len(candidates),
             merged_name)
    return merged_name
