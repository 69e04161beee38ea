"""A session: its buffers, kernels, streams and graphs, and every command, sent on its session stream."""
from __future__ import annotations

import collections
import functools
import itertools
import logging
import threading
import weakref
from typing import Any, Iterable, Sequence

import numpy as np
from google.protobuf import duration_pb2

from . import _dtypes, _wire
from ._buffer import MERGE_BUFFER, Buffer, Kernel, Stream
from ._convert import (access_value, deadline_timestamp, merge_value, mode_value, padding_pairs, priority_value,
                       scalar)
from ._errors import ArraydError, CompileError, InvalidArgument, NotFound
from ._event import Event
from ._graphs import GraphRecorder
from ._stream import GIL, MAX_BATCH_BYTES, SessionStream
from .v1 import (buffers_pb2, common_pb2, devices_pb2, execution_pb2, kernels_pb2, sessions_pb2)

#: Bytes of one inline upload command (the daemon's limit for data inside a batch).
UPLOAD_CHUNK = 1 << 20
#: The first event id of graph replays: their blocks of consecutive ids come from here up, the other commands' ids
#: from 1 up (the daemon takes ids below 2^62), so drawing an id needs no lock against a replay taking a block.
REPLAY_IDS_FROM = 1 << 61
#: Bytes of one download command (its data comes back in pieces of at most the stream's ``ATTACH_MAX_RECEIVE``).
DOWNLOAD_CHUNK = 8 << 20
#: Download commands of one :meth:`Session.read` outstanding at most: past them, it waits for the oldest. The daemon
#: keeps this many arrays of ``DOWNLOAD_CHUNK`` bytes for completions' data, and reuses them only when they come back.
DOWNLOAD_WINDOW = 8
#: New arrays of at least this many bytes that reads return come from the session's pool of regions (unix:// only).
POOL_MIN_BYTES = 8 << 20
#: Bytes of the staging region a session over the Unix socket maps for its first large array transfer.
STAGING_BYTES = 64 << 20
#: The longest completion linger the daemon accepts (seconds).
MAX_COMPLETION_LINGER = 0.01
#: A session's completion linger unless it says otherwise (seconds; see :meth:`arrayd.Client.session`).
DEFAULT_COMPLETION_LINGER = 200e-6

_U64 = 1 << 64
#: Argument types whose objects never change: a launch repeated with the same objects reuses its encoding.
_MEMO_TYPES = frozenset({Buffer, int, float, bool, np.float32, np.float64, np.int32, np.int64, np.uint8,
                         np.float16})

class _LockedCount:
    """An ``itertools.count`` whose ``next`` takes a lock: event ids where threads may draw them at once."""

    def __init__(self, start: int):
        self._count = itertools.count(start)
        self._lock = threading.Lock()

    def __next__(self) -> int:
        with self._lock:
            return next(self._count)


class Session:
    """One client's session: buffers, kernels, streams and commands. A context manager; :meth:`close` frees
    everything it holds. Commands return :class:`~arrayd.Event` s at once (they run in order of their events
    and buffer hazards) and go out in batches on the session stream."""

    def __init__(self, client, name: str, lease: float | None, completion_linger: float | None = None):
        if completion_linger is None:
            completion_linger = DEFAULT_COMPLETION_LINGER
        if not 0 <= completion_linger <= MAX_COMPLETION_LINGER:
            raise ValueError(f"completion_linger: {completion_linger!r} (expected: 0 to {MAX_COMPLETION_LINGER} s)")
        self._client = client
        req = sessions_pb2.OpenSessionRequest(client_name=name)
        if lease is not None:
            req.lease.CopyFrom(duration_pb2.Duration(seconds=int(lease), nanos=int((lease % 1) * 1e9)))
        r = client._unary("SessionService", "OpenSession", req, sessions_pb2.OpenSessionResponse)
        self.id: str = r.session
        self.lease = r.lease.seconds + r.lease.nanos / 1e9
        self._ids = itertools.count(1) if GIL else _LockedCount(1)  # (see _next_id)
        self._replay_ids = REPLAY_IDS_FROM
        self._replay_ids_lock = threading.Lock()
        self._stream = SessionStream(client._channel, client._metadata, self.id, round(completion_linger * 1e6))
        self._closed = threading.Event()
        self._keepalive = threading.Thread(target=self._keep_alive, name=f"arrayd-keepalive-{self.id[:8]}", daemon=True)
        self._keepalive.start()
        self._recording: list | None = None
        self._device_fields: dict[str, bytes] = {}  # Launch.device encoded, per device name
        # buffers by handle while this process references them; the handles of those it dropped, to destroy
        self._live: weakref.WeakValueDictionary[int, Buffer] = weakref.WeakValueDictionary()
        self._garbage: list[int] = []
        self._recorded_buffers: list[Buffer] = []  # what the graph being recorded names (kept for the graph)
        self._staging = None
        self._staging_tried = not client._regions  # made on the first large transfer (over unix:// only)
        self._pool = None  # new arrays in regions (made with the staging region)

    # -- lifetime
    def close(self) -> None:
        """Sends what is queued, waits for the daemon to report it, closes the session."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._stream.close()
        if self._staging is not None:
            self._staging.close()
        if self._pool is not None:
            self._pool.close()
        try:
            self._client._unary("SessionService", "CloseSession", sessions_pb2.CloseSessionRequest(session=self.id),
                                sessions_pb2.CloseSessionResponse)
        except ArraydError:
            pass  # already gone (lease ended, daemon stopped)
        if self in self._client._sessions:
            self._client._sessions.remove(self)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _staging_area(self):
        """The session's staging region, made on first use; None without one (TCP, or the daemon refused it)."""
        if not self._staging_tried:
            self._staging_tried = True
            from ._regions import ArrayPool, Staging
            self._staging = Staging.open(self, STAGING_BYTES)
            if self._staging is not None:
                self._pool = ArrayPool(self)
        return self._staging

    def _keep_alive(self) -> None:
        period = max(1.0, self.lease / 3) if self.lease > 0 else 10.0
        while not self._closed.wait(period):
            try:
                self._client._unary("SessionService", "KeepAlive", sessions_pb2.KeepAliveRequest(session=self.id),
                                    sessions_pb2.KeepAliveResponse, timeout=period)
            except ArraydError:
                return

    def devices(self):
        return self._client.devices()

    def _ordered_unary(self, service: str, method: str, request, response_class):
        """A unary call that reaches the daemon after the commands queued before it (destroying what they use,
        cancelling them, describing what they leave)."""
        self._stream.barrier()
        return self._client._unary(service, method, request, response_class)

    # -- commands
    def _next_id(self) -> int:
        # next() of an itertools.count is one call into C, which no other thread interrupts under the GIL; without
        # the GIL, _ids is a counter with a lock
        return next(self._ids)

    def _ids_for(self, n: int) -> int:
        """The first of ``n`` consecutive event ids for a graph replay."""
        with self._replay_ids_lock:
            first = self._replay_ids
            self._replay_ids += n
            return first

    def _command(self, *, wait_for: Iterable[Event] = (), stream: Stream | None = None,
                 deadline: float | None = None, priority: str | None = None, **kind) -> execution_pb2.Command:
        c = execution_pb2.Command(wait_events=[e.id for e in wait_for], stream=stream.id if stream else 0, **kind)
        ts = deadline_timestamp(deadline)
        if ts is not None:
            c.deadline.CopyFrom(ts)
        if priority is not None:
            c.priority = priority_value(priority)
        return c

    def _submit(self, commands: list, into: list[memoryview] | None = None) -> list[Event]:
        if self._recording is not None:
            # graph-local ids 1, 2, ...: what later recorded commands wait on (these events never complete)
            events = []
            for c in commands:
                if isinstance(c, _Encoded):
                    c = execution_pb2.Command.FromString(c.body)
                self._keep_for_graph(c)
                self._recording.append(c)
                c.event = len(self._recording)
                events.append(Event.placeholder(c.event))
            return events
        events = []
        bodies = []  # (without their events: the request side frames each with its event's id)
        for c in commands:
            if isinstance(c, _Encoded):
                events.append(Event(self._next_id()))
                bodies.append(c.body)
            else:
                c.event = 0
                bodies.append(c.SerializeToString())
                c.event = self._next_id()
                events.append(Event(c.event))
        if into is not None:
            for e, dest in zip(events, into):
                e._into = dest
        self._stream.submit(bodies, events)
        return events

    def _keep_for_graph(self, command: execution_pb2.Command) -> None:
        """Keeps the buffers a recorded command names alive for its graph (a replay names them by handle)."""
        for handle in _buffer_handles(command, set()):
            b = self._live.get(handle)
            if b is not None:
                self._recorded_buffers.append(b)

    def submit(self, commands: Sequence[execution_pb2.Command]) -> list[Event]:
        """Sends ``Command`` messages as they are (event ids are assigned here): for what the helpers do not cover."""
        return self._submit([execution_pb2.Command.FromString(c.SerializeToString()) for c in commands])

    # -- buffers
    def empty(self, shape: int | Sequence[int], dtype: Any = np.float32, *, device: str = "", mode: str = "device",
              label: str = "", per_stream: bool = False, padding: int | Sequence[tuple[int, int]] | None = None,
              pad_value: float | int | None = None) -> Buffer:
        """A new buffer of ``shape`` and ``dtype`` (its memory zeroed by the daemon) on ``device`` (empty: the first).

        ``padding`` makes it a padded buffer: ``n`` elements on both sides of every axis, or one ``(left, right)``
        pair per axis; the padding holds ``pad_value`` (default 0). Kernels index the padded array; writes, reads,
        fills and copies address the interior ``shape`` unless they pass ``whole_padded=True``."""
        dims = [int(shape)] if isinstance(shape, (int, np.integer)) else [int(d) for d in shape]
        name = _dtypes.name_of(dtype)
        pads = padding_pairs(padding, len(dims))
        req = buffers_pb2.CreateBufferRequest(session=self.id, dtype=_dtypes.wire(name), dims=dims, memory_mode=mode_value(mode),
                                              device=device, label=label,
                                              sharing=common_pb2.SHARING_PER_STREAM if per_stream else common_pb2.SHARING_SHARED,
                                              padding=[buffers_pb2.AxisPadding(left=l, right=r) for l, r in pads or ()])
        if pad_value is not None:
            req.padding_value.CopyFrom(scalar(pad_value, name, "pad_value"))
        self.collect()
        info = self._client._unary("BufferService", "CreateBuffer", req, buffers_pb2.CreateBufferResponse).buffer
        return self._adopt(Buffer(self, info.buffer, name, tuple(dims), info.device, mode, padding=pads))

    def view(self, base: Buffer, shape: int | Sequence[int], *, whole_padded: bool = False) -> Buffer:
        """A view of ``base`` with a new ``shape``: the same memory, replicas and events (nothing copied; a write
        through either is a write of both). Of a padded buffer's interior, ``shape`` keeps its padded axes as the
        innermost ones and regroups only the axes outside them; with ``whole_padded`` it views the whole padded
        array as plain elements. The memory stays until ``base`` and every view are destroyed."""
        dims = [int(shape)] if isinstance(shape, (int, np.integer)) else [int(d) for d in shape]
        self.collect()
        info = self._client._unary("BufferService", "CreateView", buffers_pb2.CreateViewRequest(
            session=self.id, base=base.id, dims=dims, whole_padded=whole_padded), buffers_pb2.CreateViewResponse).buffer
        pads = tuple((p.left, p.right) for p in info.padding) or None
        return self._adopt(Buffer(self, info.buffer, base.dtype, tuple(dims), info.device, base.mode, padding=pads))

    def _adopt(self, buffer: Buffer) -> Buffer:
        """Tracks a new buffer: once this process drops its last reference, its handle waits for :meth:`collect`."""
        finalizer = weakref.finalize(buffer, self._garbage.append, buffer.id)  # (holds the list, not the buffer)
        finalizer.atexit = False
        buffer._finalizer = finalizer
        self._live[buffer.id] = buffer
        return buffer

    def collect(self) -> int:
        """Destroys on the daemon the buffers this process no longer references (garbage collected), after the
        commands queued before; the number destroyed. Done before every buffer and view is created, so that
        their memory comes back first; :meth:`Buffer.destroy` destroys one at once."""
        handles = []
        while True:
            try:
                handles.append(self._garbage.pop())  # (atomic: finalizers append on any thread)
            except IndexError:
                break
        if not handles or self._closed.is_set():
            return 0
        self._stream.barrier()
        for handle in handles:
            try:
                self._destroy_now(handle)
            except NotFound:
                pass  # gone already (a LOCAL buffer a graph consumed)
            except ArraydError as e:
                _log.warning("arrayd: destroying dropped buffer 0x%x failed: %s", handle, e)
        return len(handles)

    zeros = empty

    def array(self, data: Any, *, dtype: Any = None, device: str = "", mode: str = "device", label: str = "",
              padding: int | Sequence[tuple[int, int]] | None = None, pad_value: float | int | None = None) -> Buffer:
        """A new buffer holding ``data`` (a NumPy array or anything ``numpy.asarray`` takes); with ``padding`` it is
        the interior of a padded buffer (see :meth:`empty`)."""
        a = np.asarray(data, dtype=_dtypes.numpy_of(_dtypes.name_of(dtype)) if dtype is not None else None)
        if a.ndim == 0:
            a = a.reshape(1)
        buf = self.empty(a.shape, a.dtype, device=device, mode=mode, label=label, padding=padding, pad_value=pad_value)
        buf.write(a)
        return buf

    def upload(self, buffer: Buffer, data: Any, *, offset_bytes: int = 0, wait_for: Iterable[Event] = (),
               stream: Stream | None = None, whole_padded: bool = False) -> Event:
        """Writes ``data``'s bytes into ``buffer`` from ``offset_bytes`` (of a padded buffer's interior, or of its
        whole padded array with ``whole_padded``); the event of the last part."""
        raw = np.ascontiguousarray(data)
        view = memoryview(raw.reshape(-1).view(np.uint8)) if raw.size else memoryview(b"")
        if whole_padded:
            head = self._command(wait_for=wait_for, stream=stream)
            head.upload.CopyFrom(execution_pb2.Upload(buffer=buffer.id, offset_bytes=offset_bytes, data=view.tobytes(),
                                                      whole_padded=True))
            return self._submit([head])[0]
        if len(view) > UPLOAD_CHUNK and self._recording is None and self._staging_area() is not None:
            return self._staging.upload(buffer, view, offset_bytes, list(wait_for), stream)
        if self._recording is not None:
            commands: list = []
            for start in range(0, max(1, len(view)), UPLOAD_CHUNK):
                head = self._command(wait_for=wait_for if start == 0 else (), stream=stream)
                head.upload.CopyFrom(execution_pb2.Upload(buffer=buffer.id, offset_bytes=offset_bytes + start,
                                                          data=view[start:start + UPLOAD_CHUNK].tobytes()))
                commands.append(head)
            return self._submit(commands)[-1]
        # batch messages of at most MAX_BATCH_BYTES, built by the stream's request side as gRPC takes them: the bytes
        # go from the array into a message once, on the thread that sends it, before this returns (the caller may
        # change the array then), and the messages keep their place among the session's commands. Each part waits
        # for the one before it, so the event returned fails when any part failed
        last = None
        batches: list = []
        group: list = []
        events: list[Event] = []
        size = 0
        for start in range(0, max(1, len(view)), UPLOAD_CHUNK):
            head = self._command(wait_for=wait_for if last is None else (last,), stream=stream)
            event = Event(self._next_id())
            head.event = event.id
            command = _wire.upload_parts(head.SerializeToString(), buffer.id, offset_bytes + start,
                                         view[start:start + UPLOAD_CHUNK])
            if group and size + command[1] > MAX_BATCH_BYTES:
                batches.append((events, group))
                group, events, size = [], [], 0
            group.append(command)
            events.append(event)
            size += command[1]
            last = event
        batches.append((events, group))
        self._stream.submit_parts(batches)
        return last

    def download(self, buffer: Buffer, *, offset_bytes: int = 0, size_bytes: int = 0, wait_for: Iterable[Event] = (),
                 stream: Stream | None = None, whole_padded: bool = False,
                 _into: memoryview | None = None) -> list[Event]:
        """Reads bytes of ``buffer`` (0 = to its end; of a padded buffer's interior, or of its whole padded array with
        ``whole_padded``) in commands of at most 8 MiB; their events carry the bytes."""
        size = size_bytes or (buffer.padded_nbytes if whole_padded else buffer.nbytes) - offset_bytes
        starts = range(0, size, DOWNLOAD_CHUNK)
        commands = [self._command(wait_for=wait_for, stream=stream, download=execution_pb2.Download(
            buffer=buffer.id, offset_bytes=offset_bytes + start, size_bytes=min(DOWNLOAD_CHUNK, size - start),
            whole_padded=whole_padded)) for start in starts]
        # the bytes go straight into the destination as they arrive (registered before the commands are sent)
        into = None if _into is None else [_into[start:start + DOWNLOAD_CHUNK] for start in starts]
        if self._recording is not None:
            return self._submit(commands, into=into)
        # each in a batch message of its own: the daemon holds a batch's downloads in its memory from the moment it
        # reads the batch (it refuses one that does not fit its transfer-memory), and reads no more of the stream
        # while the session holds 64 MiB of them, so the later ones are read as the earlier ones' data is sent
        events: list[Event] = []
        for i, c in enumerate(commands):
            c.event = self._next_id()
            e = Event(c.event)
            if into is not None:
                e._into = into[i]
            body = c.SerializeToString()
            self._stream.submit_batch([e], functools.partial(_wire.batch_from_parts, commands=[([body], len(body))]))
            events.append(e)
        return events

    def read(self, buffer: Buffer, *, wait_for: Iterable[Event] = (), out: np.ndarray | None = None) -> np.ndarray:
        """The buffer's contents as a new NumPy array of its dtype and shape, or in ``out`` (see
        :meth:`Buffer.numpy`)."""
        if self._recording is not None:
            raise RuntimeError(f"read of buffer 0x{buffer.id:x}: inside a graph recording, whose commands are recorded, "
                               "not run (read it after the recording, or record a download: its event carries the "
                               "bytes when the graph is replayed)")
        if out is None:
            if buffer.nbytes >= POOL_MIN_BYTES and self._staging_area() is not None:
                # a new array the daemon downloads into directly, in a region of the session's pool
                pooled = self._pool.read(buffer, list(wait_for))
                if pooled is not None:
                    return pooled
            out = np.empty(buffer.shape, dtype=buffer.numpy_dtype)
        else:
            buffer._check_out(out)
        target = out.reshape(-1).view(np.uint8)
        if buffer.nbytes > UPLOAD_CHUNK and self._staging_area() is not None:
            self._staging.download(buffer, target, list(wait_for))
            return out
        into = memoryview(target)
        size = buffer.nbytes
        pending: collections.deque = collections.deque()
        for start in range(0, size, DOWNLOAD_CHUNK):
            if len(pending) == DOWNLOAD_WINDOW:
                pending.popleft().wait()
            n = min(DOWNLOAD_CHUNK, size - start)
            pending.extend(self.download(buffer, offset_bytes=start, size_bytes=n, wait_for=wait_for,
                                         _into=into[start:start + n]))
        for e in pending:
            e.wait()
        return out

    def fill(self, buffer: Buffer, value: float | int, *, offset: int = 0, count: int = 0,
             wait_for: Iterable[Event] = (), stream: Stream | None = None, whole_padded: bool = False) -> Event:
        """Sets ``count`` elements (0: to the end) from ``offset`` to ``value`` (of a padded buffer's interior, or of
        its whole padded array with ``whole_padded``)."""
        return self._submit([self._command(wait_for=wait_for, stream=stream, fill=execution_pb2.Fill(
            buffer=buffer.id, value=scalar(value, "f32" if buffer.dtype in ("f16", "bf16") else buffer.dtype, "fill.value"),
            offset_elements=offset, count_elements=count, whole_padded=whole_padded))])[0]

    def copy(self, src: Buffer, dst: Buffer | None = None, *, src_offset_bytes: int = 0, dst_offset_bytes: int = 0,
             size_bytes: int = 0, device: str = "", merge: str | None = None, src_stream: Stream | None = None,
             wait_for: Iterable[Event] = (), stream: Stream | None = None, whole_padded: bool = False) -> Event:
        """Copies bytes of ``src`` into ``dst`` (on any devices; padded buffers' interiors, or their whole padded
        arrays with ``whole_padded``). Without ``dst``: makes ``src`` current on ``device`` (a prefetch), or with
        ``merge="copy"|"streaming"`` fills the merge buffer of ``stream``."""
        return self._submit([self._command(wait_for=wait_for, stream=stream, copy=execution_pb2.Copy(
            src=src.id, dst=dst.id if dst is not None else 0, src_offset_bytes=src_offset_bytes,
            dst_offset_bytes=dst_offset_bytes, size_bytes=size_bytes, device=device, merge=merge_value(merge),
            src_stream=src_stream.id if src_stream else 0, whole_padded=whole_padded))])[0]

    def destroy(self, buffer: Buffer) -> None:
        """Destroys ``buffer`` on the daemon after the commands queued before (its memory is freed once they are
        done); later commands naming it fail with NOT_FOUND."""
        if buffer._finalizer is not None:
            buffer._finalizer.detach()
        self._stream.barrier()
        self._destroy_now(buffer.id)

    def _destroy_now(self, handle: int) -> None:
        """DestroyBuffer, sent at once (callers pass the stream's barrier first)."""
        self._client._unary("BufferService", "DestroyBuffer",
                            buffers_pb2.DestroyBufferRequest(session=self.id, buffer=handle),
                            buffers_pb2.DestroyBufferResponse)

    def describe(self, buffer: Buffer) -> dict[str, str]:
        """Where the buffer's replicas are and their MSI states, e.g. ``{"cpu:0": "SHARED", "host": "SHARED"}``."""
        r = self._ordered_unary("BufferService", "DescribeBuffer",
                                buffers_pb2.DescribeBufferRequest(session=self.id, buffer=buffer.id),
                                buffers_pb2.DescribeBufferResponse)
        return {rep.device: common_pb2.ReplicaState.Name(rep.state).removeprefix("REPLICA_STATE_")
                for rep in r.buffer.replicas}

    # -- kernels
    def compile(self, *kernels: Any, backend: str = "") -> dict[str, Kernel]:
        """Compiles IR kernels (made with :func:`arrayd.ir.kernel`) into one module; their handles by name.
        A kernel the daemon refuses raises :class:`~arrayd.CompileError` pointing at the Python line."""
        from . import ir
        module = ir.module(kernels)
        source = kernels_pb2.KernelModuleSource(dialect=devices_pb2.DIALECT_IR, ir=module.proto, backend=backend)
        try:
            r = self._client._unary("KernelService", "Compile", kernels_pb2.CompileRequest(session=self.id, modules=[source]),
                                    kernels_pb2.CompileResponse)
        except InvalidArgument as e:
            raise module.locate(e) from None
        compiled = r.modules[0]
        return {k.name: Kernel(self, k.kernel, k.name, module.signature(k.name)) for k in compiled.kernels}

    def compile_source(self, dialect: str, source: str, entry_points: Sequence[tuple[str, Sequence[tuple]]],
                       backend: str = "") -> dict[str, Kernel]:
        """Compiles native source (``"c"``, ``"opencl_c"``, ``"cuda_c"``, ``"ptx"``; the daemon must allow it).
        ``entry_points``: ``[(name, [(param, "buffer", dtype, "read"|"write"|"read_write") or
        (param, "scalar", dtype)]), ...]``."""
        sigs, params = [], {}
        for name, ps in entry_points:
            sig = kernels_pb2.KernelSignature(name=name)
            plist = []
            for p in ps:
                if p[1] == "buffer":
                    sig.params.add(name=p[0], buffer=kernels_pb2.BufferParam(
                        dtype=_dtypes.wire(p[2]), access=access_value(p[3] if len(p) > 3 else "read_write")))
                    plist.append(("buffer", _dtypes.name_of(p[2])))
                else:
                    sig.params.add(name=p[0], scalar=kernels_pb2.ScalarParam(dtype=_dtypes.wire(p[2])))
                    plist.append(("scalar", _dtypes.name_of(p[2])))
            sigs.append(sig)
            params[name] = plist
        d = {"c": devices_pb2.DIALECT_C, "opencl_c": devices_pb2.DIALECT_OPENCL_C, "cuda_c": devices_pb2.DIALECT_CUDA_C,
             "ptx": devices_pb2.DIALECT_PTX}[dialect.lower()]
        try:
            r = self._client._unary("KernelService", "Compile", kernels_pb2.CompileRequest(session=self.id, modules=[
                kernels_pb2.KernelModuleSource(dialect=d, source=source, entry_points=sigs, backend=backend)]),
                kernels_pb2.CompileResponse)
        except InvalidArgument as e:
            raise CompileError(e.code, e.message) from None
        return {k.name: Kernel(self, k.kernel, k.name, params[k.name]) for k in r.modules[0].kernels}

    def launch(self, kernel: Kernel, global_size: int | Sequence[int], *args: Any, local_size: Sequence[int] | None = None,
               device: str = "", wait_for: Iterable[Event] = (), stream: Stream | None = None,
               deadline: float | None = None, priority: str | None = None) -> Event:
        """Launches ``kernel`` over ``global_size`` work-items with ``args`` (buffers, numbers, or
        :data:`arrayd.MERGE_BUFFER`); returns at once with its event."""
        return self._launch(kernel, global_size, args, local_size, device, wait_for, stream, deadline, priority)

    def _launch(self, kernel: Kernel, global_size: Any, args: tuple, local_size: Sequence[int] | None, device: str,
                wait_for: Iterable[Event], stream: Stream | None, deadline: float | None, priority: str | None) -> Event:
        """:meth:`launch` with its arguments as they are (a kernel's call with options comes here directly; one
        without goes straight to the stream, see :meth:`Kernel.__call__`)."""
        body = kernel._encoded_again(global_size, args, local_size, device)
        if body is None:
            body = self._encode_launch(kernel, global_size, args, local_size, device)
        if wait_for or stream is not None or deadline is not None or priority is not None:
            ts = deadline_timestamp(deadline)
            body = _wire.command_head([e.id for e in wait_for], stream.id if stream else 0, priority_value(priority),
                                      ts.SerializeToString() if ts is not None else None) + body
        return self._submit_launch(body)

    def _submit_launch(self, body: bytes) -> Event:
        """An encoded launch (without its event) onto the session stream, or into the graph being recorded."""
        if self._recording is not None:
            return self._submit([_Encoded(body)])[0]
        return self._stream.submit_command(next(self._ids), body)

    def _encode_launch(self, kernel: Kernel, global_size: Any, args: tuple, local_size: Sequence[int] | None,
                       device: str) -> bytes:
        """``Command.launch`` encoded; remembered by the kernel when its arguments cannot change under it."""
        gdims = (int(global_size),) if isinstance(global_size, (int, np.integer)) else [int(g) for g in global_size]
        ldims = [int(l) for l in local_size] if local_size else ()
        if (not all(0 <= d < _U64 for d in gdims) if len(gdims) != 1 else not 0 <= gdims[0] < _U64) or \
                (ldims and not all(0 <= d < _U64 for d in ldims)):
            raise ValueError(f"{kernel.name}: global_size {list(gdims)}, local_size {list(ldims)} (expected: sizes of 0 to "
                             f"2^64 - 1)")
        field = self._device_fields.get(device)
        if field is None:
            field = self._device_fields[device] = _wire.device_field(device)
        body = _wire.launch(kernel._field, gdims, ldims, kernel.encoded_arguments(args), field)
        # remembered only for arguments that stay what they are (buffers, the merge buffer, Python numbers, NumPy
        # scalars; not a BufferRange, whose fields could be changed) and a size that is an int
        if local_size is None and type(global_size) is int and all(
                type(a) in _MEMO_TYPES or a is MERGE_BUFFER for a in args):
            kernel._last = (args, device, global_size, body)
        return body

    def host_written(self, buffer: Buffer, *, wait_for: Iterable[Event] = (), stream: Stream | None = None) -> Event:
        """Says this process wrote the region bytes ``buffer`` lives in: they become its current data."""
        return self._submit([self._command(wait_for=wait_for, stream=stream,
                                           host_written=execution_pb2.HostWritten(buffer=buffer.id))])[0]

    # -- events
    def wait(self, *events: Event, timeout: float | None = None) -> None:
        """Waits for every event; raises the first failure."""
        for e in events:
            e.wait(timeout)

    def cancel(self, *events: Event) -> int:
        """Cancels commands not yet started; the number cancelled (their events fail with CANCELLED)."""
        r = self._ordered_unary("ExecutionService", "Cancel",
                                execution_pb2.CancelRequest(session=self.id, events=[e.id for e in events]),
                                execution_pb2.CancelResponse)
        return r.cancelled

    # -- streams and graphs
    def stream(self, device: str = "") -> Stream:
        """A new in-order stream on ``device`` (empty: the first): commands given it run in order."""
        r = self._client._unary("ExecutionService", "CreateStream",
                                execution_pb2.CreateStreamRequest(session=self.id, device=device),
                                execution_pb2.CreateStreamResponse)
        return Stream(self, r.stream, r.device)

    def record(self) -> "GraphRecorder":
        """``with session.record() as g:`` — commands issued inside are recorded into a graph, not run;
        ``g.graph.replay()`` runs them."""
        return GraphRecorder(self)

    # -- regions (same host)
    def region(self, nbytes: int):
        """A shared-memory region of at least ``nbytes`` mapped into this process (the daemon's Unix socket
        only): NumPy views over it (:meth:`~arrayd.Region.ndarray`), uploads and downloads through it, and
        buffers that live in it (:meth:`~arrayd.Region.buffer`)."""
        from ._regions import Region
        return Region.create(self, nbytes)


_log = logging.getLogger("arrayd")


def _buffer_handles(message, out: set[int]) -> set[int]:
    """The buffer handles a command names (``buffer``, ``src`` and ``dst`` fields, at any depth)."""
    for field, value in message.ListFields():
        if field.message_type is not None:
            for v in (value,) if hasattr(value, "ListFields") else value:
                _buffer_handles(v, out)
        elif field.name in ("buffer", "src", "dst") and field.type == field.TYPE_UINT64:
            out.add(value)
    return out


class _Encoded:
    """A command already serialized, without its event (the hot path of launches)."""
    __slots__ = ("body",)

    def __init__(self, body: bytes):
        self.body = body
