"""How the session stream's request generator groups queued commands into batches (no daemon needed: a fake channel
hands the generator to the test, which pulls batches from it as gRPC would)."""
import sys
import threading

import pytest

from arrayd import ArraydError, _stream
from arrayd._event import Event
from arrayd._stream import SessionStream
from arrayd.v1 import execution_pb2

#: Longer than any test waits: a batch that coalesces never goes out by the timer here.
NEVER = 60.0


class _FakeChannel:
    """Keeps the request generator; the response side blocks until ``end`` is set, then ends."""

    def __init__(self):
        self.requests = None
        self.end = threading.Event()

    def stream_stream(self, *args, **kwargs):
        def call(requests, metadata=None):
            self.requests = requests
            return self._responses()
        return call

    def _responses(self):
        self.end.wait()
        return
        yield  # (a generator)


class _Pull:
    """Pulls the generator's next message on a thread of its own (it blocks while a batch coalesces)."""

    def __init__(self, requests):
        self.message = None
        self._thread = threading.Thread(target=self._run, args=(requests,), daemon=True)
        self._thread.start()

    def _run(self, requests):
        self.message = next(requests)

    def done_within(self, seconds: float) -> bool:
        self._thread.join(seconds)
        return not self._thread.is_alive()

    def events(self) -> list[int]:
        batch = execution_pb2.ExecuteRequest.FromString(self.message).batch
        return [c.event for c in batch.commands]


@pytest.fixture
def stream(monkeypatch):
    monkeypatch.setattr(_stream, "COALESCE_SECONDS", NEVER)
    channel = _FakeChannel()
    s = SessionStream(channel, [], "batching-test-session")
    assert execution_pb2.ExecuteRequest.FromString(next(channel.requests)).HasField("attach")
    yield s, channel
    channel.end.set()


def _submit(s: SessionStream, first: int, count: int) -> list[Event]:
    events = [Event(i) for i in range(first, first + count)]
    s.submit([execution_pb2.Command(stream=7).SerializeToString() for _ in events], events)
    return events


def _in_flight(s: SessionStream, count: int) -> None:
    """Registers ``count`` events as sent and not completed (ids from 10,000)."""
    events = [Event(i) for i in range(10_000, 10_000 + count)]
    s._register(events)
    for e in events:
        e._batch = 1


def _wait_quietly(event: Event) -> None:
    try:
        event.wait()
    except ArraydError:
        pass  # the stream ended with the test


def test_a_batch_goes_at_once_when_few_commands_are_in_flight(stream):
    s, channel = stream
    _in_flight(s, _stream.COALESCE_IN_FLIGHT - 2)
    _submit(s, 1, 1)
    pull = _Pull(channel.requests)
    assert pull.done_within(10), "a lone command with few in flight waited for more"
    assert pull.events() == [1]


def test_a_batch_behind_many_in_flight_waits_for_a_quarter_of_them(stream):
    s, channel = stream
    _in_flight(s, 100)
    _submit(s, 1, 1)
    pull = _Pull(channel.requests)
    assert not pull.done_within(0.2), "a lone command behind 100 in flight went out alone"
    _submit(s, 2, 23)
    assert not pull.done_within(0.2), "went out with 24 commands, fewer than a quarter of the 100 in flight"
    _submit(s, 25, 1)
    assert pull.done_within(10)
    assert pull.events() == list(range(1, 26))


def test_waiting_for_an_unsent_event_sends_its_batch_at_once(stream):
    s, channel = stream
    _in_flight(s, 100)
    (event,) = _submit(s, 1, 1)
    pull = _Pull(channel.requests)
    assert not pull.done_within(0.2)
    # the waiter reads the stream (the fake one blocks until the test ends it, which fails the event)
    threading.Thread(target=_wait_quietly, args=(event,), daemon=True).start()
    assert pull.done_within(10), "a command someone waits for was held back"
    assert pull.events() == [1]


@pytest.mark.parametrize("watch", ["callback", "poll"])
def test_watching_an_unsent_event_sends_its_batch_at_once(stream, watch):
    s, channel = stream
    _in_flight(s, 100)
    (event,) = _submit(s, 1, 1)
    pull = _Pull(channel.requests)
    assert not pull.done_within(0.2)
    if watch == "callback":
        event.add_done_callback(lambda e: None)
    else:
        assert not event.done()
    assert pull.done_within(10), f"a command watched by {watch} was held back"
    assert pull.events() == [1]


def _submit_one(s: SessionStream, event_id: int) -> Event:
    return s.submit_command(event_id, execution_pb2.Command(stream=5).SerializeToString())


def test_commands_queued_one_at_a_time_and_in_lists_go_out_in_order(stream):
    s, channel = stream
    _submit_one(s, 1)
    _submit(s, 2, 2)
    _submit_one(s, 4)
    pull = _Pull(channel.requests)
    assert pull.done_within(10)
    assert pull.events() == [1, 2, 3, 4]
    assert all(e._batch != 0 for e in s._pending.values())


def test_commands_queued_together_go_in_batches_of_at_most_half_of_those_unanswered(stream):
    s, channel = stream
    for i in range(1, 41):
        _submit_one(s, i)
    pull = _Pull(channel.requests)
    assert pull.done_within(10)
    assert pull.events() == list(range(1, 41)), "fewer than SPLIT_MIN: one batch"
    for i in range(41, 301):  # 300 unanswered now
        _submit_one(s, i)
    first = _Pull(channel.requests)
    assert first.done_within(10)
    second = _Pull(channel.requests)
    assert second.done_within(10)
    assert first.events() == list(range(41, 191)) and second.events() == list(range(191, 301))


def test_a_batch_is_cut_at_its_byte_limit_and_at_its_command_limit_the_rest_going_in_the_next(stream):
    s, channel = stream
    big = execution_pb2.Command(upload=execution_pb2.Upload(buffer=1, data=b"x" * (600 << 10))).SerializeToString()
    events = [Event(i) for i in (1, 2, 3)]
    s.submit([big] * 3, events)  # two of them pass MAX_BATCH_BYTES: one a batch
    pulls = []
    for _ in range(3):
        pulls.append(_Pull(channel.requests))
        assert pulls[-1].done_within(10)
    assert [p.events() for p in pulls] == [[1], [2], [3]]
    many = [Event(i) for i in range(4, 4 + _stream.MAX_BATCH + 476)]
    s.submit([execution_pb2.Command(stream=7).SerializeToString()] * len(many), many)  # one list: carried at once
    first = _Pull(channel.requests)
    assert first.done_within(10)
    second = _Pull(channel.requests)
    assert second.done_within(10)
    assert first.events() == [e.id for e in many[:_stream.MAX_BATCH]]
    assert second.events() == [e.id for e in many[_stream.MAX_BATCH:]]


def test_a_command_queued_alone_after_a_close_fails_at_once(stream):
    s, channel = stream
    s.close(timeout=0)  # (the fake call ends only with the test: the close does not wait for it)
    event = _submit_one(s, 1)
    with pytest.raises(ArraydError, match="closed") as raised:
        event.wait(10)
    assert raised.value.code.name == "FAILED_PRECONDITION"
    assert 1 not in s._pending


def test_a_command_queued_alone_after_the_stream_ended_fails_at_once(stream):
    s, channel = stream
    (in_flight,) = _submit(s, 1, 1)
    channel.end.set()  # the call ends: what is pending fails
    _wait_quietly(in_flight)
    assert in_flight.failed()
    event = _submit_one(s, 2)
    with pytest.raises(ArraydError, match="stream ended") as raised:
        event.wait(10)
    assert raised.value.code.name == "UNAVAILABLE"
    assert 2 not in s._pending


@pytest.mark.parametrize("gil", [True, False])
def test_callbacks_and_timed_waits_racing_the_reader_see_every_completion_once(stream, monkeypatch, gil):
    """The reader writes a success without the lock (see Event._finish; with the lock where the interpreter has no
    GIL): a callback added or a timed wait begun while it does is run once, and woken, whichever comes first.
    Thread switches are forced often here, so the registrations land between the reader's steps."""
    monkeypatch.setattr(_stream, "GIL", gil)
    s, _ = stream
    n, per_message = 4000, 40
    events = [Event(i) for i in range(1, n + 1)]
    s._register(events)
    for e in events:
        e._batch = 1
    calls = [0] * (n + 1)
    stuck = []

    def add_callbacks():
        for e in events:
            e.add_done_callback(lambda ev: calls.__setitem__(ev.id, calls[ev.id] + 1))

    def wait_with_timeouts():
        for e in events[::3]:
            try:
                e.wait(timeout=30)
            except TimeoutError:
                stuck.append(e.id)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=add_callbacks), threading.Thread(target=wait_with_timeouts)]
        for t in threads:
            t.start()
        for first in range(1, n + 1, per_message):
            ids = list(range(first, first + per_message))
            s._complete(execution_pb2.Completions(succeeded=ids, succeeded_device_nanos=[1000] * per_message))
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(interval)
    assert not any(t.is_alive() for t in threads)
    assert stuck == []
    assert calls[1:] == [1] * n, f"callbacks run other than once: {[i for i in range(1, n + 1) if calls[i] != 1][:10]}"
    assert all(e._state == Event._SUCCEEDED and e.device_time == 1e-6 for e in events)
    assert s._pending == {} and s._batches == {} and s._watched == 0


class _CompletedOnRead:
    """A pending state that, read the ``nth`` time, has the reader complete its event right then: what happens when a
    thread switch falls between a registration's reading the state and its putting a waiter or callback in place."""

    def __init__(self, s: SessionStream, event: Event, nth: int):
        self._s, self._event, self._reads, self._nth = s, event, 0, nth

    def __eq__(self, other):
        self._reads += 1
        if self._reads == self._nth:
            self._s._complete(execution_pb2.Completions(succeeded=[self._event.id], succeeded_device_nanos=[5]))
        return other == Event._PENDING

    __hash__ = None


@pytest.mark.parametrize("registration", ["callback", "timed wait"])
def test_a_registration_that_read_the_state_just_before_the_reader_wrote_it_still_sees_the_completion(
        stream, registration):
    s, _ = stream
    (event,) = _submit(s, 1, 1)
    event._batch = 1
    # the read under the lock: add_done_callback's first, a timed wait's second (after its check that it is pending)
    event._state = _CompletedOnRead(s, event, 1 if registration == "callback" else 2)
    if registration == "callback":
        seen = []
        event.add_done_callback(seen.append)
        assert seen == [event], "the callback was lost"
    else:
        event.wait(timeout=2)  # (raised TimeoutError when it waited for a waiter the reader did not see)
    assert event._state == Event._SUCCEEDED and event.device_time == 5e-9
