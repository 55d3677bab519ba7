"""Archived timeline files (layout version 1): `<archive folder>/.commits_.archive.<N>_<writeToken>`.

Each is a log file of AVRO_DATA blocks whose header holds only SCHEMA (the `HoodieArchivedMetaEntry`
schema) and whose records are archived instants (Hudi's HoodieArchivedTimeline). Storage-independent:
callers hand in (name, bytes) pairs and write the bytes returned.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.logformat.avro_block import avro_data_block, decode_avro_data_block, encode_avro_record
from hudi_assets.logformat.block import BlockType, encode_block
from hudi_assets.logformat.names import ARCHIVE_EXTENSION, DEFAULT_WRITE_TOKEN, LogFileName
from hudi_assets.logformat.reader import read_blocks

log = logging.getLogger(__name__)

ARCHIVE_FILE_PREFIX = ".commits_.archive"
ARCHIVE_FILE_ID = "commits"
DEFAULT_BATCH_SIZE = 10  # hoodie.commits.archival.batch
# Hudi's `ArchiveFileVersionComparator` pattern, applied with `Matcher.matches()`.
_ARCHIVE_VERSION = re.compile(r"\.commits_\.archive\.([0-9]+).*")
_JAVA_INT_MAX = 2**31 - 1

ArchiveSource = bytes | Callable[[], bytes]


def archive_file_name(version: int, write_token: str = DEFAULT_WRITE_TOKEN) -> str:
    """`.commits_.archive.<version>_<write_token>`."""
    return LogFileName(ARCHIVE_FILE_ID, "", ARCHIVE_EXTENSION, version, write_token).format()


def archive_file_version(name: str) -> int:
    """N of an archive file name; 0 when it has none or it overflows a Java int, as Hudi sorts them."""
    match = _ARCHIVE_VERSION.fullmatch(name)
    version = int(match[1]) if match else 0
    return version if version <= _JAVA_INT_MAX else 0


def read_archived_records(
    files: Iterable[tuple[str, ArchiveSource]], reader_schema: str, *, unreadable_ok: Collection[str] = ()
) -> Iterator[dict[str, Any]]:
    """Yield the records of every archive file in `files`, highest N first, blocks in file order.

    `files` pairs a file name or path with its bytes or a callable returning them (called only when the
    file is reached, so a caller may stop early). Names not starting with `.commits_.archive` are
    ignored, as Hudi globs `.commits_.archive*`. Records are resolved against `reader_schema` (schema
    JSON). Corrupt blocks - a torn append - are skipped with a warning. A file that cannot be read at all
    raises `CorruptFileError` unless its bare name is in `unreadable_ok`: Hudi tolerates that only for
    the merged file of a pending merge plan.
    """
    archives = [(name, source) for name, source in files if _bare_name(name).startswith(ARCHIVE_FILE_PREFIX)]
    archives.sort(key=lambda item: (-archive_file_version(_bare_name(item[0])), item[0]))
    for name, source in archives:
        try:
            yield from _file_records(source() if callable(source) else source, name, reader_schema)
        except CorruptFileError as exc:
            if _bare_name(name) not in unreadable_ok:
                raise
            log.warning("Skipping the rest of unreadable archive file %s: %s", name, exc.problem)


def encode_archive_file(
    records: Iterable[Mapping[str, Any]], schema_text: str, batch_size: int = DEFAULT_BATCH_SIZE
) -> bytes:
    """An archive file: AVRO_DATA blocks of at most `batch_size` records, header {SCHEMA: schema_text}.

    Returns no bytes for no records; do not write such a file.
    """
    return archive_file_of_encoded([encode_avro_record(r, schema_text) for r in records], schema_text,
                                   batch_size)


def archive_file_of_encoded(encoded: Sequence[bytes], schema_text: str,
                            batch_size: int = DEFAULT_BATCH_SIZE) -> bytes:
    """`encode_archive_file` of records already encoded with `schema_text` (`encode_avro_record`),
    so that records can be encoded where they are made."""
    if batch_size < 1:
        raise ValueError(f"archive batch size must be positive, not {batch_size}")
    return b"".join(encode_block(avro_data_block(encoded[start:start + batch_size], schema_text))
                    for start in range(0, len(encoded), batch_size))


def _file_records(data: bytes, name: str, reader_schema: str) -> Iterator[dict[str, Any]]:
    for block in read_blocks(data, name):
        if block.block_type == BlockType.CORRUPT:
            log.warning(
                "Skipping corrupt log block in %s at offset %s (%s bytes)", name, block.offset, block.size
            )
        elif block.block_type == BlockType.AVRO_DATA:
            yield from decode_avro_data_block(block, reader_schema, path=name)


def _bare_name(name: str) -> str:
    return name.rsplit("/", 1)[-1]
