"""Connecting, devices, arrays of every dtype in and out, large arrays, errors for bad buffers."""
import threading

import numpy as np
import pytest

import arrayd


def test_devices_are_listed(daemon):
    with arrayd.connect(daemon.target) as client:
        devices = client.devices()
    assert [d.id for d in devices] == ["cpu:0", "cpu:1"]
    assert devices[0].backend == "cpu" and devices[0].unified_memory
    assert "f32" in devices[0].dtypes and "bf16" in devices[0].dtypes
    assert all(d.ring_transfers for d in devices)  # cpu devices copy host memory themselves


DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.float16]


@pytest.mark.parametrize("dtype", DTYPES + ["bf16"])
def test_every_dtype_goes_in_and_out_with_its_shape(target, dtype):
    rng = np.random.default_rng(7)
    if dtype == "bf16":
        import ml_dtypes
        data = rng.standard_normal((3, 5)).astype(ml_dtypes.bfloat16)
    elif np.issubdtype(dtype, np.integer):
        data = rng.integers(0, 100, (3, 5)).astype(dtype)
    else:
        data = rng.standard_normal((3, 5)).astype(dtype)
    with arrayd.connect(target) as client, client.session() as s:
        buf = s.array(data)
        assert buf.shape == (3, 5)
        out = buf.numpy()
    assert out.dtype == data.dtype and out.shape == data.shape
    np.testing.assert_array_equal(out, data)


def test_large_arrays_are_chunked_both_ways(target):
    data = np.arange(10 * 1024 * 1024, dtype=np.float32)  # 40 MiB: several commands / staging halves
    with arrayd.connect(target) as client, client.session() as s:
        buf = s.array(data)
        np.testing.assert_array_equal(buf.numpy(), data)
        buf.write(data[::-1].copy())
        np.testing.assert_array_equal(buf.numpy(), data[::-1])


def test_reads_from_two_sessions_at_once_each_get_their_own_bytes(daemon, monkeypatch):
    """Over TCP the daemon copies a download into one of a few arrays it keeps, and takes it again for the next
    download once the bytes are sent. Two sessions each read 72 MiB (nine downloads: more than it keeps) twice
    at once, with the whole read outstanding at once and with the usual window: each gets exactly its own bytes."""
    from arrayd import _session
    n = 9 * _session.DOWNLOAD_CHUNK
    failures: list = []

    def reads(seed: int) -> None:
        try:
            data = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
            with arrayd.connect(daemon.target) as client, client.session() as s:
                buf = s.array(data)
                out = np.zeros(n, np.uint8)
                for _ in range(2):
                    np.testing.assert_array_equal(buf.numpy(), data)
                    buf.numpy(out=out)
                    np.testing.assert_array_equal(out, data)
        except BaseException as e:  # reported by the test's thread
            failures.append(e)

    for window in (9, _session.DOWNLOAD_WINDOW):
        monkeypatch.setattr(_session, "DOWNLOAD_WINDOW", window)
        threads = [threading.Thread(target=reads, args=(seed,)) for seed in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not failures, failures[0]


def test_downloads_past_the_daemons_transfer_memory_are_refused_and_reads_go_on():
    """A batch of downloads that would hold more of the daemon's heap than its transfer-memory is refused
    (RESOURCE_EXHAUSTED) instead of growing the heap until the daemon ends. Reads larger than that memory still work:
    the daemon reads a stream's next downloads only as the earlier ones' data is sent."""
    from conftest import Daemon
    from arrayd.v1 import execution_pb2
    d = Daemon("--transfer-memory", "48MiB")
    try:
        with arrayd.connect(d.target) as client, client.session() as s:
            data = np.random.default_rng(4).integers(0, 256, 128 << 20, dtype=np.uint8)
            buf = s.array(data)
            np.testing.assert_array_equal(buf.numpy(), data)
            greedy = s.submit([execution_pb2.Command(download=execution_pb2.Download(
                buffer=buf.id, offset_bytes=i << 23, size_bytes=8 << 20)) for i in range(16)])  # 128 MiB, one batch
            with pytest.raises(arrayd.ResourceExhausted, match="transfer-memory of 50331648 bytes"):
                greedy[0].wait()
            assert all(e.failed() for e in greedy)
            out = np.zeros_like(data)
            buf.numpy(out=out)
            np.testing.assert_array_equal(out, data)
    finally:
        d.stop()


def test_numpy_reads_into_an_existing_array(target):
    data = np.arange(10 * 1024 * 1024, dtype=np.float32).reshape(1024, -1)  # 40 MiB: staging halves on unix://
    with arrayd.connect(target) as client, client.session() as s:
        buf = s.array(data)
        out = np.full_like(data, -1)
        assert buf.numpy(out=out) is out
        np.testing.assert_array_equal(out, data)
        buf.write(data * 2)
        assert buf.numpy(out=out) is out
        np.testing.assert_array_equal(out, data * 2)
        small = s.array(np.arange(6, dtype=np.int32).reshape(2, 3))
        with pytest.raises(ValueError, match=r"out: float32\[2, 3\] \(expected: int32\[2, 3\]"):
            small.numpy(out=np.zeros((2, 3), np.float32))
        with pytest.raises(ValueError, match=r"out: int32\[3, 2\]"):
            small.numpy(out=np.zeros((3, 2), np.int32))
        with pytest.raises(ValueError, match="non-contiguous"):
            small.numpy(out=np.zeros((2, 6), np.int32)[:, ::2])
        readonly = np.zeros((2, 3), np.int32)
        readonly.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            small.numpy(out=readonly)
        with pytest.raises(TypeError, match="out: list"):
            small.numpy(out=[0] * 6)
        into = np.zeros((2, 3), np.int32)
        small.numpy(out=into)
        np.testing.assert_array_equal(into, [[0, 1, 2], [3, 4, 5]])


def test_fill_copy_and_describe(session):
    a = session.array(np.zeros(8, dtype=np.float32), device="cpu:0")
    session.fill(a, 2.5, offset=2, count=3)
    b = session.empty(8, np.float32, device="cpu:1")
    session.copy(a, b)
    np.testing.assert_array_equal(b.numpy(), [0, 0, 2.5, 2.5, 2.5, 0, 0, 0])
    assert session.describe(b)["cpu:1"] in ("MODIFIED", "SHARED")


def test_bad_buffers_raise_the_daemons_error(session):
    with pytest.raises(arrayd.InvalidArgument, match=r"dims\[1\]: 0 \(expected: > 0\)"):
        session.empty((4, 0), np.float32)
    with pytest.raises(arrayd.NotFound):
        session.empty(4, np.float32, device="cpu:9")
    with pytest.raises(TypeError, match="dtype"):
        session.empty(4, np.complex64)
    buf = session.empty(4, np.float32)
    with pytest.raises(arrayd.OutOfRange):
        session.download(buf, offset_bytes=8, size_bytes=64)[0].wait()
    with pytest.raises(ValueError, match="expected: 4"):
        buf.write(np.zeros(5, dtype=np.float32))


def test_a_closed_session_refuses_commands(daemon):
    with arrayd.connect(daemon.target) as client:
        s = client.session()
        buf = s.empty(4, np.float32)
        s.close()
        with pytest.raises(arrayd.ArraydError):
            s.fill(buf, 1.0).wait(10)


def test_a_token_is_needed_where_the_daemon_asks_for_one(tmp_path):
    from conftest import Daemon
    tokens = tmp_path / "tokens"
    tokens.write_text("py-secret-token-0123456789abcdef alice\n")
    d = Daemon("--auth-tokens", str(tokens))
    try:
        with arrayd.connect(d.target) as client:
            with pytest.raises(arrayd.Unauthenticated):
                client.session()
        with arrayd.connect(d.target, token="py-secret-token-0123456789abcdef") as client, client.session() as s:
            np.testing.assert_array_equal(s.array(np.arange(3, dtype=np.int32)).numpy(), [0, 1, 2])
    finally:
        d.stop()


def test_a_lingering_session_answers_every_command_and_refuses_a_linger_beyond_ten_ms(daemon):
    with arrayd.connect(daemon.target) as client:
        with pytest.raises(ValueError, match=r"completion_linger: 0\.02 \(expected: 0 to 0\.01 s\)"):
            client.session(completion_linger=0.02)
        with client.session(completion_linger=0.001) as s:
            bufs = [s.empty(1 << 18, np.float32) for _ in range(4)]
            events = [s.fill(bufs[i % 4], float(i)) for i in range(40)]  # pipelined: most complete while others fly
            for e in events:
                e.wait(10)
            np.testing.assert_array_equal(bufs[3].numpy()[:2], [39.0, 39.0])
            # the last command in flight is answered without waiting for the linger
            np.testing.assert_array_equal(s.array(np.arange(3, dtype=np.int32)).numpy(), [0, 1, 2])


def test_a_session_lingers_200_us_unless_it_says_otherwise(daemon):
    with arrayd.connect(daemon.target) as client:
        with client.session() as s, client.session(completion_linger=0) as prompt, \
                client.session(completion_linger=0.002) as slow:
            # what each stream's Attach asks the daemon for
            assert (s._stream._linger_us, prompt._stream._linger_us, slow._stream._linger_us) == (200, 0, 2000)
            for session in (s, prompt, slow):
                np.testing.assert_array_equal(session.array(np.arange(3, dtype=np.int32)).numpy(), [0, 1, 2])


def _untracked(session, buf):
    """A second handle object for ``buf``'s daemon buffer, which the session does not track."""
    return arrayd.Buffer(session, buf.id, buf.dtype, buf.shape, buf.device, buf.mode)


def test_a_buffer_this_process_drops_is_destroyed_after_its_queued_commands(session):
    import gc
    x = session.array(np.arange(4, dtype=np.float32))
    y = session.empty(4, np.float32)
    ghost = _untracked(session, x)
    filled = session.fill(x, 7.0)
    copied = session.copy(x, y, wait_for=[filled])
    del x
    gc.collect()
    assert session.collect() == 1
    copied.wait()  # queued before the destroy: it ran
    np.testing.assert_array_equal(y.numpy(), [7] * 4)
    with pytest.raises(arrayd.NotFound):
        session.describe(ghost)
    assert session.collect() == 0


def test_buffers_are_collected_before_a_new_one_is_made_and_destroy_is_not_repeated(session):
    import gc
    kept = session.empty(16, np.float32)
    kept.destroy()
    del kept
    gc.collect()
    assert session.collect() == 0  # destroyed already: not queued again
    dropped = session.empty(16, np.float32)
    ghost = _untracked(session, dropped)
    del dropped
    gc.collect()
    fresh = session.empty(1, np.float32)  # collects first
    with pytest.raises(arrayd.NotFound):
        session.describe(ghost)
    assert session.collect() == 0 and fresh.size == 1


def test_a_graph_keeps_the_buffers_its_commands_name(session):
    import gc
    x = session.array(np.ones(4, dtype=np.float32))
    out = session.empty(4, np.float32)
    with session.record() as rec:
        temp = session.empty(4, np.float32)
        session.copy(x, temp)
        session.copy(temp, out)
    del temp
    gc.collect()
    assert session.collect() == 0
    x.write(np.full(4, 3, dtype=np.float32))
    session.wait(*rec.graph.replay())
    np.testing.assert_array_equal(out.numpy(), [3] * 4)


def test_commands_submitted_as_messages_signal_the_event_ids_the_session_gives_them(session):
    from arrayd.v1 import common_pb2, execution_pb2
    buf = session.empty(4, np.float32)
    ids = [session.fill(buf, 0).wait().id]
    mine = execution_pb2.Command(event=ids[0], fill=execution_pb2.Fill(buffer=buf.id, value=common_pb2.Scalar(f32=2.5)))
    (event,) = session.submit([mine])  # its own event id (a used one) is replaced by a new one
    assert event.id > ids[0] and mine.event == ids[0]
    event.wait(30)
    np.testing.assert_array_equal(buf.numpy(), np.full(4, 2.5, np.float32))
