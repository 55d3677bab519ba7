"""The little of the protobuf wire format HFile needs: varints, length-delimited fields, delimited messages.

HBase writes its trailer (`FileTrailerProto`) and file info (`FileInfoProto` of `BytesBytesPair`)
with `writeDelimitedTo`: a varint length, then the message.
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
FIXED32 = 5

_U64 = (1 << 64) - 1


def encode_varint(value: int) -> bytes:
    """Base-128 varint; negative values as their 64-bit two's complement, as protobuf's int64/uint64."""
    value &= _U64
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """(value, position after it); ValueError when the varint is truncated or longer than 10 bytes."""
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated or overlong protobuf varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value & _U64, pos
        shift += 7


def fields(message: bytes | memoryview) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) pairs: ints for varints and fixed-size fields, bytes for delimited ones."""
    pos = 0
    while pos < len(message):
        key, pos = decode_varint(message, pos)
        number, wire_type = key >> 3, key & 7
        if wire_type == VARINT:
            value, pos = decode_varint(message, pos)
            yield number, value
        elif wire_type == LENGTH_DELIMITED:
            size, pos = decode_varint(message, pos)
            if pos + size > len(message):
                raise ValueError(f"protobuf field {number} runs past the end of the message")
            yield number, bytes(message[pos : pos + size])
            pos += size
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            if pos + size > len(message):
                raise ValueError(f"protobuf field {number} runs past the end of the message")
            yield number, int.from_bytes(message[pos : pos + size], "little")
            pos += size
        else:
            raise ValueError(f"protobuf field {number} has unsupported wire type {wire_type}")


def varint_field(number: int, value: int) -> bytes:
    return encode_varint(number << 3 | VARINT) + encode_varint(value)


def bytes_field(number: int, value: bytes) -> bytes:
    return encode_varint(number << 3 | LENGTH_DELIMITED) + encode_varint(len(value)) + value


def delimited(message: bytes) -> bytes:
    """`MessageLite.writeDelimitedTo`: the varint size, then the message."""
    return encode_varint(len(message)) + message


def read_delimited(data: bytes | memoryview, pos: int) -> tuple[bytes, int]:
    """The message written by `writeDelimitedTo` at `pos`, and the position after it."""
    size, pos = decode_varint(data, pos)
    if pos + size > len(data):
        raise ValueError("delimited protobuf message runs past its block")
    return bytes(data[pos : pos + size]), pos + size
