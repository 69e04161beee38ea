"""An event: one command's completion, like a future, completed by its session stream's reader."""
from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Callable

from ._errors import error
from .v1 import common_pb2

if TYPE_CHECKING:
    from . import _wire
    from ._stream import SessionStream

_log = logging.getLogger("arrayd")
_STATE_FAILED = common_pb2.EVENT_STATE_FAILED


class Event:
    """One command's completion, like a future: :meth:`wait` blocks until the command has run and raises its
    error (an :class:`~arrayd.ArraydError` of the daemon's code) if it failed. Pass events as ``wait_for=``
    to order later commands after them without waiting here."""

    __slots__ = ("id", "_state", "_value", "_waiter", "_callbacks", "_pieces", "device_time", "_batch", "_into",
                 "_stream", "_watched", "__weakref__")

    _PENDING, _SUCCEEDED, _FAILED = 0, 1, 2
    _lock = threading.Lock()  # guards the rare slow path (a waiter or a callback arriving while pending)

    def __init__(self, event_id: int, stream: "SessionStream | None" = None):
        self.id = event_id
        self._state = Event._PENDING
        self._value: Any = None
        self._waiter: threading.Event | None = None
        self._callbacks: list | None = None
        self._pieces: list[bytes] | None = None
        self._batch = 0
        self._into: memoryview | None = None  # a download's destination: its pieces are copied there as they come
        self._stream = stream  # the stream that completes it, while pending (set when it is submitted)
        self._watched = False  # counted in its stream's events the background reader completes
        #: seconds the command ran on its device (set when it succeeded; 0 when unknown)
        self.device_time = 0.0

    @classmethod
    def placeholder(cls, event_id: int) -> "Event":
        """The event of a command recorded into a graph, not run: later recorded commands may wait on it, and
        waiting on it here raises at once (it would never complete)."""
        e = cls(event_id)
        e._state = Event._FAILED
        e._value = RuntimeError(f"event {event_id}: a command recorded into a graph, not run (recorded commands run "
                                "when the graph is replayed: graph.replay() returns their events)")
        return e

    def wait(self, timeout: float | None = None) -> "Event":
        """Blocks until the command completed; raises its error if it failed."""
        if self._state == Event._PENDING:
            stream = self._stream
            if stream is not None and timeout is None:
                stream._wait(self)  # reads the stream itself while no other thread does
            else:
                with Event._lock:
                    if self._state == Event._PENDING and self._waiter is None:
                        self._waiter = threading.Event()
                    waiter = self._waiter
                # read again after the waiter is in place: a reader completing it without the lock (the success
                # path, SessionStream._complete) sets the state first and looks for a waiter after
                if waiter is not None and self._state == Event._PENDING:
                    if stream is not None:
                        stream._watch(self)
                    if not waiter.wait(timeout):
                        raise TimeoutError(f"event {self.id}: not complete within {timeout} s")
        if self._state == Event._FAILED:
            raise self._value
        return self

    def result(self, timeout: float | None = None) -> bytes | None:
        """A download's bytes (None for other commands), once complete."""
        self.wait(timeout)
        return self._value

    def done(self) -> bool:
        if self._state != Event._PENDING:
            return True
        stream = self._stream
        if stream is not None:
            stream._watch(self)  # so that polling sees it complete with nobody waiting
        return False

    def failed(self) -> bool:
        return self._state == Event._FAILED

    def exception(self) -> BaseException | None:
        return self._value if self._state == Event._FAILED else None

    def add_done_callback(self, fn: Callable[["Event"], None]) -> None:
        """Calls ``fn(event)`` once it completes: at once if it has, else on the thread that reads its completion
        (the background reader, or a thread waiting for another event of the session). ``fn`` must not wait for
        events of the same session."""
        with Event._lock:
            pending = self._state == Event._PENDING
            if pending:
                if self._callbacks is None:
                    self._callbacks = []
                self._callbacks.append(fn)
            stream = self._stream
        if not pending:
            fn(self)
        elif self._state != Event._PENDING:
            self._run_callbacks()  # completed meanwhile by a reader that may not have seen fn (see wait)
        elif stream is not None:
            stream._watch(self)

    def __await__(self):
        """``await event`` in a coroutine: waits without blocking the event loop (see :mod:`arrayd.aio`) and
        gives a download's bytes; raises the command's error if it failed."""
        from .aio import _as_future
        return _as_future(self).__await__()

    def __repr__(self) -> str:
        state = {Event._PENDING: "pending", Event._SUCCEEDED: "succeeded", Event._FAILED: "failed"}[self._state]
        return f"Event({self.id}, {state})"

    # -- completion, by the stream's reader
    # The state is written before the waiter and the callbacks are read, and they are put in place before the state
    # is read again (wait, add_done_callback): so one side sees the other, also where the success path writes the
    # state without the lock. The callbacks are taken under the lock by whichever side runs them: each runs once.
    def _finish(self, state: int, value: Any) -> None:
        with Event._lock:
            if self._state != Event._PENDING:
                return
            self._value = value
            self._state = state
            self._stream = None
        if self._waiter is not None or self._callbacks is not None:
            self._wake()

    def _wake(self) -> None:
        """(Once complete.) Wakes a thread waiting with a timeout and runs the callbacks."""
        waiter = self._waiter
        if waiter is not None:
            waiter.set()
        if self._callbacks is not None:
            self._run_callbacks()

    def _run_callbacks(self) -> None:
        with Event._lock:
            callbacks, self._callbacks = self._callbacks, None
        for fn in callbacks or ():
            try:
                fn(self)
            except Exception:  # a callback's failure is its own: the thread reading completions goes on
                _log.exception("arrayd: a done callback of event %d raised", self.id)

    def _fail(self, error: BaseException) -> None:
        self._finish(Event._FAILED, error)

    def _complete(self, c: "common_pb2.EventCompletion | _wire.Completion") -> bool:
        if c.state == _STATE_FAILED:
            self._fail(error(c.code, c.message))
            return True
        if self._into is not None:
            piece = c.data  # (a view of the response's bytes, or for a small response a copy of its field)
            self._into[c.data_offset:c.data_offset + len(piece)] = piece
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
            data = c.data
            data = (data if isinstance(data, bytes) else bytes(data)) or None
        dt = c.device_time  # (the generated class gives an empty Duration when it is absent, the decoder None)
        if dt is not None:
            self.device_time = dt.seconds + dt.nanos / 1e9
        self._finish(Event._SUCCEEDED, data)
        return True
