"""The hand-made encoders of the session stream's hot paths give exactly what the generated message classes parse
as the same message (no daemon needed)."""
import random

import numpy as np
import pytest

import arrayd
from arrayd import _wire
from arrayd._buffer import Buffer, BufferRange, Kernel
from arrayd._session import Session, _Encoded
from arrayd.v1 import common_pb2, execution_pb2

EDGES = [0, 1, 127, 128, 255, 300, 16383, 16384, 2 ** 21 - 1, 2 ** 21, 2 ** 28 - 1, 2 ** 28, 2 ** 31 - 1, 2 ** 32, 2 ** 63 - 1, 2 ** 64 - 1]


@pytest.mark.parametrize("n", EDGES)
def test_varint_matches_protobuf(n):
    assert execution_pb2.Command.FromString(_wire.key(1, 0) + _wire.varint(n)).event == n
    if n:
        assert _wire.key(1, 0) + _wire.varint(n) == execution_pb2.Command(event=n).SerializeToString()


@pytest.mark.parametrize("event", EDGES[1:])
def test_framed_commands_and_their_batch_parse_as_the_generated_classes_build_them(event):
    rng = random.Random(event)
    commands, framed = [], []
    for size in (0, 1, 100, 120, 121, 122, 123, 124, 125, 200, 20000):  # (around the short-command case)
        c = execution_pb2.Command(stream=rng.randrange(1, 2 ** 40), launch=execution_pb2.Launch(
            kernel=7, device="x" * max(0, size - 14)))
        body = c.SerializeToString()
        c.event = event
        commands.append(c)
        framed.append(_wire.framed_with_event(event, body))
        assert execution_pb2.CommandBatch.FromString(framed[-1]).commands[0] == c
    batch = execution_pb2.ExecuteRequest.FromString(_wire.batch_request(event, framed)).batch
    assert batch.batch_id == event and list(batch.commands) == commands


class _FakeSession:
    """What Session.launch needs of a session, without a daemon: it keeps the commands it is given."""

    _launch = Session._launch
    _encode_launch = Session._encode_launch

    def __init__(self):
        self._device_fields = {}
        self.sent = []

    def _submit_launch(self, body):
        self.sent.append(_Encoded(body))


def _launch(session, kernel, *args, **options):
    Session.launch(session, kernel, *args, **options)
    c = session.sent.pop()
    assert isinstance(c, _Encoded)
    return execution_pb2.CommandBatch.FromString(_wire.framed_with_event(77, c.body)).commands[0]


def test_a_launch_encodes_as_the_message_classes_would_build_it():
    rng = random.Random(5)
    s = _FakeSession()
    for trial in range(300):
        params = [rng.choice([("buffer", "f32"), ("scalar", "f32"), ("scalar", "f64"), ("scalar", "i32"),
                              ("scalar", "i64"), ("scalar", "u8")]) for _ in range(rng.randrange(0, 6))]
        kernel = Kernel(s, rng.choice(EDGES), "k", params)
        args, want_args = [], []
        for kind, dtype in params:
            if kind == "buffer":
                choice = rng.randrange(3)
                if choice == 0:
                    b = Buffer(s, rng.choice(EDGES), "f32", (4,), "", "device")
                    args.append(b)
                    want_args.append(execution_pb2.Arg(buffer=b.id))
                elif choice == 1:
                    args.append(arrayd.MERGE_BUFFER)
                    want_args.append(execution_pb2.Arg(merge_buffer=True))
                else:
                    b = Buffer(s, rng.choice(EDGES), "f32", (4,), "", "device")
                    r = BufferRange(b, rng.choice(EDGES[:8]), rng.choice(EDGES[1:8]))
                    args.append(r)
                    want_args.append(execution_pb2.Arg(range=execution_pb2.BufferRange(
                        buffer=b.id, offset_bytes=r.offset_bytes, size_bytes=r.size_bytes)))
            else:
                v = {"f32": rng.uniform(-1e6, 1e6), "f64": rng.uniform(-1e300, 1e300), "i32": rng.randrange(-2 ** 31, 2 ** 31),
                     "i64": rng.randrange(-2 ** 63, 2 ** 63), "u8": rng.randrange(256)}[dtype]
                args.append(v)
                scalar = common_pb2.Scalar(**{dtype: v})
                want_args.append(execution_pb2.Arg(scalar=scalar))
        gdims = [rng.choice(EDGES) for _ in range(rng.randrange(1, 4))]
        ldims = [rng.choice(EDGES[:6]) for _ in range(len(gdims))] if rng.random() < 0.3 else None
        device = rng.choice(["", "cpu:0", "opencl:1", "gpu-node-1/cuda:0", "ünïcode/cpu:0"])
        waits = [arrayd.Event(rng.choice(EDGES)) for _ in range(rng.randrange(0, 4))]
        priority = rng.choice([None, "low", "normal", "high"])
        got = _launch(s, kernel, gdims if len(gdims) > 1 or rng.random() < 0.5 else gdims[0], *args,
                      local_size=ldims, device=device, wait_for=waits, priority=priority)
        want = execution_pb2.Command(event=77, wait_events=[w.id for w in waits], launch=execution_pb2.Launch(
            kernel=kernel.id, global_dims=gdims, local_dims=ldims or [], device=device, args=want_args))
        if priority is not None:
            want.priority = {"low": 1, "normal": 2, "high": 3}[priority]
        assert got == want, f"trial {trial}"


def test_a_launch_carries_its_stream_and_deadline():
    s = _FakeSession()
    kernel = Kernel(s, 9, "k", [])

    class _S:
        id = 2 ** 40

    got = _launch(s, kernel, 1, stream=_S(), deadline=5.0)
    assert got.stream == 2 ** 40 and got.deadline.seconds > 0 and got.launch.kernel == 9


def test_bad_launch_arguments_raise_before_anything_is_sent():
    s = _FakeSession()
    kernel = Kernel(s, 9, "k", [("buffer", "f32"), ("scalar", "u8")])
    b = Buffer(s, 3, "f32", (4,), "", "device")
    with pytest.raises(TypeError, match="3 arguments"):
        Session.launch(s, kernel, 1, b, 1, 2)
    with pytest.raises(TypeError, match="argument 0"):
        Session.launch(s, kernel, 1, 5, 1)
    with pytest.raises(ValueError, match="0 to 255"):
        Session.launch(s, kernel, 1, b, 256)
    with pytest.raises(ValueError, match="global_size"):
        Session.launch(s, kernel, -1, b, 1)
    with pytest.raises(ValueError, match="priority"):
        Session.launch(s, kernel, 1, b, 1, priority="urgent")
    with pytest.raises(TypeError, match="integer"):
        Session.launch(s, kernel, np.int64(4), b, 1.5)
    assert s.sent == []


def test_a_repeated_launch_reuses_its_encoding_only_for_the_same_objects():
    s = _FakeSession()
    kernel = Kernel(s, 9, "k", [("buffer", "f32"), ("scalar", "f32"), ("scalar", "i64")])
    a = Buffer(s, 300, "f32", (4,), "", "device")
    b = Buffer(s, 301, "f32", (4,), "", "device")
    half, n = 0.5, 1 << 20
    calls = [(n, a, half, 4, ""), (n, a, half, 4, ""), (n, b, half, 4, ""), (n, b, -0.0, 4, ""), (n, b, 0.0, 4, ""),
             (n, b, 0.0, 4, "cpu:1"), (7, b, 0.0, 4, "cpu:1"), (7, b, 0.0, True, "cpu:1"),
             (7, BufferRange(a, 0, 8), 0.0, 4, "cpu:1"), (7, a, np.float32(2), 4, "cpu:1")]
    for i, (g, buf, x, m, dev) in enumerate(calls):
        got = _launch(s, kernel, g, buf, x, m, device=dev)
        arg0 = (execution_pb2.Arg(buffer=buf.id) if isinstance(buf, Buffer) else execution_pb2.Arg(
            range=execution_pb2.BufferRange(buffer=buf.buffer.id, offset_bytes=buf.offset_bytes,
                                            size_bytes=buf.size_bytes)))
        want = execution_pb2.Command(event=77, launch=execution_pb2.Launch(kernel=9, global_dims=[g], device=dev, args=[
            arg0, execution_pb2.Arg(scalar=common_pb2.Scalar(f32=float(x))),
            execution_pb2.Arg(scalar=common_pb2.Scalar(i64=int(m)))]))
        assert got == want, f"call {i}"
    assert kernel._last is not None and kernel._last[0][0] is a, "the last launch of plain objects is remembered"
    _launch(s, kernel, 7, BufferRange(a, 0, 8), 0.0, 4, device="cpu:1")
    assert kernel._last[0][0] is a, "a BufferRange's launch is not remembered"


def _completion_fields(c) -> tuple:
    return (c.event, c.state, c.code, c.message, bytes(c.data), c.data_offset, c.more_data, c.HasField("device_time"),
            (c.device_time.seconds, c.device_time.nanos) if c.HasField("device_time") else None)


@pytest.mark.parametrize("seed", range(20))
def test_completions_decode_as_the_generated_class_does(seed):
    rng = random.Random(seed)
    response = execution_pb2.ExecuteResponse()
    for _ in range(rng.randint(0, 6)):
        c = response.completions.completions.add()
        c.event = rng.choice(EDGES)
        c.state = rng.choice([common_pb2.EVENT_STATE_SUCCEEDED, common_pb2.EVENT_STATE_FAILED])
        c.code = rng.choice([0, 3, 11, 16, -1, -(2 ** 31), 2 ** 31 - 1])
        c.message = rng.choice(["", "bad value", "n\u00e9e \u2014 \U0001f600"])
        c.data = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 300, 70000])))
        c.data_offset = rng.choice(EDGES)
        c.more_data = rng.random() < 0.5
        if rng.random() < 0.5:
            c.device_time.seconds = rng.choice([0, 1, 2 ** 40, -5])
            c.device_time.nanos = rng.choice([0, 999999999, -3])
    for _ in range(rng.choice([0, 1, 5, 300])):  # packed successes
        response.completions.succeeded.append(rng.choice(EDGES))
        response.completions.succeeded_device_nanos.append(rng.choice(EDGES))
    raw = response.SerializeToString()
    decoded = _wire.completions(raw)
    assert [_completion_fields(c) for c in decoded.completions] == [
        _completion_fields(c) for c in response.completions.completions]
    assert decoded.succeeded == list(response.completions.succeeded)
    assert decoded.succeeded_device_nanos == list(response.completions.succeeded_device_nanos)
    for c in decoded.completions:
        assert len(c.data) == 0 or (isinstance(c.data, memoryview) and c.data.obj is raw), "the data is not copied"


def test_completions_skip_unknown_fields_and_leave_other_messages_to_the_generated_class():
    c = common_pb2.EventCompletion(event=7, data=b"abc")
    unknown = _wire.key(30, 0) + _wire.varint(5) + _wire.key(31, 2) + _wire.varint(2) + b"zz" + _wire.key(32, 1) + bytes(8) \
        + _wire.key(33, 5) + bytes(4)
    body = c.SerializeToString() + unknown
    completions = _wire.key(1, 2) + _wire.varint(len(body)) + body
    raw = _wire.key(2, 2) + _wire.varint(len(completions)) + completions
    assert execution_pb2.ExecuteResponse.FromString(raw).completions.completions[0].event == 7
    [decoded] = _wire.completions(raw).completions
    assert (decoded.event, bytes(decoded.data), decoded.HasField("device_time")) == (7, b"abc", False)
    for other in (execution_pb2.ExecuteResponse(rejected=execution_pb2.BatchRejected(batch_id=3, code=3, message="x")),
                  execution_pb2.ExecuteResponse(attached=execution_pb2.Attached(session="s"))):
        assert _wire.completions(other.SerializeToString()) is None
    with pytest.raises(ValueError):
        _wire.completions(raw[:-1] + b"")  # a completion cut short
    with pytest.raises(ValueError):
        decoded.HasField("data")


def test_packed_successes_decode_packed_or_one_by_one_as_the_generated_class_does():
    one_by_one = b"".join(_wire.key(2, 0) + _wire.varint(n) for n in (5, 2 ** 40)) + _wire.key(3, 0) + _wire.varint(77)
    packed = _wire.varint(9) + _wire.varint(2 ** 63)
    body = one_by_one + _wire.key(2, 2) + _wire.varint(len(packed)) + packed
    raw = _wire.key(2, 2) + _wire.varint(len(body)) + body
    expected = execution_pb2.ExecuteResponse.FromString(raw).completions
    decoded = _wire.completions(raw)
    assert decoded.succeeded == list(expected.succeeded) == [5, 2 ** 40, 9, 2 ** 63]
    assert decoded.succeeded_device_nanos == list(expected.succeeded_device_nanos) == [77]
    cut = _wire.key(2, 2) + _wire.varint(len(packed) + 1) + packed  # a packed field longer than its message
    with pytest.raises(ValueError):
        _wire.completions(_wire.key(2, 2) + _wire.varint(len(cut)) + cut)
