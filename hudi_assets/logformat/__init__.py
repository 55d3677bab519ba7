"""Hudi log file format (log format version 1): blocks, AVRO_DATA content, file names, archived timeline."""

from hudi_assets.logformat.archived import (
    archive_file_name,
    archive_file_version,
    encode_archive_file,
    read_archived_records,
)
from hudi_assets.logformat.avro_block import decode_avro_data_block, encode_avro_data_block
from hudi_assets.logformat.block import (
    MAGIC,
    BlockType,
    HeaderKey,
    LogBlock,
    encode_block,
    encode_metadata,
    rollback_command_block,
)
from hudi_assets.logformat.names import LogFileName
from hudi_assets.logformat.reader import read_blocks

__all__ = [
    "MAGIC",
    "BlockType",
    "HeaderKey",
    "LogBlock",
    "LogFileName",
    "archive_file_name",
    "archive_file_version",
    "decode_avro_data_block",
    "encode_archive_file",
    "encode_avro_data_block",
    "encode_block",
    "encode_metadata",
    "read_archived_records",
    "read_blocks",
    "rollback_command_block",
]
