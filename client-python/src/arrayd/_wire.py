"""Hand-made protobuf encoding for the two hot paths of the session stream: a batch is assembled from commands
serialized once (instead of copying every command into a CommandBatch message and serializing that again),
and an upload's bytes go from the caller's array into the message with one copy."""
from __future__ import annotations

from .v1 import execution_pb2

_VARINT = 0
_LEN = 2


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


_BATCH = key(2, _LEN)            # ExecuteRequest.batch
_BATCH_ID = key(1, _VARINT)      # CommandBatch.batch_id
_COMMAND = key(2, _LEN)          # CommandBatch.commands
_UPLOAD = key(13, _LEN)          # Command.upload
_UPLOAD_BUFFER = key(1, _VARINT)
_UPLOAD_OFFSET = key(2, _VARINT)
_UPLOAD_DATA = key(3, _LEN)


def batch_request(batch_id: int, commands: list[bytes]) -> bytes:
    """The bytes of ``ExecuteRequest{batch: CommandBatch{batch_id, commands}}`` from serialized commands."""
    parts = [_BATCH_ID, varint(batch_id)]
    for c in commands:
        parts += (_COMMAND, varint(len(c)), c)
    body_len = sum(len(p) for p in parts)
    return b"".join([_BATCH, varint(body_len), *parts])


def upload_command(head: execution_pb2.Command, buffer: int, offset: int, data: memoryview) -> bytes:
    """The bytes of ``head`` (event, waits, stream, ...) with ``upload{buffer, offset_bytes, data}`` added."""
    upload_head = b"".join([_UPLOAD_BUFFER, varint(buffer), _UPLOAD_OFFSET, varint(offset), _UPLOAD_DATA,
                            varint(len(data))])
    return b"".join([head.SerializeToString(), _UPLOAD, varint(len(upload_head) + len(data)), upload_head, data])


def identity(b: bytes) -> bytes:
    return b
