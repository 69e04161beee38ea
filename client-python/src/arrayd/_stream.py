"""The session stream (ExecutionService.Execute): commands go out in batches from a queue, so a loop of
launches is pipelined (nothing waits for an answer before sending the next). Completions are read by the
thread that needs them: a thread waiting for an event reads the stream itself while no other thread does
(so a round trip costs no hand-off between threads), and a background reader takes over only for events
that nobody waits on that way (callbacks, polling with :meth:`Event.done`, waits with a timeout)."""
from __future__ import annotations

import collections
import itertools
import queue
import sys
import threading
import time
from typing import Callable, Iterator

import grpc

from . import _wire
from ._errors import ArraydError, error, from_rpc
from ._event import Event
from .v1 import execution_pb2

#: Whether this interpreter runs with the GIL (a free-threaded build may run without it): the hot paths that
#: rely on its ordering of one thread's steps against another's take a lock without it.
GIL = getattr(sys, "_is_gil_enabled", lambda: True)()

#: Commands sent in one batch at most (more queued ones go in the next).
MAX_BATCH = 1024
#: A batch of queued commands takes at most half of those not answered yet, but never fewer than this many.
SPLIT_MIN = 64
#: The largest completions message this stream takes: a download's data comes in pieces of about this size. Larger
#: messages cost this process more than they save: each is a fresh allocation, of pages the allocator returns to the
#: system when it is freed, so every message faults its pages in again.
ATTACH_MAX_RECEIVE = 2 << 20
#: Bytes of one batch message at most (a batch carrying inline uploads is cut before it grows past this): one inline
#: upload command and its fields. The daemon reads a message into one array, and one of 2 MiB or more takes heap
#: regions of its own there, which costs more than the extra messages.
MAX_BATCH_BYTES = (1 << 20) + (16 << 10)
#: A batch sent while at least :data:`COALESCE_IN_FLIGHT` other commands are in flight first waits up to
#: :data:`COALESCE_SECONDS` for more, until it has a quarter as many as are in flight or a thread waits for one of
#: its events (see :meth:`SessionStream._requests`).
COALESCE_IN_FLIGHT = 64
COALESCE_SECONDS = 1e-3
#: Queued by a thread that waits for an event not sent yet: a batch waiting for more goes at once.
_FLUSH = ("flush",)
#: A thread waiting for its messages to be built (:meth:`SessionStream.submit_parts`) that sees none built for this
#: long has the background reader read the stream meanwhile.
_STALL_SECONDS = 0.02
#: A response at least this large (a download's data) stays referenced until the next one has been read. Each is a
#: new allocation of up to ATTACH_MAX_RECEIVE bytes; freed before the next is allocated, it often leaves enough free
#: at the top of the allocator's heap for glibc to give those pages back to the system, and the next message faults
#: them in again (measured: half the page faults of a 256 MiB read, and 10-20% of its CPU time, went that way).
_KEEP_RAW_MIN = 256 << 10


class _Parts:
    """Batch messages :meth:`SessionStream.submit_parts` queued, built by the request side."""

    __slots__ = ("batches", "built", "done")

    def __init__(self, batches: list[tuple[list, list]]):
        self.batches = batches
        self.built = 0  # messages built so far
        self.done = threading.Event()  # set once the last one is built


class SessionStream:
    """One Execute call for a session. :meth:`submit` queues commands with their events; a request generator
    drains the queue into batches. The completions are read by one thread at a time, the *reader*: a thread
    waiting for an event (:meth:`_wait`) becomes it while no other thread is, reads until its event completes
    and hands over; threads that find it taken sleep until their event completes or it is free. A background
    thread reads only while events are *watched* (a callback, a wait with a timeout, polling) and nobody else
    reads, and when the stream closes. Messages are handled one at a time, in order, by whoever reads."""

    def __init__(self, channel: grpc.Channel, metadata: list[tuple[str, str]], session: str, linger_us: int = 0):
        self._linger_us = linger_us
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        #: signalled when the reader role is released, an event a sleeping thread waits for completes, a watch
        #: begins, or the stream ends
        self._changed = threading.Condition(self._lock)
        self._pending: dict[int, Event] = {}
        # batch id -> [its events, how many of them are not complete yet] (for a rejection; dropped when done)
        self._batches: dict[int, list] = {}
        self._batch_ids = itertools.count(1)
        self._closed = False
        self._failure: ArraydError | None = None
        self._session = session
        self._reading = False  # a thread is the reader
        self._reader = 0       # which thread was the reader last (threading.get_ident())
        self._sleepers = 0     # threads in _wait that sleep because another thread reads
        self._watched = 0      # pending events the background reader must complete (see Event._watched)
        self._last_raw: bytes | None = None  # the last large response read (see _KEEP_RAW_MIN)
        self._draining = 0     # threads waiting for their messages to be built that need the background reader
        self._ended = False    # the call ended: every pending event has failed
        self._background: threading.Thread | None = None
        self._gates: set[threading.Event] = set()  # barriers queued, not passed yet (see barrier)
        execute = channel.stream_stream("/arrayd.v1.ExecutionService/Execute",
                                        request_serializer=_wire.identity,  # requests are serialized here
                                        response_deserializer=_wire.identity)  # decoded in _handle
        self._call = execute(self._requests(), metadata=metadata)
        self._responses = iter(self._call)

    def submit(self, commands: list[bytes], events: list[Event]) -> None:
        """Queues serialized ``Command`` s without their event ids, and their events: the request side frames each
        as a batch field with its event's id (``_wire.framed_with_event``) when it builds the batch."""
        if self._register(events):
            self._queue.put((commands, events))

    def submit_command(self, event_id: int, body: bytes) -> Event:
        """Queues one serialized ``Command`` without its event (``body``, framed with ``event_id`` by the request side,
        as :meth:`submit`'s are) and returns its new event: a launch's path, without the lock :meth:`submit` takes.
        The event is tracked first and the stream's state read after, so that a stream ending meanwhile either finds
        it tracked (and fails it) or is seen ended here (see :meth:`_end`)."""
        event = Event(event_id, self)
        self._pending[event_id] = event
        if self._failure is not None or self._closed:
            with self._lock:
                self._forget((event,))
            self._register([event])  # fails it, as for any command submitted once the stream is closed or broken
            return event
        self._queue.put((body, event))
        return event

    def submit_batch(self, events: list[Event], build: Callable[..., bytes]) -> None:
        """Queues a whole batch message, ``build(batch_id=…)``, made now (its commands carry ``events``' ids):
        it goes out as it is, in its place among the queued commands."""
        if self._register(events):
            self._queue.put(("batch", build(batch_id=self._track(events))))

    def submit_parts(self, batches: list[tuple[list[Event], list]]) -> None:
        """Queues batch messages given as parts (``(events, commands)`` for ``_wire.batch_from_parts``: the commands
        view the caller's bytes), one after another in their place among the queued commands, and returns once every
        one of them is built: the caller may change its bytes then. The request side builds each as gRPC takes the one
        before it, so the bytes are copied once, on the thread that sends them, and only a message or two exist at a
        time whatever the total. On the thread reading completions (a done callback), and for a single message, they
        are built here instead, all before this returns."""
        if not self._register([e for events, _ in batches for e in events]):
            return
        with self._lock:
            here = self._reads_here()
        if here or len(batches) == 1:
            for events, commands in batches:
                self._queue.put(("batch", _wire.batch_from_parts(self._track(events), commands)))
            return
        job = _Parts(batches)
        self._queue.put(("parts", job))
        self._await_built(job)

    def _await_built(self, job: "_Parts") -> None:
        """Returns once ``job``'s messages are built, or the call ended (then its events fail with the stream's
        end). If none is built for a while, the daemon may be waiting for this process to read what it sent (it
        reads no more of the stream meanwhile) while no thread reads: the background reader then reads until the
        job is built."""
        built = -1
        draining = False
        try:
            while not job.done.wait(_STALL_SECONDS):
                if self._call.done():
                    return
                if job.built == built and not draining:
                    draining = True
                    with self._lock:
                        self._draining += 1
                        self._start_background()
                        self._changed.notify_all()
                built = job.built
        finally:
            if draining:
                with self._lock:
                    self._draining -= 1

    def _build(self, job: "_Parts") -> Iterator[bytes]:
        """(The request side.) ``job``'s messages, built one at a time as gRPC takes them."""
        last = len(job.batches) - 1
        for i, (events, commands) in enumerate(job.batches):
            message = _wire.batch_from_parts(self._track(events), commands)
            job.built = i + 1
            if i == last:
                job.batches = ()  # (the caller's bytes are not referenced once all are built)
                job.done.set()
            yield message

    def replay(self, request, events: list[Event]) -> None:
        """Queues a graph replay (its events, from ``first_event`` on, complete like commands)."""
        if self._register(events):
            self._queue.put(("replay", request, events))

    def barrier(self) -> None:
        """Returns once every command queued before has gone to gRPC's transport: a unary call made then reaches
        the daemon after them (the daemon reads a connection's messages in order, on one thread). At once when
        the stream is closed or broken, and on the thread reading completions (a done callback): the stream may
        wait for the daemon, and the daemon for that thread to read."""
        gate = threading.Event()
        with self._lock:
            if self._closed or self._failure is not None or self._reads_here():
                return
            self._gates.add(gate)
            self._queue.put(("barrier", gate))  # (under the lock: never behind the None a close puts)
        while not gate.wait(0.1):
            if self._call.done():  # the call ended (and nobody read its end yet): nothing will pass the gate
                return

    def _reads_here(self) -> bool:
        """(Under the lock.) Whether the calling thread is the one reading completions now."""
        return self._reading and self._reader == threading.get_ident()

    def _pass(self, gate: threading.Event) -> None:
        with self._lock:
            self._gates.discard(gate)
        gate.set()

    def _register(self, events: list[Event]) -> bool:
        """Tracks the events; false (and fails them) when the stream is closed or broken."""
        with self._lock:
            failure = self._failure
            if failure is None and self._closed:
                failure = error(grpc.StatusCode.FAILED_PRECONDITION, f"session {self._session[:8]}…: closed")
            if failure is None:
                for e in events:
                    self._pending[e.id] = e
                    e._stream = self
                return True
        for e in events:
            e._fail(failure)
        return False

    def close(self, timeout: float | None = 30) -> None:
        """Half-closes: the daemon reports every accepted command, then ends the call (read by the background
        reader; waited for up to ``timeout`` seconds)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._start_background()
            self._changed.notify_all()
            self._queue.put(None)
        with self._lock:
            self._changed.wait_for(lambda: self._ended, timeout)

    def cancel(self) -> None:
        self._call.cancel()

    # -- who reads
    def _wait(self, event: Event) -> None:
        """Returns once ``event`` completed, reading the stream while no other thread does."""
        self._flush_for(event)
        while event._state == Event._PENDING:
            with self._lock:
                while event._state == Event._PENDING and self._reading and not self._ended:
                    self._sleepers += 1
                    try:
                        self._changed.wait()
                    finally:
                        self._sleepers -= 1
                if event._state != Event._PENDING or self._ended:
                    return
                self._reading = True
                self._reader = threading.get_ident()
            self._read_one()

    def _flush_for(self, event: Event) -> None:
        """Someone waits for ``event``: if it is not sent yet, its batch goes without waiting for more."""
        if event._batch == 0 and event._state == Event._PENDING:
            self._queue.put(_FLUSH)

    def _watch(self, event: Event) -> None:
        """Makes the background reader complete ``event`` when nobody else reads (once per event)."""
        with self._lock:
            if event._watched or self._pending.get(event.id) is not event:
                return  # watched already, or completed meanwhile
            self._flush_for(event)  # (once: polling calls this again and again)
            event._watched = True
            self._watched += 1
            self._start_background()
            self._changed.notify_all()

    def _start_background(self) -> None:
        """(Under the lock.) Starts the background reader if it has not started."""
        if self._background is None:
            self._background = threading.Thread(target=self._read_in_background, daemon=True,
                                                 name=f"arrayd-stream-{self._session[:8]}")
            self._background.start()

    def _read_in_background(self) -> None:
        while True:
            with self._lock:
                self._changed.wait_for(lambda: self._ended or (not self._reading and (
                    self._watched or self._draining or self._closed)))
                if self._ended:
                    return
                self._reading = True
                self._reader = threading.get_ident()
            self._read_one()

    # -- the request side: a generator gRPC pulls from
    def _requests(self) -> Iterator[bytes]:
        yield execution_pb2.ExecuteRequest(attach=execution_pb2.Attach(
            session=self._session, max_receive_message_bytes=ATTACH_MAX_RECEIVE,
            completion_linger_us=self._linger_us, packed_successes=True)).SerializeToString()
        carry: collections.deque = collections.deque()  # (command, event) pairs taken from the queue, not sent yet
        held = None  # a replay, a whole batch or a barrier taken from the queue: right after the carried commands
        closing = False
        while True:
            if not carry:
                if held is not None:
                    item, held = held, None
                else:
                    if closing:
                        return
                    item = self._queue.get()
                    if item is None:
                        return
                    if item is _FLUSH:
                        continue  # (nothing waits to be sent)
                kind = item[0]
                if kind.__class__ is bytes:  # one command (submit_command)
                    carry.append(item)
                elif kind == "replay":
                    _, request, events = item
                    request.batch_id = self._track(events)
                    yield execution_pb2.ExecuteRequest(replay=request).SerializeToString()
                    continue
                elif kind == "batch":
                    yield item[1]
                    continue
                elif kind == "parts":
                    yield from self._build(item[1])
                    continue
                elif kind == "barrier":  # (everything yielded before has been sent: gRPC asks for more only then)
                    self._pass(item[1])
                    continue
                else:
                    carry.extend(zip(kind, item[1]))
            # whatever else is queued goes in the same batch, up to a count and a size (in order: a replay, a
            # whole batch or a barrier ends it). A small batch behind many commands in flight first waits a moment
            # for more: its commands queue behind those on the daemon anyway, and without the wait a full window
            # settles into lock-step (each completion read lets one launch out, each launch goes alone, and its
            # completion comes back alone), a message each way per command
            coalesce_until = None
            get_nowait, add = self._queue.get_nowait, carry.append
            count = len(carry)
            # at most half of the commands not answered yet (down to SPLIT_MIN): a full window then goes out in two
            # batches or more, and the daemon answers the first while the program queues more behind the second
            # (in one batch, the program, the daemon and the answer would take turns)
            limit = min(MAX_BATCH, max(SPLIT_MIN, len(self._pending) // 2))
            while count < limit and not closing and held is None:
                try:
                    nxt = get_nowait()
                except queue.Empty:
                    if (in_flight := len(self._pending) - count) < COALESCE_IN_FLIGHT or count >= in_flight // 4:
                        break
                    if coalesce_until is None:
                        coalesce_until = time.monotonic() + COALESCE_SECONDS
                    left = coalesce_until - time.monotonic()
                    if left <= 0:
                        break
                    try:
                        nxt = self._queue.get(timeout=left)
                    except queue.Empty:
                        break
                if nxt is None:
                    closing = True
                elif nxt[0].__class__ is bytes:  # one command: the usual case
                    add(nxt)
                    count += 1
                elif nxt is _FLUSH:
                    break
                elif nxt[0] in ("replay", "batch", "parts", "barrier"):
                    held = nxt
                else:
                    carry.extend(zip(nxt[0], nxt[1]))
                    count = len(carry)
            # each command framed with its event's id here, on this thread, not the program's: in a loop of
            # launches the program's thread is the busier one (alternating in one process: 6% more launches a second)
            frame = _wire.framed_with_event
            commands = [frame(e.id, c) for c, e in (carry if count <= MAX_BATCH else
                                                    itertools.islice(carry, MAX_BATCH))]
            if count <= MAX_BATCH and sum(map(len, commands)) <= MAX_BATCH_BYTES:
                events = [e for _, e in carry]  # all of them fit: the usual case
                carry.clear()
            else:  # the leading commands that fit (at least one); the rest stay carried for the next batch
                n, size = 0, 0
                for c in commands:
                    size += len(c)
                    if size > MAX_BATCH_BYTES and n:
                        break
                    n += 1
                del commands[n:]
                take = carry.popleft
                events = [take()[1] for _ in range(n)]
            yield _wire.batch_request(self._track(events), commands)

    def _track(self, events: list[Event]) -> int:
        """Numbers a batch and tracks its events by it. No lock: only the reader's completions of the batch's events
        (which come after it is sent) change the entry, and ``_batch`` is read only to see whether it was sent."""
        batch_id = next(self._batch_ids)
        self._batches[batch_id] = [events, len(events)]
        for e in events:
            e._batch = batch_id
        return batch_id

    # -- the response side
    def _read_one(self) -> None:
        """(The reader, only.) Reads and handles one message, or the end of the call; then gives the role up."""
        try:
            response = next(self._responses)
        except StopIteration:
            self._end(None)
            return
        except grpc.RpcError as e:
            self._end(from_rpc(e))
            return
        except BaseException:
            with self._lock:
                self._reading = False
                self._changed.notify_all()
            raise
        try:
            self._handle(response)
        finally:
            if len(response) >= _KEEP_RAW_MIN:
                self._last_raw = response
            with self._lock:
                self._reading = False
                if self._sleepers or (self._background is not None and (
                        self._watched or self._draining or self._closed)):
                    self._changed.notify_all()

    def _handle(self, raw: bytes) -> None:
        """One ExecuteResponse: a large one (a download's data) decoded by :func:`_wire.completions`, its data
        sliced out of ``raw`` and copied once, into its destination; the others by the generated class."""
        decoded = _wire.completions(raw) if len(raw) >= _wire.DECODE_MIN_BYTES else None
        if decoded is not None:
            self._complete(decoded)
            return
        response = execution_pb2.ExecuteResponse.FromString(raw)
        kind = response.WhichOneof("msg")
        if kind == "completions":
            self._complete(response.completions)
        elif kind == "rejected":
            with self._lock:
                events = self._batches.pop(response.rejected.batch_id, [[], 0])[0]
                self._forget(events)
            rejection = error(response.rejected.code, response.rejected.message)
            for e in events:
                if e._state == Event._PENDING:
                    e._fail(rejection)

    def _complete(self, completions) -> None:
        """One ``Completions`` message (the generated class's, or :class:`_wire.Completions`)."""
        pending = self._pending
        done = []
        for c in completions.completions:
            event = pending.get(c.event)  # (a dict read is atomic; entries are only added and removed under the lock)
            if event is not None and event._complete(c):
                done.append(event)
        # commands that succeeded with no data (Attach.packed_successes): the common case, kept short. Only the
        # reader completes events, so the success is written without the lock (see Event._finish)
        succeeded, waiting = Event._SUCCEEDED, Event._PENDING
        get, add = pending.get, done.append
        if GIL:
            for event_id, nanos in zip(completions.succeeded, completions.succeeded_device_nanos):
                event = get(event_id)
                if event is None:
                    continue
                if event._state == waiting:
                    event.device_time = nanos / 1e9
                    event._state = succeeded
                    event._stream = None
                    if event._waiter is not None or event._callbacks is not None:
                        event._wake()
                add(event)
        else:  # (without the GIL the ordering above is not promised: the lock)
            for event_id, nanos in zip(completions.succeeded, completions.succeeded_device_nanos):
                event = get(event_id)
                if event is not None:
                    event.device_time = nanos / 1e9
                    event._finish(succeeded, None)
                    add(event)
        if not done:
            return
        # once per message, under the lock: forgotten after they completed (as a thread that sees one done expects;
        # _forget's loop, merged into this one), and counted off their batches, a run of one batch at once
        with self._lock:
            pop, watched = pending.pop, 0
            batch_id, count = 0, 0
            for event in done:
                if pop(event.id, None) is event and event._watched:
                    watched += 1
                if event._batch != batch_id:
                    if count:
                        self._count_off(batch_id, count)
                    batch_id, count = event._batch, 0
                count += 1
            self._count_off(batch_id, count)
            self._watched -= watched

    def _count_off(self, batch_id: int, count: int) -> None:
        """(Under the lock.) ``count`` events of batch ``batch_id`` completed; its entry goes with its last."""
        batch = self._batches.get(batch_id)
        if batch is not None:
            batch[1] -= count
            if batch[1] <= 0:
                del self._batches[batch_id]

    def _forget(self, events) -> None:
        """(Under the lock.) Stops tracking completed events."""
        pop = self._pending.pop
        for event in events:
            if pop(event.id, None) is event and event._watched:
                self._watched -= 1

    def _end(self, failure: ArraydError | None) -> None:
        """The call ended (``failure`` None: ended by the daemon after a close): fails what is pending, then
        gives the reader role up for good."""
        with self._lock:
            if failure is None:
                failure = error(grpc.StatusCode.UNAVAILABLE, f"session {self._session[:8]}…: its stream ended")
            self._failure = failure  # from now on _register fails new events at once
            gates, self._gates = self._gates, set()
            pending = list(self._pending.values())
            self._pending.clear()
            self._batches.clear()
            self._watched = 0
        for e in pending:
            e._fail(failure)  # before _ended: a thread that sees _ended finds its event failed
        for gate in gates:
            gate.set()  # (its call goes on, and meets the daemon's answer for a session whose stream ended)
        with self._lock:
            self._ended = True
            self._reading = False
            self._changed.notify_all()
