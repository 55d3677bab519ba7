"""Point lookups in the metadata table's `files` partition: the records of some keys only, as
`HoodieBackedTableMetadata.getRecordsByKeys` reads them.

A clean that plans from the metadata table asks for the records of the partitions it plans, a batch
at a time (Hudi's `loadPartitions` before each batch of `cleaner.parallelism` partitions). Each file
slice is opened once: the base HFile and the HFILE_DATA blocks of its valid log blocks are read whole
(one request per file on an object store) and then searched by key through their block indexes, so
a lookup decodes the records of the keys asked for, not of the whole partition list.
"""

from __future__ import annotations

import functools
import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from fastavro.types import Schema

from hudi_assets.avro.decoder import Decoder, Undecodable, compile_decoder
from hudi_assets.exceptions import CorruptFileError
from hudi_assets.hfile import HFileReader
from hudi_assets.logformat import BlockType, HeaderKey
from hudi_assets.logformat.delete_block import decode_delete_block
from hudi_assets.logformat.hfile_block import avro_schema, decode_hfile_value
from hudi_assets.metadata.file_group import (
    BlockFilter,
    MetadataFileSlice,
    merge_log_record,
    merge_onto_base,
    open_base_file,
    valid_log_blocks,
)
from hudi_assets.metadata.records import FileInfo, FilesRecord
from hudi_assets.storage import Storage

_DELETED = object()  # a key's log state after a delete block, until a later data block adds it back
_FILE_INFO = "org.apache.hudi.avro.model.HoodieMetadataFileInfo"


@functools.lru_cache(maxsize=8)
def _files_decoder(schema_text: str) -> Decoder | None:
    """A decoder generated for a writer schema of `HoodieMetadataRecord` that makes each file's
    `HoodieMetadataFileInfo` a `FileInfo` directly: fastavro's dict per file, turned into a
    `FileInfo` after, cost two thirds of a lookup. None where the schema does not compile so (its
    file info has other fields): fastavro reads it."""
    try:
        return compile_decoder(json.loads(schema_text), {_FILE_INFO: FileInfo})
    except (ValueError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class _KeyedFile:
    """An HFile searched by key: a base file or the content of one HFILE_DATA log block."""

    reader: HFileReader
    schema: Schema
    where: str
    decode: Decoder | None = None

    @classmethod
    def of(cls, reader: HFileReader, schema_text: str, path: str, where: str) -> _KeyedFile:
        return cls(reader, avro_schema(schema_text, path, where), where, _files_decoder(schema_text))

    def record(self, key: str) -> FilesRecord | None:
        value = self.reader.get(key.encode("utf-8"))
        if value is None:
            return None
        if self.decode is not None:
            try:
                avro, end = self.decode(value, 0)
                if end == len(value):
                    return FilesRecord.of_decoded(key, avro, self.reader.name)
            except (Undecodable, IndexError, ValueError, struct.error):
                pass  # fastavro decides, and names what does not decode
        avro = decode_hfile_value(value, self.schema, key, self.reader.name, self.where)
        return FilesRecord.from_avro(key, avro, self.reader.name)


@dataclass
class _OpenSlice:
    """One file slice, opened: its base file and its valid log blocks in log order (a data block,
    or the keys a delete block removes)."""

    base: _KeyedFile | None
    logs: list[_KeyedFile | frozenset[str]] = field(default_factory=list)

    def record(self, key: str) -> FilesRecord | None:
        """The merged record of `key`; None when the slice does not hold it or its logs delete it."""
        state: FilesRecord | object | None = None
        for log in self.logs:
            if isinstance(log, frozenset):
                if key in log:
                    state = _DELETED
            elif (record := log.record(key)) is not None:
                state = merge_log_record(None if state is _DELETED else state, record)
        base = self.base.record(key) if self.base is not None else None
        if state is None:
            return base
        return merge_onto_base(base, None if state is _DELETED else state)


class FilesPartitionLookup:
    """Keyed reads of the `files` partition's latest merged file slices."""

    def __init__(self, storage: Storage, file_slices: list[MetadataFileSlice], blocks: BlockFilter):
        self.storage = storage
        self.file_slices = file_slices
        self.blocks = blocks

    @cached_property
    def _slices(self) -> list[_OpenSlice]:
        return [self._open(file_slice) for file_slice in self.file_slices]

    def _open(self, file_slice: MetadataFileSlice) -> _OpenSlice:
        base = None
        if file_slice.base_file is not None:
            reader, schema_text = open_base_file(self.storage, file_slice.path(file_slice.base_file))
            base = _KeyedFile.of(reader, schema_text, reader.name, "base file")
        opened = _OpenSlice(base)
        for path, block in valid_log_blocks(self.storage, file_slice, self.blocks):
            where = f"{block.block_type.name} block at offset {block.offset}"
            if block.block_type is BlockType.DELETE:
                deleted = decode_delete_block(block, path=path)
                opened.logs.append(frozenset(k for k in deleted if k is not None))
            elif block.block_type is BlockType.HFILE_DATA:
                schema_text = block.header.get(HeaderKey.SCHEMA)
                if schema_text is None:
                    raise CorruptFileError(path, f"{where} has no SCHEMA header")
                opened.logs.append(_KeyedFile.of(HFileReader(block.content, name=f"{path} ({where})"),
                                                 schema_text, path, where))
            else:
                raise CorruptFileError(path, f"{where}: the metadata table writes only HFILE_DATA and "
                                             "DELETE blocks")
        return opened

    def records(self, keys: Iterable[str]) -> dict[str, FilesRecord]:
        """The merged records of `keys` that exist (deleted and absent keys left out), looked up in
        key order so that each HFile's data blocks are visited once, in file order."""
        found: dict[str, FilesRecord] = {}
        for key in sorted(set(keys)):
            for opened in self._slices:
                if (record := opened.record(key)) is not None:
                    found[key] = record
        return found
