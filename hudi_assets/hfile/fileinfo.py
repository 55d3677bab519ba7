"""The file-info block: `PBUF`, then a delimited `FileInfoProto` of `BytesBytesPair` entries.

HBase's `HFileInfo` keeps the map in a `TreeMap` ordered by unsigned bytes, so the entries are
written sorted by key.
"""

from __future__ import annotations

from collections.abc import Mapping

from hudi_assets.hfile import protobuf
from hudi_assets.hfile.format import PB_MAGIC


def encode_file_info(info: Mapping[bytes, bytes]) -> bytes:
    """`HFileInfo.write`: the body of the FILE_INFO block."""
    entries = b"".join(
        protobuf.bytes_field(1, protobuf.bytes_field(1, key) + protobuf.bytes_field(2, info[key]))
        for key in sorted(info)
    )
    return PB_MAGIC + protobuf.delimited(entries)


def decode_file_info(body: bytes) -> dict[bytes, bytes]:
    """The file-info map from a FILE_INFO block body; ValueError when it is not protobuf file info."""
    if not body.startswith(PB_MAGIC):
        raise ValueError("file info does not start with the PBUF magic (pre-protobuf HFile?)")
    message, _ = protobuf.read_delimited(body, len(PB_MAGIC))
    info: dict[bytes, bytes] = {}
    for number, entry in protobuf.fields(message):
        if number != 1 or not isinstance(entry, bytes):
            continue
        pair = {n: v for n, v in protobuf.fields(entry) if isinstance(v, bytes)}
        if 1 not in pair or 2 not in pair:
            raise ValueError("a file-info entry lacks its key or value")
        info[pair[1]] = pair[2]
    return info
