"""The session stream (ExecutionService.Execute): commands go out in batches from a queue, so a loop of
launches is pipelined (nothing waits for an answer before sending the next); completions come back on a
reader thread and complete each command's :class:`Event`."""
from __future__ import annotations

import itertools
import queue
import threading
from typing import Any, Callable, Iterator

import grpc

from . import _wire
from ._errors import ArraydError, error, from_rpc
from .v1 import common_pb2, execution_pb2

#: Commands sent in one batch at most (more queued ones go in the next).
MAX_BATCH = 1024
#: The largest completions message this stream takes (the daemon's most: a download's data in fewer pieces).
ATTACH_MAX_RECEIVE = 8 << 20
#: Bytes of one batch message at most (a batch carrying inline uploads is cut before it grows past this).
MAX_BATCH_BYTES = 8 << 20


class Event:
    """One command's completion, like a future: :meth:`wait` blocks until the command has run and raises its
    error (an :class:`~arrayd.ArraydError` of the daemon's code) if it failed. Pass events as ``wait_for=``
    to order later commands after them without waiting here."""

    __slots__ = ("id", "_state", "_value", "_waiter", "_callbacks", "_pieces", "device_time", "_batch", "_into",
                 "__weakref__")

    _PENDING, _SUCCEEDED, _FAILED = 0, 1, 2
    _lock = threading.Lock()  # guards the rare slow path (a waiter or a callback arriving while pending)

    def __init__(self, event_id: int):
        self.id = event_id
        self._state = Event._PENDING
        self._value: Any = None
        self._waiter: threading.Event | None = None
        self._callbacks: list | None = None
        self._pieces: list[bytes] | None = None
        self._batch = 0
        self._into: memoryview | None = None  # a download's destination: its pieces are copied there as they come
        #: seconds the command ran on its device (set when it succeeded; 0 when unknown)
        self.device_time = 0.0

    def wait(self, timeout: float | None = None) -> "Event":
        """Blocks until the command completed; raises its error if it failed."""
        if self._state == Event._PENDING:
            with Event._lock:
                if self._state == Event._PENDING and self._waiter is None:
                    self._waiter = threading.Event()
                waiter = self._waiter
            if waiter is not None and not waiter.wait(timeout):
                raise TimeoutError(f"event {self.id}: not complete within {timeout} s")
        if self._state == Event._FAILED:
            raise self._value
        return self

    def result(self, timeout: float | None = None) -> bytes | None:
        """A download's bytes (None for other commands), once complete."""
        self.wait(timeout)
        return self._value

    def done(self) -> bool:
        return self._state != Event._PENDING

    def failed(self) -> bool:
        return self._state == Event._FAILED

    def exception(self) -> BaseException | None:
        return self._value if self._state == Event._FAILED else None

    def add_done_callback(self, fn: Callable[["Event"], None]) -> None:
        """Calls ``fn(event)`` once it completes (at once if it has; else on the stream's reader thread)."""
        with Event._lock:
            if self._state == Event._PENDING:
                if self._callbacks is None:
                    self._callbacks = []
                self._callbacks.append(fn)
                return
        fn(self)

    def __repr__(self) -> str:
        state = "pending" if not self.done() else ("failed" if self.failed() else "succeeded")
        return f"Event({self.id}, {state})"

    # -- completion, by the stream's reader
    def _finish(self, state: int, value: Any) -> None:
        with Event._lock:
            if self._state != Event._PENDING:
                return
            self._value = value
            self._state = state
            waiter, callbacks = self._waiter, self._callbacks
        if waiter is not None:
            waiter.set()
        for fn in callbacks or ():
            fn(self)

    def _fail(self, error: BaseException) -> None:
        self._finish(Event._FAILED, error)

    def _complete(self, c: common_pb2.EventCompletion) -> bool:
        if c.state == common_pb2.EVENT_STATE_FAILED:
            self._fail(error(c.code, c.message))
            return True
        if self._into is not None:
            self._into[c.data_offset:c.data_offset + len(c.data)] = c.data
            if c.more_data:
                return False
            data = None
        elif c.more_data or self._pieces is not None:
            if self._pieces is None:
                self._pieces = []
            self._pieces.append(c.data)
            if c.more_data:
                return False
            data: bytes | None = b"".join(self._pieces)
            self._pieces = None
        else:
            data = c.data if c.data else None
        if c.HasField("device_time"):
            self.device_time = c.device_time.seconds + c.device_time.nanos / 1e9
        self._finish(Event._SUCCEEDED, data)
        return True


class SessionStream:
    """One Execute call for a session. :meth:`submit` queues commands with their events; a request generator
    drains the queue into batches; a reader thread completes the events."""

    def __init__(self, channel: grpc.Channel, metadata: list[tuple[str, str]], session: str, linger_us: int = 0):
        self._linger_us = linger_us
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._pending: dict[int, Event] = {}
        # batch id -> [its events, how many of them are not complete yet] (for a rejection; dropped when done)
        self._batches: dict[int, list] = {}
        self._batch_ids = itertools.count(1)
        self._closed = False
        self._failure: ArraydError | None = None
        self._session = session
        execute = channel.stream_stream("/arrayd.v1.ExecutionService/Execute",
                                        request_serializer=_wire.identity,  # requests are serialized here
                                        response_deserializer=execution_pb2.ExecuteResponse.FromString)
        self._call = execute(self._requests(), metadata=metadata)
        self._attached = threading.Event()
        self._reader = threading.Thread(target=self._read, name=f"arrayd-stream-{session[:8]}", daemon=True)
        self._reader.start()

    def submit(self, commands: list[bytes], events: list[Event]) -> None:
        """Queues serialized ``Command`` s (their event ids set) and their events."""
        if self._register(events):
            self._queue.put((commands, events))

    def replay(self, request, events: list[Event]) -> None:
        """Queues a graph replay (its events, from ``first_event`` on, complete like commands)."""
        if self._register(events):
            self._queue.put(("replay", request, events))

    def _register(self, events: list[Event]) -> bool:
        """Tracks the events; false (and fails them) when the stream is closed or broken."""
        with self._lock:
            failure = self._failure
            if failure is None and self._closed:
                failure = error(grpc.StatusCode.FAILED_PRECONDITION, f"session {self._session[:8]}…: closed")
            if failure is None:
                for e in events:
                    self._pending[e.id] = e
                return True
        for e in events:
            e._fail(failure)
        return False

    def close(self, timeout: float | None = 30) -> None:
        """Half-closes: the daemon reports every accepted command, then ends the call."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._queue.put(None)
        self._reader.join(timeout)

    def cancel(self) -> None:
        self._call.cancel()

    # -- the request side: a generator gRPC pulls from
    def _requests(self) -> Iterator[bytes]:
        yield execution_pb2.ExecuteRequest(attach=execution_pb2.Attach(
            session=self._session, max_receive_message_bytes=ATTACH_MAX_RECEIVE,
            completion_linger_us=self._linger_us)).SerializeToString()
        carry: list = []  # (command, event) pairs taken from the queue and not sent yet
        closing = False
        while True:
            if not carry:
                if closing:
                    return
                item = self._queue.get()
                if item is None:
                    return
                if item[0] == "replay":
                    _, request, events = item
                    request.batch_id = self._track(events)
                    yield execution_pb2.ExecuteRequest(replay=request).SerializeToString()
                    continue
                carry.extend(zip(item[0], item[1]))
            # whatever else is queued goes in the same batch, up to a count and a size
            while len(carry) < MAX_BATCH and not closing:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    closing = True
                elif nxt[0] == "replay":
                    self._queue.put(nxt)  # after this batch (replays are rare; order against it is by events)
                    break
                else:
                    carry.extend(zip(nxt[0], nxt[1]))
            commands, events, size = [], [], 0
            while carry and len(commands) < MAX_BATCH:
                c, e = carry[0]
                n = len(c)
                if commands and size + n > MAX_BATCH_BYTES:
                    break
                carry.pop(0)
                commands.append(c)
                events.append(e)
                size += n
            yield _wire.batch_request(self._track(events), commands)

    def _track(self, events: list[Event]) -> int:
        batch_id = next(self._batch_ids)
        with self._lock:
            self._batches[batch_id] = [events, len(events)]
            for e in events:
                e._batch = batch_id
        return batch_id

    # -- the response side
    def _read(self) -> None:
        failure: ArraydError | None = None
        try:
            for response in self._call:
                kind = response.WhichOneof("msg")
                if kind == "completions":
                    for c in response.completions.completions:
                        with self._lock:
                            event = self._pending.get(c.event)
                        if event is not None and event._complete(c):
                            with self._lock:
                                self._pending.pop(c.event, None)
                                batch = self._batches.get(event._batch)
                                if batch is not None:
                                    batch[1] -= 1
                                    if batch[1] == 0:
                                        del self._batches[event._batch]
                elif kind == "rejected":
                    with self._lock:
                        events = self._batches.pop(response.rejected.batch_id, [[], 0])[0]
                        for e in events:
                            self._pending.pop(e.id, None)
                    rejection = error(response.rejected.code, response.rejected.message)
                    for e in events:
                        if not e.done():
                            e._fail(rejection)
                elif kind == "attached":
                    self._attached.set()
        except grpc.RpcError as e:
            failure = from_rpc(e)
        finally:
            with self._lock:
                if failure is None:
                    failure = error(grpc.StatusCode.UNAVAILABLE, f"session {self._session[:8]}…: its stream ended")
                self._failure = failure
                pending = list(self._pending.values())
                self._pending.clear()
                self._batches.clear()
            for e in pending:
                if not e.done():
                    e._fail(failure)
