"""HFile v3 blocks: the 33-byte header, the (compressed) body and the trailing checksums.

Layout as HBase 2.4's `HFileBlock` writes it: magic, onDiskSizeWithoutHeader (body + checksums),
uncompressedSizeWithoutHeader, prevBlockOffset (the previous block of the same type, -1 if none),
checksum type, bytesPerChecksum, onDiskDataSizeWithHeader (header + body); then the body, then
one checksum per `bytesPerChecksum` bytes of header + body.
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_assets.hfile.checksum import checksum_size, chunked_checksums
from hudi_assets.hfile.compression import compress, decompress
from hudi_assets.hfile.format import (
    BLOCK_HEADER,
    BLOCK_HEADER_SIZE,
    DEFAULT_BYTES_PER_CHECKSUM,
    BlockType,
    ChecksumType,
    Compression,
)

_MAGICS = {t.value: t for t in BlockType}


@dataclass(frozen=True)
class BlockHeader:
    """A parsed block header; `offset` is where the block starts in the file."""

    offset: int
    block_type: BlockType
    on_disk_size_without_header: int
    uncompressed_size_without_header: int
    prev_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int

    @property
    def on_disk_size_with_header(self) -> int:
        """What the block index stores as the block's size, and the distance to the next block."""
        return BLOCK_HEADER_SIZE + self.on_disk_size_without_header


def read_header(data: bytes | memoryview, offset: int) -> BlockHeader:
    """Parse the header at `offset`; ValueError when it is not a sane v3 block header."""
    if offset < 0 or offset + BLOCK_HEADER_SIZE > len(data):
        raise ValueError(f"block header at offset {offset} lies outside the file")
    magic, on_disk, uncompressed, prev, checksum_type, per_checksum, data_with_header = (
        BLOCK_HEADER.unpack_from(data, offset)
    )
    block_type = _MAGICS.get(magic)
    if block_type is None:
        raise ValueError(f"no block magic at offset {offset} (found {magic!r})")
    end = offset + BLOCK_HEADER_SIZE + on_disk
    if on_disk < 0 or uncompressed < 0 or end > len(data):
        raise ValueError(f"{block_type.name} block at offset {offset} runs past the end of the file")
    if not BLOCK_HEADER_SIZE <= data_with_header <= BLOCK_HEADER_SIZE + on_disk:
        raise ValueError(f"{block_type.name} block at offset {offset} has a bad data size {data_with_header}")
    return BlockHeader(offset, block_type, on_disk, uncompressed, prev, checksum_type, per_checksum,
                       data_with_header)


def read_block(data: bytes | memoryview, offset: int, codec: Compression,
               verify_checksums: bool = True) -> tuple[BlockHeader, bytes]:
    """The header and uncompressed body of the block at `offset`; ValueError on any mismatch.

    A block stored uncompressed is checked against its CRC32C checksums (`verify_checksums`). A GZ
    block is not: its body is one gzip member, whose own CRC32 and length `decompress` checks, and
    the header's sizes are checked against each other and the body, so the CRC32C (in pure Python,
    the larger part of reading a block) would catch nothing more of use. Hudi's own HFile reader
    (hudi-io `HFileBlock`, as of 01707741) verifies no block checksum at all."""
    header = read_header(data, offset)
    view = memoryview(data)
    data_end = offset + header.on_disk_data_size_with_header
    if verify_checksums and codec == Compression.NONE:
        _verify_checksums(view, header)
    on_disk = view[offset + BLOCK_HEADER_SIZE : data_end]
    return header, decompress(on_disk, codec, header.uncompressed_size_without_header)


def _verify_checksums(view: memoryview, header: BlockHeader) -> None:
    try:
        checksum_type = ChecksumType(header.checksum_type)
    except ValueError:
        raise ValueError(f"block at offset {header.offset} has unknown checksum type "
                         f"{header.checksum_type}") from None
    if checksum_type == ChecksumType.NULL:
        return
    if header.bytes_per_checksum <= 0:
        raise ValueError(f"block at offset {header.offset} has bytesPerChecksum {header.bytes_per_checksum}")
    data_end = header.offset + header.on_disk_data_size_with_header
    block_end = header.offset + header.on_disk_size_with_header
    stored = view[data_end:block_end]
    if len(stored) != checksum_size(header.on_disk_data_size_with_header, header.bytes_per_checksum):
        raise ValueError(f"block at offset {header.offset} has {len(stored)} checksum bytes, "
                         f"expected one per {header.bytes_per_checksum} bytes")
    actual = chunked_checksums(view[header.offset : data_end], checksum_type, header.bytes_per_checksum)
    if actual != stored:
        raise ValueError(f"{header.block_type.name} block at offset {header.offset} fails its "
                         f"{checksum_type.name} checksum")


class BlockWriter:
    """`HFileBlock.Writer`: frames bodies into blocks with CRC32C checksums (HBase's default), and
    remembers the last offset of each block type for the next block's prevBlockOffset."""

    def __init__(self, codec: Compression, bytes_per_checksum: int = DEFAULT_BYTES_PER_CHECKSUM):
        self.codec = codec
        self.bytes_per_checksum = bytes_per_checksum
        self._prev_offset_by_type: dict[BlockType, int] = {}

    def encode(self, block_type: BlockType, body: bytes, offset: int) -> bytes:
        """The on-disk bytes of a block of `block_type` holding `body`, to be written at `offset`."""
        on_disk = compress(body, self.codec)
        data_with_header = BLOCK_HEADER_SIZE + len(on_disk)
        checksums_size = checksum_size(data_with_header, self.bytes_per_checksum)
        header = BLOCK_HEADER.pack(
            block_type.value, len(on_disk) + checksums_size, len(body),
            self._prev_offset_by_type.get(block_type, -1), ChecksumType.CRC32C, self.bytes_per_checksum,
            data_with_header,
        )
        self._prev_offset_by_type[block_type] = offset
        framed = header + on_disk
        return framed + chunked_checksums(framed, ChecksumType.CRC32C, self.bytes_per_checksum)
