"""Walk an HFile's blocks by their headers alone, independently of its index."""

from __future__ import annotations

from collections.abc import Iterator

from hudi_assets.hfile.block import BlockHeader, read_header
from hudi_assets.hfile.format import TRAILER_SIZE


def block_headers(data: bytes) -> Iterator[BlockHeader]:
    """Every block header from offset 0, stepping by on-disk sizes; they must end at the trailer."""
    offset = 0
    while offset < len(data) - TRAILER_SIZE:
        header = read_header(data, offset)
        yield header
        offset += header.on_disk_size_with_header
    assert offset == len(data) - TRAILER_SIZE


def block_kinds(data: bytes) -> list[str]:
    """The block types in file order, runs of one type collapsed: e.g. DATA, META, ROOT_INDEX, ..."""
    kinds: list[str] = []
    for header in block_headers(data):
        if not kinds or kinds[-1] != header.block_type.name:
            kinds.append(header.block_type.name)
    return kinds
