"""The session stream (ExecutionService.Execute): commands go out in batches from a queue, so a loop of
launches is pipelined (nothing waits for an answer before sending the next); completions come back on a
reader thread and complete each command's :class:`Event`."""
from __future__ import annotations

import concurrent.futures
import itertools
import queue
import threading
from typing import Iterator

import grpc

from ._errors import ArraydError, error, from_rpc
from .v1 import common_pb2, execution_pb2

#: Commands sent in one batch at most (more queued ones go in the next).
MAX_BATCH = 1024


class Event:
    """One command's completion, like a future: :meth:`wait` blocks until the command has run and raises its
    error (an :class:`~arrayd.ArraydError` of the daemon's code) if it failed. Pass events as ``wait_for=``
    to order later commands after them without waiting here."""

    __slots__ = ("id", "_future", "_pieces", "device_time")

    def __init__(self, event_id: int):
        self.id = event_id
        self._future: concurrent.futures.Future = concurrent.futures.Future()
        self._pieces: list[bytes] | None = None
        #: seconds the command ran on its device (set when it succeeded; 0 when unknown)
        self.device_time = 0.0

    def wait(self, timeout: float | None = None) -> "Event":
        """Blocks until the command completed; raises its error if it failed."""
        try:
            self._future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"event {self.id}: not complete within {timeout} s") from None
        return self

    def result(self, timeout: float | None = None) -> bytes | None:
        """A download's bytes (None for other commands), once complete."""
        return self._future.result(timeout)

    def done(self) -> bool:
        return self._future.done()

    def failed(self) -> bool:
        return self._future.done() and self._future.exception() is not None

    def exception(self) -> BaseException | None:
        return self._future.exception() if self._future.done() else None

    def add_done_callback(self, fn) -> None:
        self._future.add_done_callback(lambda _f: fn(self))

    def __repr__(self) -> str:
        state = "pending" if not self.done() else ("failed" if self.failed() else "succeeded")
        return f"Event({self.id}, {state})"

    # -- completion, by the stream's reader
    def _complete(self, c: common_pb2.EventCompletion) -> bool:
        if c.state == common_pb2.EVENT_STATE_FAILED:
            self._future.set_exception(error(c.code, c.message))
            return True
        if c.more_data or self._pieces is not None:
            if self._pieces is None:
                self._pieces = []
            self._pieces.append(c.data)
            if c.more_data:
                return False
            data: bytes | None = b"".join(self._pieces)
            self._pieces = None
        else:
            data = c.data if c.data else None
        self.device_time = c.device_time.seconds + c.device_time.nanos / 1e9
        self._future.set_result(data)
        return True


class SessionStream:
    """One Execute call for a session. :meth:`submit` queues commands with their events; a request generator
    drains the queue into batches; a reader thread completes the events."""

    def __init__(self, channel: grpc.Channel, metadata: list[tuple[str, str]], session: str):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._pending: dict[int, Event] = {}
        self._batches: dict[int, list[Event]] = {}
        self._batch_ids = itertools.count(1)
        self._closed = False
        self._failure: ArraydError | None = None
        self._session = session
        execute = channel.stream_stream("/arrayd.v1.ExecutionService/Execute",
                                        request_serializer=execution_pb2.ExecuteRequest.SerializeToString,
                                        response_deserializer=execution_pb2.ExecuteResponse.FromString)
        self._call = execute(self._requests(), metadata=metadata)
        self._attached = threading.Event()
        self._reader = threading.Thread(target=self._read, name=f"arrayd-stream-{session[:8]}", daemon=True)
        self._reader.start()

    def submit(self, commands: list, events: list[Event]) -> None:
        """Queues a batch of commands (``Command`` messages with their event ids set) and their events."""
        with self._lock:
            if self._failure is not None:
                failure = self._failure
            elif self._closed:
                failure = error(grpc.StatusCode.FAILED_PRECONDITION, f"session {self._session[:8]}…: closed")
            else:
                failure = None
                for e in events:
                    self._pending[e.id] = e
        if failure is not None:
            for e in events:
                e._future.set_exception(failure)
            return
        self._queue.put((commands, events))

    def replay(self, request, events: list[Event]) -> None:
        """Queues a graph replay (its events, from ``first_event`` on, complete like commands)."""
        with self._lock:
            if self._failure is not None or self._closed:
                failure = self._failure or error(grpc.StatusCode.FAILED_PRECONDITION, "session closed")
            else:
                failure = None
                for e in events:
                    self._pending[e.id] = e
        if failure is not None:
            for e in events:
                e._future.set_exception(failure)
            return
        self._queue.put(("replay", request, events))

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
    def _requests(self) -> Iterator[execution_pb2.ExecuteRequest]:
        yield execution_pb2.ExecuteRequest(attach=execution_pb2.Attach(session=self._session))
        while True:
            item = self._queue.get()
            if item is None:
                return
            if item[0] == "replay":
                _, request, events = item
                request.batch_id = self._track(events)
                yield execution_pb2.ExecuteRequest(replay=request)
                continue
            commands, events = list(item[0]), list(item[1])
            closing = False
            while len(commands) < MAX_BATCH:  # whatever else is queued goes in the same batch
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    closing = True
                    break
                if nxt[0] == "replay":
                    self._queue.put(nxt)  # keeps its place only approximately: replays are rare
                    break
                commands.extend(nxt[0])
                events.extend(nxt[1])
            batch_id = self._track(events)
            yield execution_pb2.ExecuteRequest(batch=execution_pb2.CommandBatch(batch_id=batch_id, commands=commands))
            if closing:
                return

    def _track(self, events: list[Event]) -> int:
        batch_id = next(self._batch_ids)
        with self._lock:
            self._batches[batch_id] = events
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
                elif kind == "rejected":
                    with self._lock:
                        events = self._batches.pop(response.rejected.batch_id, [])
                        for e in events:
                            self._pending.pop(e.id, None)
                    rejection = error(response.rejected.code, response.rejected.message)
                    for e in events:
                        if not e.done():
                            e._future.set_exception(rejection)
                elif kind == "attached":
                    self._attached.set()
                # batches that were accepted are forgotten lazily: their events complete one by one
                self._forget_completed_batches()
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
                    e._future.set_exception(failure)

    def _forget_completed_batches(self) -> None:
        with self._lock:
            if len(self._batches) < 256:
                return
            for batch_id in [b for b, evs in self._batches.items() if all(e.done() for e in evs)]:
                del self._batches[batch_id]
