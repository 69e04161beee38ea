"""Hand-made protobuf encoding for the hot paths of the session stream: a batch is assembled from commands
serialized once (instead of copying every command into a CommandBatch message and serializing that again), an
upload's bytes go from the caller's array into the message with one copy, and a launch is encoded straight to
bytes from parts its kernel, buffers and devices keep encoded (no message objects built per launch); and a large
response's completions are decoded with their data sliced out of the received bytes (:func:`completions`), so a
download's bytes are copied once, into their destination. ``tests/test_wire.py`` checks every encoder and the
decoder against the generated message classes."""
from __future__ import annotations

_VARINT = 0
_LEN = 2


_SMALL = [bytes((i,)) for i in range(128)]


def varint(n: int) -> bytes:
    """``n`` (0 to 2^64 - 1) as a protobuf varint."""
    if n < 0x80:
        return _SMALL[n]
    if n < 0x4000:  # (event ids, lengths: most varints past the first byte are two or three bytes)
        return bytes((n & 0x7F | 0x80, n >> 7))
    if n < 0x200000:
        return bytes((n & 0x7F | 0x80, n >> 7 & 0x7F | 0x80, n >> 14))
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
    """The bytes of ``ExecuteRequest{batch: CommandBatch{batch_id, commands}}`` from commands already framed as
    ``CommandBatch.commands`` fields (:func:`framed_with_event`)."""
    head = _BATCH_ID + varint(batch_id)
    return b"".join([_BATCH, varint(len(head) + sum(map(len, commands))), head, *commands])


def upload_parts(head: bytes, buffer: int, offset: int, data: memoryview) -> tuple[list, int]:
    """The pieces of a serialized ``Command`` (``head``: its other fields, event included) with
    ``upload{buffer, offset_bytes, data}`` added, and their length; ``data`` is not copied here."""
    upload_head = b"".join([_UPLOAD_BUFFER, varint(buffer), _UPLOAD_OFFSET, varint(offset), _UPLOAD_DATA,
                            varint(len(data))])
    size = len(upload_head) + len(data)
    key_len = _UPLOAD + varint(size)
    return [head, key_len, upload_head, data], len(head) + len(key_len) + size


def batch_from_parts(batch_id: int, commands: list[tuple[list, int]]) -> bytes:
    """``ExecuteRequest{batch: CommandBatch{batch_id, commands}}`` from commands given as pieces (``upload_parts``),
    joined once: an upload's bytes are copied from the caller's array into the message and nowhere else."""
    parts = [_BATCH_ID, varint(batch_id)]
    for pieces, size in commands:
        parts += (_COMMAND, varint(size), *pieces)
    body_len = sum(map(len, parts))
    return b"".join([_BATCH, varint(body_len), *parts])


# Command and Launch fields (arrayd/v1/execution.proto)
_EVENT = key(1, _VARINT)
_WAIT_EVENTS = key(2, _LEN)      # packed
_STREAM = key(3, _VARINT)
_PRIORITY = key(5, _VARINT)
_DEADLINE = key(15, _LEN)
_LAUNCH = key(10, _LEN)
_KERNEL = key(1, _VARINT)        # Launch.kernel
_GLOBAL_DIMS = key(2, _LEN)      # packed
_LOCAL_DIMS = key(3, _LEN)       # packed
_ARG = key(4, _LEN)              # Launch.args
_DEVICE = key(5, _LEN)
_ARG_BUFFER = key(1, _VARINT)    # Arg.buffer
_ARG_SCALAR = key(2, _LEN)
_ARG_MERGE = key(3, _VARINT)
_ARG_RANGE = key(4, _LEN)


def _field(k: bytes, body: bytes) -> bytes:
    return k + varint(len(body)) + body


def _packed(k: bytes, values) -> bytes:
    body = b"".join([varint(v) for v in values])
    return k + varint(len(body)) + body


def kernel_field(kernel: int) -> bytes:
    """``Launch.kernel`` (a kernel keeps it)."""
    return _KERNEL + varint(kernel)


def device_field(device: str) -> bytes:
    """``Launch.device``; empty for the default device."""
    return _field(_DEVICE, device.encode()) if device else b""


def buffer_arg(buffer: int) -> bytes:
    """An ``Arg{buffer}`` as an element of ``Launch.args`` (a buffer keeps it)."""
    return _field(_ARG, _ARG_BUFFER + varint(buffer))


def merge_buffer_arg() -> bytes:
    return _field(_ARG, _ARG_MERGE + b"\x01")


def message_arg(field: int, message: bytes) -> bytes:
    """An ``Arg`` whose ``field`` (2 scalar, 4 range) holds the serialized ``message``."""
    return _field(_ARG, _field(_ARG_SCALAR if field == 2 else _ARG_RANGE, message))


def launch(kernel: bytes, global_dims, local_dims, args: bytes, device: bytes) -> bytes:
    """``Command.launch`` from its fields' encodings (``kernel_field``, ``*_arg`` joined, ``device_field``)."""
    body = b"".join([kernel, _packed(_GLOBAL_DIMS, global_dims), _packed(_LOCAL_DIMS, local_dims) if local_dims else b"",
                     args, device])
    return _LAUNCH + varint(len(body)) + body


def command_head(wait_events, stream: int, priority: int, deadline: bytes | None) -> bytes:
    """A ``Command``'s fields other than its event and its kind (the defaults are left out)."""
    parts = []
    if wait_events:
        parts.append(_packed(_WAIT_EVENTS, wait_events))
    if stream:
        parts.append(_STREAM + varint(stream))
    if priority:
        parts.append(_PRIORITY + varint(priority))
    if deadline is not None:
        parts.append(_field(_DEADLINE, deadline))
    return b"".join(parts)


_CONTINUED = [bytes((i | 0x80,)) for i in range(128)]
#: ``_FRAMEDk[n]``: the start of a framed command of ``n`` bytes (below 0x7B) that gains an event id of ``k`` varint
#: bytes: the field's key, its length (one byte) and the event's key (see :func:`framed_with_event`)
_FRAMED1, _FRAMED2, _FRAMED3, _FRAMED4 = ([_COMMAND + _SMALL[n + 1 + k] + _EVENT for n in range(0x7B)] for k in range(1, 5))


def framed_with_event(event: int, command: bytes) -> bytes:
    """A serialized ``Command`` as a ``CommandBatch.commands`` field (its key and length, then its bytes) with its
    ``event`` set (``command`` has none: fields may come in any
    order): a launch's path, so the usual case (an event id of up to four varint bytes, below 2^28, and a short
    command) is spelled out."""
    if event < 0x10000000 and len(command) < 0x7B:  # (the frame's length then fits one byte)
        if event >= 0x200000:
            return b"".join((_FRAMED4[len(command)], _CONTINUED[event & 0x7F], _CONTINUED[event >> 7 & 0x7F],
                             _CONTINUED[event >> 14 & 0x7F], _SMALL[event >> 21], command))
        if event >= 0x4000:
            return b"".join((_FRAMED3[len(command)], _CONTINUED[event & 0x7F], _CONTINUED[event >> 7 & 0x7F],
                             _SMALL[event >> 14], command))
        if event >= 0x80:
            return b"".join((_FRAMED2[len(command)], _CONTINUED[event & 0x7F], _SMALL[event >> 7], command))
        return b"".join((_FRAMED1[len(command)], _SMALL[event], command))
    command = _EVENT + varint(event) + command
    return _COMMAND + varint(len(command)) + command


def identity(b: bytes) -> bytes:
    return b


# -- decoding: the completions of a large ExecuteResponse (a download's data) without copying the data

#: Responses at least this long are decoded here (their data is sliced, not copied); shorter ones, the completions
#: of launches, by the generated classes, whose C parser is faster for many small fields.
DECODE_MIN_BYTES = 64 << 10

_I64 = 1
_I32 = 5


class Duration:
    """``google.protobuf.Duration``'s two fields, as the generated class names them."""

    __slots__ = ("seconds", "nanos")

    def __init__(self, seconds: int = 0, nanos: int = 0):
        self.seconds = seconds
        self.nanos = nanos


class Completion:
    """An ``EventCompletion`` decoded from a response's bytes, with the generated class's field names; ``data`` is
    a memoryview of those bytes (no copy)."""

    __slots__ = ("event", "state", "code", "message", "data", "device_time", "data_offset", "more_data")

    def __init__(self):
        self.event = 0
        self.state = 0
        self.code = 0
        self.message = ""
        self.data: memoryview | bytes = b""
        self.device_time: Duration | None = None
        self.data_offset = 0
        self.more_data = False

    def HasField(self, name: str) -> bool:  # noqa: N802 (the generated classes' name)
        if name != "device_time":
            raise ValueError(f"{name}: not a message field of EventCompletion")
        return self.device_time is not None


class Completions:
    """A ``Completions`` message decoded from a response's bytes, with the generated class's field names."""

    __slots__ = ("completions", "succeeded", "succeeded_device_nanos")

    def __init__(self):
        self.completions: list[Completion] = []
        self.succeeded: list[int] = []
        self.succeeded_device_nanos: list[int] = []


def _read_varint(b: memoryview, i: int) -> tuple[int, int]:
    n = 0
    shift = 0
    while True:
        byte = b[i]
        i += 1
        n |= (byte & 0x7F) << shift
        if byte < 0x80:
            return n, i
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 10 bytes")


def _skip(b: memoryview, i: int, wire_type: int) -> int:
    if wire_type == _VARINT:
        return _read_varint(b, i)[1]
    if wire_type == _I64:
        return i + 8
    if wire_type == _LEN:
        n, i = _read_varint(b, i)
        return i + n
    if wire_type == _I32:
        return i + 4
    raise ValueError(f"wire type {wire_type}: not one protobuf writes")


def _signed(n: int, bits: int) -> int:
    """A varint read as a two's complement integer of ``bits`` bits (int32 and int64 fields)."""
    n &= (1 << 64) - 1
    if n >= 1 << 63:
        n -= 1 << 64
    return n if bits == 64 else ((n + (1 << 31)) % (1 << 32)) - (1 << 31)


def _duration(b: memoryview, i: int, end: int) -> Duration:
    d = Duration()
    while i < end:
        tag, i = _read_varint(b, i)
        field, wire_type = tag >> 3, tag & 7
        if field in (1, 2) and wire_type == _VARINT:
            n, i = _read_varint(b, i)
            if field == 1:
                d.seconds = _signed(n, 64)
            else:
                d.nanos = _signed(n, 32)
        else:
            i = _skip(b, i, wire_type)
    return d


def _completion(b: memoryview, i: int, end: int) -> Completion:
    c = Completion()
    while i < end:
        tag, i = _read_varint(b, i)
        field, wire_type = tag >> 3, tag & 7
        if wire_type == _VARINT and field in (1, 2, 3, 7, 8):
            n, i = _read_varint(b, i)
            if field == 1:
                c.event = n
            elif field == 2:
                c.state = _signed(n, 32)
            elif field == 3:
                c.code = _signed(n, 32)
            elif field == 7:
                c.data_offset = n
            else:
                c.more_data = n != 0
        elif wire_type == _LEN and field in (4, 5, 9):
            n, i = _read_varint(b, i)
            if i + n > end:
                raise ValueError(f"EventCompletion field {field}: {n} bytes past the end of its message")
            if field == 4:
                c.message = bytes(b[i:i + n]).decode("utf-8")
            elif field == 5:
                c.data = b[i:i + n]
            else:
                c.device_time = _duration(b, i, i + n)
            i += n
        else:
            i = _skip(b, i, wire_type)
    if i != end:
        raise ValueError("an EventCompletion that overruns its length")
    return c


def completions(raw: bytes) -> Completions | None:
    """The ``Completions`` of ``ExecuteResponse{completions}`` in ``raw``, each one's data a view into ``raw``; None
    when ``raw`` holds another of its messages (decode those with the generated class). Raises ValueError for
    bytes that are not a valid message."""
    try:
        return _completions(memoryview(raw))
    except IndexError:
        raise ValueError("an ExecuteResponse cut short") from None


def _delimited(b: memoryview, i: int, end: int, what: str, within: str) -> tuple[int, int]:
    """Where a length-delimited field's bytes start and stop (``i``: at its length); raises ValueError when they
    pass ``end``, the end of the message ``within`` that holds it."""
    size, i = _read_varint(b, i)
    if i + size > end:
        raise ValueError(f"{what} of {size} bytes past the end of {within}")
    return i, i + size


def _varints(b: memoryview, i: int, end: int, wire_type: int, out: list[int]) -> int:
    """A repeated varint field's element, or its packed elements (within ``end``), appended to ``out``; where it
    ends."""
    if wire_type == _VARINT:
        n, i = _read_varint(b, i)
        out.append(n)
        return i
    if wire_type != _LEN:
        raise ValueError(f"wire type {wire_type}: not that of a repeated integer field")
    i, stop = _delimited(b, i, end, "a packed field", "its message")
    while i < stop:
        n, i = _read_varint(b, i)
        out.append(n)
    if i != stop:
        raise ValueError("a packed field that overruns its length")
    return i


def _completions(b: memoryview) -> Completions | None:
    out = Completions()
    i, end = 0, len(b)
    while i < end:
        tag, i = _read_varint(b, i)
        field, wire_type = tag >> 3, tag & 7
        if field != 2 or wire_type != _LEN:
            return None
        i, stop = _delimited(b, i, end, "Completions", "the response")
        while i < stop:
            tag, i = _read_varint(b, i)
            field = tag >> 3
            if field == 1 and tag & 7 == _LEN:
                i, completion_end = _delimited(b, i, stop, "an EventCompletion", "its Completions")
                out.completions.append(_completion(b, i, completion_end))
                i = completion_end
            elif field == 2 or field == 3:
                i = _varints(b, i, stop, tag & 7, out.succeeded if field == 2 else out.succeeded_device_nanos)
            else:
                i = _skip(b, i, tag & 7)
        if i != stop:
            raise ValueError("Completions that overrun their length")
    return out
