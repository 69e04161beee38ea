"""Events and ordering: pipelined launches, wait_for, streams, recorded graphs, merge buffers, deadlines and
cancellation, and a random program over two devices checked against NumPy."""
import threading
import time

import numpy as np
import pytest

import arrayd
import kernels as K


def test_a_loop_of_launches_is_pipelined_and_ordered(session):
    k = session.compile(K.add_scalar)["add_scalar"]
    x = session.array(np.zeros(1000, dtype=np.float32))
    events = [k(1000, x, 1.0, 1000) for _ in range(500)]
    events[-1].wait()
    assert all(e.done() for e in events)
    np.testing.assert_array_equal(x.numpy(), np.full(1000, 500, dtype=np.float32))
    assert events[-1].device_time >= 0


def test_wait_for_orders_across_devices_and_streams(session):
    k = session.compile(K.scale_into, K.add_scalar)
    s0, s1 = session.stream("cpu:0"), session.stream("cpu:1")
    x = session.array(np.arange(6, dtype=np.float32), device="cpu:0")
    y = session.empty(6, np.float32, device="cpu:1")
    first = session.launch(k["add_scalar"], 6, x, 10.0, 6, stream=s0)
    second = session.launch(k["scale_into"], 6, x, y, 2.0, 6, stream=s1, wait_for=[first])
    second.wait()
    np.testing.assert_array_equal(y.numpy(), (np.arange(6) + 10) * 2)
    s0.destroy()
    s1.destroy()


def test_a_recorded_graph_replays_with_new_buffers_and_scalars(session):
    k = session.compile(K.add_scalar, K.scale_into)
    x = session.array(np.ones(4, dtype=np.float32))
    y = session.empty(4, np.float32)
    with session.record() as rec:
        e = k["add_scalar"](4, x, 1.0, 4)
        k["scale_into"](4, x, y, 3.0, 4, wait_for=[e])
    g = rec.graph
    assert g.size == 2
    g.replay()[-1].wait()
    np.testing.assert_array_equal(y.numpy(), [6, 6, 6, 6])
    x2 = session.array(np.full(4, 10, dtype=np.float32))
    g.replay(rebind={x: x2}, scalars=[(1, 2, 0.5, "f32")])[-1].wait()
    np.testing.assert_array_equal(y.numpy(), [5.5] * 4)
    np.testing.assert_array_equal(x.numpy(), [2] * 4)
    g.destroy()


def test_waiting_inside_a_recording_raises_at_once(session):
    """Recorded commands do not run until a replay: a read, or a wait on a recorded command's event, inside the
    recording raises instead of waiting for ever; the recording itself goes on."""
    k = session.compile(K.add_scalar)["add_scalar"]
    x = session.array(np.ones(4, dtype=np.float32))
    with session.record() as rec:
        e = k(4, x, 1.0, 4)
        with pytest.raises(RuntimeError, match="recorded into a graph, not run"):
            e.wait()
        assert e.done() and e.failed()
        with pytest.raises(RuntimeError, match="inside a graph recording"):
            x.numpy()
        with pytest.raises(RuntimeError, match="recorded into a graph, not run"):
            x.write(np.zeros(4, dtype=np.float32)).wait()
        k(4, x, 1.0, 4, wait_for=[e])
    assert rec.graph.size == 3
    rec.graph.replay()[-1].wait()
    np.testing.assert_array_equal(x.numpy(), [1, 1, 1, 1])  # 1 + 1, then the recorded write of zeros, then + 1
    rec.graph.destroy()


def test_a_gradient_merges_through_a_streams_merge_buffer(session):
    acc = arrayd.kernel(_acc, name="acc")
    k = session.compile(acc)["acc"]
    g0 = session.array(np.arange(8, dtype=np.float32), device="cpu:0")
    g1 = session.array(np.full(8, 100, dtype=np.float32), device="cpu:1")
    st = session.stream("cpu:0")
    session.copy(g1, merge="copy", stream=st)
    session.launch(k, 8, arrayd.MERGE_BUFFER, g0, 8, stream=st).wait()
    np.testing.assert_array_equal(g0.numpy(), np.arange(8) + 100)


def _acc(k):
    g = k.buffer("g", "f32", "read", extent="n")
    total = k.buffer("total", "f32", "read_write", extent="n")
    n = k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        total[i] = total[i] + g[i]


def test_deadlines_and_cancellation(session):
    k = session.compile(K.add_scalar)["add_scalar"]
    x = session.array(np.zeros(4, dtype=np.float32))
    with pytest.raises(arrayd.DeadlineExceeded):
        k(4, x, 1.0, 4, deadline=-1.0).wait()
    blocker = session.launch(k, 4, x, 1.0, 4, deadline=-1.0)  # fails: what waits on it fails too
    waiting = session.launch(k, 4, x, 1.0, 4, wait_for=[blocker])
    with pytest.raises(arrayd.DeadlineExceeded, match="waited on event"):
        waiting.wait()
    with pytest.raises(arrayd.DeadlineExceeded):
        x.numpy()  # its last writer failed: reads fail until it is overwritten
    x.write(np.zeros(4, dtype=np.float32))
    np.testing.assert_array_equal(x.numpy(), [0, 0, 0, 0])
    assert session.cancel(blocker) == 0  # already finished: nothing to cancel


@arrayd.kernel
def _busy(k):
    """out[0] = a long chain of multiply-adds (a launch that takes a while on one work-item)."""
    out = k.buffer("out", "f32", "write", extent=1)
    steps = k.scalar("steps", "i64", min=0, max=1 << 24)
    acc = k.var("acc", 0.0)
    with k.loop("j", 0, steps):
        acc.set(acc * 0.999999 + 1.0)
    out[0] = acc


def test_a_waiting_command_can_be_cancelled(session):
    busy = session.compile(_busy)["_busy"]
    k = session.compile(K.add_scalar)["add_scalar"]
    out = session.empty(1, np.float32)
    x = session.array(np.zeros(4, dtype=np.float32))
    long = busy(1, out, 1 << 24, device="cpu:1")
    for _ in range(4):
        long = busy(1, out, 1 << 24, wait_for=[long], device="cpu:1")
    behind = k(4, x, 1.0, 4, wait_for=[long], device="cpu:1")
    assert session.cancel(behind) == 1
    with pytest.raises(arrayd.Cancelled):
        behind.wait()
    long.wait()
    with pytest.raises(arrayd.Cancelled, match="cancelled by the client"):
        x.numpy()  # the cancelled command was x's last writer: reads fail until x is written again


def test_destroying_right_after_queueing_comes_after_the_queued_commands(session):
    """A buffer's, a stream's and a graph's destroy reach the daemon after the commands queued before them (sent
    first on the session stream): without that, a destroy overtook the launch queued just before it (NOT_FOUND)."""
    k = session.compile(K.add_scalar)["add_scalar"]
    for _ in range(40):
        x = session.array(np.zeros(16, dtype=np.float32))
        out = session.empty(16, np.float32)
        launched = k(16, x, 1.0, 16)
        copied = session.copy(x, out, wait_for=[launched])
        x.destroy()
        copied.wait()
        np.testing.assert_array_equal(out.numpy(), np.ones(16))
        out.destroy()
    st = session.stream("cpu:1")
    y = session.array(np.zeros(4, dtype=np.float32), device="cpu:1")
    on_stream = [k(4, y, 1.0, 4, stream=st) for _ in range(3)]
    st.destroy()
    session.wait(*on_stream)
    np.testing.assert_array_equal(y.numpy(), [3] * 4)
    with session.record() as rec:
        k(4, y, 1.0, 4)
    replayed = rec.graph.replay()
    rec.graph.destroy()
    session.wait(*replayed)
    np.testing.assert_array_equal(y.numpy(), [4] * 4)


def test_a_cancel_right_after_queueing_finds_the_command(session):
    """cancel reaches the daemon after the commands queued before it: the command behind a long one is known there
    and cancelled (without that ordering the cancel overtook it, found nothing, and the command ran)."""
    busy = session.compile(_busy)["_busy"]
    k = session.compile(K.add_scalar)["add_scalar"]
    out = session.empty(1, np.float32, device="cpu:1")
    x = session.array(np.zeros(4, dtype=np.float32), device="cpu:1")
    for _ in range(5):
        x.write(np.zeros(4, dtype=np.float32))
        long = busy(1, out, 1 << 24, device="cpu:1")
        behind = k(4, x, 1.0, 4, wait_for=[long], device="cpu:1")
        assert session.cancel(behind) == 1
        with pytest.raises(arrayd.Cancelled):
            behind.wait()
        long.wait()


def test_threads_waiting_at_once_each_see_their_own_completion(session):
    """One thread at a time reads the stream; the others sleep until their event completes or the role is free."""
    k = session.compile(K.add_scalar)["add_scalar"]
    xs = [session.array(np.zeros(64, dtype=np.float32), device=f"cpu:{i % 2}") for i in range(8)]
    failures: list = []

    def work(i: int) -> None:
        try:
            for j in range(60):
                k(64, xs[i], 1.0, 64, device=f"cpu:{i % 2}").wait()
                if j % 20 == 19:
                    np.testing.assert_array_equal(xs[i].numpy(), np.full(64, j + 1, dtype=np.float32))
        except BaseException as e:  # noqa: BLE001 (reported below)
            failures.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a waiting thread never returned"
    assert not failures, failures


def test_events_complete_with_nobody_waiting_for_them(session):
    """Callbacks and polling see completions though no thread waits: the background reader reads for them."""
    busy = session.compile(_busy)["_busy"]
    out = session.empty(1, np.float32)
    called = threading.Event()
    seen: list = []
    e = busy(1, out, 1 << 16)
    e.add_done_callback(lambda ev: (seen.append(ev), called.set()))
    assert called.wait(60), "the callback never ran"
    assert seen == [e] and e.done() and not e.failed()
    polled = busy(1, out, 1 << 16)
    deadline = time.monotonic() + 60
    while not polled.done():
        assert time.monotonic() < deadline, "polling never saw the event complete"
        time.sleep(0.001)
    # a callback that raises is reported and leaves the stream working
    session.fill(out, 1.0).add_done_callback(lambda ev: 1 / 0)
    session.fill(out, 2.0).wait()
    np.testing.assert_array_equal(out.numpy(), [2.0])


def test_a_wait_with_a_timeout_returns_in_time_and_the_event_still_completes(session):
    busy = session.compile(_busy)["_busy"]
    out = session.empty(1, np.float32)
    long = busy(1, out, 1 << 24, device="cpu:1")
    for _ in range(19):  # well over the timeout on any CPU (2^24 dependent steps each)
        long = busy(1, out, 1 << 24, wait_for=[long], device="cpu:1")
    t0 = time.monotonic()
    with pytest.raises(TimeoutError, match="not complete within"):
        long.wait(timeout=0.05)
    assert time.monotonic() - t0 < 5
    long.wait()
    assert long.done() and not long.failed()


def test_a_large_write_keeps_its_place_among_queued_commands(session):
    """A write of several batch messages (built when it is called) goes out between the commands queued before and
    after it, and its bytes are those of the array when write() was called."""
    k = session.compile(K.add_scalar)["add_scalar"]
    n = 3 << 20  # 12 MiB of f32: twelve batch messages
    data = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    x = session.array(np.zeros(n, dtype=np.float32))
    for _ in range(3):
        before = k(n, x, 1.0, n)   # queued before the write: overwritten by it
        x.write(data)
        data_copy = data.copy()
        data[:] = -7               # changed after write() returned: not what was written
        after = k(n, x, 2.0, n)
        after.wait()
        assert before.done()
        np.testing.assert_array_equal(x.numpy(), data_copy + np.float32(2))
        data[:] = data_copy


def test_a_large_write_returns_while_the_daemon_waits_for_this_process_to_read(session):
    """The daemon reads no more of the stream while this process does not read what it sent. A write whose messages
    the request side builds as gRPC takes them waits for them to be built; behind downloads whose data nobody reads
    yet, that needs the background reader to read meanwhile, or the write would wait forever."""
    n = 16 << 20  # 64 MiB of f32: eight downloads of 8 MiB
    big = session.array(np.arange(n, dtype=np.float32))
    downloads = session.download(big)  # their data comes back with nobody reading it
    m = 4 << 20  # 16 MiB of f32: sixteen batch messages
    data = np.random.default_rng(7).standard_normal(m).astype(np.float32)
    y = session.array(np.zeros(m, dtype=np.float32))
    written: list = []
    thread = threading.Thread(target=lambda: written.append(y.write(data)), daemon=True)
    thread.start()
    thread.join(60)
    assert written, "write() did not return"
    written[0].wait()
    np.testing.assert_array_equal(y.numpy(), data)
    got = b"".join(e.result() for e in downloads)
    np.testing.assert_array_equal(np.frombuffer(got, dtype=np.float32), np.arange(n, dtype=np.float32))


def test_a_large_write_from_a_done_callback_does_not_wait_for_its_own_reader(session):
    """A done callback runs on the thread that reads the stream: a write there must not wait for anything that only
    that thread would read (it builds its messages itself and returns)."""
    n = 5 << 20  # 20 MiB of f32: twenty batch messages
    data = np.arange(n, dtype=np.float32)
    x = session.empty(4, np.float32)
    y = session.array(np.zeros(n, dtype=np.float32))
    written: list = []
    done = threading.Event()

    def write_when_filled(_event) -> None:
        written.append(y.write(data))
        done.set()

    session.fill(x, 1.0).add_done_callback(write_when_filled)
    assert done.wait(60), "the write inside the callback did not return"
    written[0].wait()
    np.testing.assert_array_equal(y.numpy(), data)


def test_a_write_of_several_batches_fails_as_a_whole_when_its_dependency_does(session):
    """Each part of a write waits for the part before it, so the event write() returns fails when its first batch
    could not run (here: it waits for an event the daemon refused), not only when its last batch could not."""
    x = session.empty(4, np.float32)
    refused = session.fill(x, 1.5, offset=9, count=0)
    with pytest.raises(arrayd.OutOfRange):
        refused.wait()
    n = 3 << 20  # 12 MiB of f32: twelve batch messages
    y = session.array(np.zeros(n, dtype=np.float32))
    with pytest.raises(arrayd.ArraydError):
        y.write(np.ones(n, dtype=np.float32), wait_for=[refused]).wait()
    np.testing.assert_array_equal(y.numpy(), 0)  # no part of it was written
    y.write(np.ones(n, dtype=np.float32)).wait()  # the stream carries on
    np.testing.assert_array_equal(y.numpy(), 1)


def test_a_rejected_batch_fails_its_events_with_the_right_error(session):
    x = session.empty(4, np.float32)
    with pytest.raises(arrayd.OutOfRange, match="fill"):
        session.fill(x, 1.5, offset=9, count=0).wait()  # count 0 = to the end, from past the end
    session.fill(x, 2.0).wait()  # the stream carries on
    np.testing.assert_array_equal(x.numpy(), [2, 2, 2, 2])


@pytest.mark.parametrize("seed", range(4))
def test_random_programs_over_two_devices_match_numpy(session, seed):
    rng = np.random.default_rng(seed)
    k = session.compile(K.add_scalar, K.scale_into, K.vadd)
    n = 257
    model = [rng.standard_normal(n).astype(np.float32) for _ in range(4)]
    bufs = [session.array(m, device=f"cpu:{i % 2}") for i, m in enumerate(model)]
    for _ in range(40):
        op = rng.integers(0, 5)
        a, b, c = rng.choice(4, 3, replace=False)
        dev = f"cpu:{rng.integers(0, 2)}"
        if op == 0:
            v = float(rng.integers(-3, 4))
            k["add_scalar"](n, bufs[a], v, n, device=dev)
            model[a] = model[a] + np.float32(v)
        elif op == 1:
            f = float(rng.integers(-2, 3))
            k["scale_into"](n, bufs[a], bufs[b], f, n, device=dev)
            model[b] = model[a] * np.float32(f)
        elif op == 2:
            k["vadd"](n, bufs[a], bufs[b], bufs[c], n, device=dev)
            model[c] = model[a] + model[b]
        elif op == 3:
            session.copy(bufs[a], bufs[b], device=dev)
            model[b] = model[a].copy()
        else:
            v = float(rng.integers(-5, 5))
            session.fill(bufs[a], v)
            model[a] = np.full(n, v, dtype=np.float32)
    for buf, m in zip(bufs, model):
        np.testing.assert_array_equal(buf.numpy(), m)


def test_a_kernel_reads_and_writes_byte_ranges_of_a_buffer(session):
    k = session.compile(K.vadd)["vadd"]
    align = session.devices()[0].base_alignment_bytes
    n = 64
    raw = session.array(np.zeros(3 * align + 12 * n, dtype=np.uint8))
    a = np.arange(n, dtype=np.float32)
    data = raw.numpy()
    data[align:align + 4 * n] = a.view(np.uint8)
    raw.write(data).wait()
    at = align + ((4 * n + align - 1) // align) * align
    k(n, raw.range(align, 4 * n), raw.range(align, 4 * n), raw.range(at, 4 * n), n).wait()
    np.testing.assert_array_equal(raw.numpy()[at:at + 4 * n].view(np.float32), 2 * a)
    with pytest.raises(arrayd.InvalidArgument, match="range.size_bytes"):
        k(n, raw.range(align, 4 * n - 2), raw.range(align, 4 * n), raw.range(at, 4 * n), n).wait()
    with pytest.raises(arrayd.OutOfRange):
        k(n, raw.range(align, 4 * n), raw.range(align, 4 * n), raw.range(at, 8 * n * 4), n).wait()
