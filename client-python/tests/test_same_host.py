"""Same host (the daemon's Unix socket): regions mapped here, NumPy views over them, buffers living in them
computed in place, __array_interface__ / __dlpack__, what is refused over TCP, and the staging region's ring
and halves."""
import numpy as np
import pytest

import arrayd
import kernels as K
from arrayd import _regions


def test_a_region_is_shared_memory_with_the_daemon(unix_session):
    s = unix_session
    with s.region(1 << 20) as r:
        view = r.ndarray(np.float32, (1000,))
        view[:] = np.arange(1000)
        buf = s.empty(1000, np.float32)
        r.upload(buf).wait()
        np.testing.assert_array_equal(buf.numpy(), np.arange(1000))
        s.fill(buf, 7.0)
        r.download(buf, region_offset=4096).wait()
        np.testing.assert_array_equal(r.ndarray(np.float32, (1000,), 4096), np.full(1000, 7))


def test_buffers_living_in_a_region_are_computed_in_place(unix_session):
    s = unix_session
    n = 4096
    k = s.compile(K.vadd)["vadd"]
    with s.region(3 * 4 * n) as r:
        a = r.buffer(n, np.float32, offset=0)
        b = r.buffer(n, np.float32, offset=4 * n)
        c = r.buffer(n, np.float32, offset=8 * n)
        a.write(np.arange(n))           # the bytes go into the region; host_written follows
        b.write(np.full(n, 0.5))
        k(n, a, b, c, n, device="cpu:0").wait()
        out = np.asarray(c)             # __array_interface__: the region's bytes, no download
        np.testing.assert_array_equal(out, np.arange(n) + 0.5)
        r.ndarray(np.float32, (n,), 0)[:] = 1.0    # the application writes a's memory itself
        k(n, a, b, c, n, device="cpu:0", wait_for=[a.host_written()]).wait()
        np.testing.assert_array_equal(np.from_dlpack(c), np.full(n, 1.5))
        view = c.numpy()
        assert np.shares_memory(view, r.ndarray(np.float32, (n,), 8 * n)), "numpy() of it is a view of the region"
        kept = np.zeros(n, np.float32)
        assert c.numpy(out=kept) is kept and not np.shares_memory(kept, view), "out=: a copy into the caller's array"
        np.testing.assert_array_equal(kept, np.full(n, 1.5))
        assert s.describe(c) == {"cpu:0": "SHARED", "host": "SHARED"}


def test_regions_need_the_unix_socket_and_hosted_modes(session, unix_session):
    with pytest.raises(arrayd.FailedPrecondition, match="unix://"):
        session.region(4096)
    with unix_session.region(4096) as r:
        with pytest.raises(arrayd.InvalidArgument, match="memory_mode: DEVICE"):
            r.buffer(16, np.float32, mode="device")
        with pytest.raises(arrayd.InvalidArgument, match="offset_bytes: 4 "):
            r.buffer(16, np.float32, offset=4)
        with pytest.raises(arrayd.OutOfRange):
            r.buffer(2048, np.float32)
    plain = session.empty(4, np.float32)
    with pytest.raises(TypeError, match="not in host memory"):
        np.asarray(plain)


def test_the_asyncio_client(daemon):
    import asyncio

    import arrayd.aio

    async def main():
        async with await arrayd.aio.connect(daemon.unix) as client:
            assert [d.id for d in await client.devices()] == ["cpu:0", "cpu:1"]
            async with await client.session("aio") as s:
                k = (await s.compile(K.saxpy))["saxpy"]
                x = await s.array(np.arange(8, dtype=np.float32))
                y = await s.array(np.ones(8, dtype=np.float32))
                await s.launch(k, 8, 3.0, x, y, 8)
                return await y.numpy()

    np.testing.assert_array_equal(asyncio.run(main()), 3 * np.arange(8) + 1)


def test_closing_a_region_right_after_queueing_comes_after_the_queued_commands(unix_session):
    """Region.close (DestroyRegion) reaches the daemon after the uploads and downloads queued before it."""
    s = unix_session
    buf = s.empty(1024, np.float32)
    for i in range(20):
        r = s.region(4096)
        r.ndarray(np.float32, (1024,))[:] = i
        up = r.upload(buf)
        down = r.download(buf, wait_for=[up])
        r.close()
        up.wait()
        down.wait()
    np.testing.assert_array_equal(buf.numpy(), np.full(1024, 19, dtype=np.float32))


def test_a_region_buffer_written_on_another_device_then_read_in_place_and_refilled_stays_in_order(unix_session):
    """x lives in a region (used in place by cpu:0): written on cpu:1, read on cpu:0 into y, then one element set
    and x read back. Reading x back copies cpu:1's newer bytes into the region only after the launch on cpu:0 has
    read them, however the commands are batched."""
    s = unix_session
    n = 70001
    k = s.compile(K.scale_into)["scale_into"]
    on1 = s.stream("cpu:1")
    y0 = np.arange(n, dtype=np.float32)
    for _ in range(40):
        with s.region(4 * n) as rx, s.region(4 * n) as ry:
            x = rx.buffer(n, np.float32, device="cpu:0")
            y = ry.buffer(n, np.float32, device="cpu:0")
            y.write(y0)
            k(n, y, x, 2.0, n, stream=on1)           # x = 2 y0, on cpu:1
            k(n, x, y, -1.0, n, device="cpu:0")      # y = -x: copies x into the region first, then reads it there
            x.set_value(47735, 99.0)
            want_x = 2 * y0
            want_x[47735] = 99
            np.testing.assert_array_equal(x.numpy(), want_x)
            np.testing.assert_array_equal(y.numpy(), -2 * y0)
            s.destroy(x)
            s.destroy(y)


def test_writing_a_region_buffer_waits_for_the_commands_that_read_it(unix_session):
    s = unix_session
    n = 1 << 16
    k = s.compile(K.scale_into)["scale_into"]
    slow = s.empty(16 << 20, np.float32)
    with s.region(2 * 4 * n) as r:
        x = r.buffer(n, np.float32, offset=0)
        y = r.buffer(n, np.float32, offset=4 * n)
        x.write(np.ones(n))
        busy = s.fill(slow, 1.0)                                   # 64 MiB: the read below starts after it
        read = k(n, x, y, 3.0, n, device="cpu:0", wait_for=[busy])  # y = 3 x, of x as it is now
        x.write(np.full(n, 5.0))                                  # waits for that read before writing x
        read.wait()
        np.testing.assert_array_equal(y.numpy(), np.full(n, 3.0))
        np.testing.assert_array_equal(x.numpy(), np.full(n, 5.0))


@pytest.mark.parametrize("device", ["cpu:0", "cpu:1"])
def test_a_region_buffer_whose_last_writer_failed_is_written_whole_again(unix_session, device):
    s = unix_session
    n = 64
    k = s.compile(K.gather)["gather"]
    x = s.array(np.arange(n, dtype=np.float32))
    bad = s.array(np.full(n, n + 5, dtype=np.int64))
    with s.region(4 * n) as r:
        y = r.buffer(n, np.float32)
        y.write(np.ones(n))
        failed = k(n, x, bad, y, n, device=device)  # y's last writer fails
        with pytest.raises(arrayd.OutOfRange):
            failed.wait()
        with pytest.raises(arrayd.OutOfRange, match="waited on event"):
            y.numpy()
        with pytest.raises(arrayd.OutOfRange):  # a wait on the failed event still fails the write
            y.write(np.zeros(n), wait_for=[failed])
        y.write(np.full(n, 2.0)).wait()  # the whole buffer from here: good data again
        np.testing.assert_array_equal(y.numpy(), np.full(n, 2.0))
        k(n, x, s.array(np.arange(n, dtype=np.int64)), y, n, device=device).wait()
        np.testing.assert_array_equal(y.numpy(), np.arange(n, dtype=np.float32))


#: How many random programs the test below runs (ARRAYD_PY_RANDOM_PROGRAMS: more for a soak).
RANDOM_PROGRAMS = int(__import__("os").environ.get("ARRAYD_PY_RANDOM_PROGRAMS", "24"))


@pytest.mark.parametrize("seed", range(RANDOM_PROGRAMS))
def test_random_programs_over_region_buffers_and_two_devices_match_numpy(unix_session, seed):
    """Buffers in regions (used in place by cpu:0) and ordinary ones on both devices, under launches on devices and
    streams, partial copies, fills and uploads, byte ranges, waits on earlier events, writes of the region
    bytes, downloads into a region, and reads mid-program: every read and every event agree with NumPy."""
    s = unix_session
    rng = np.random.default_rng(seed)
    k = s.compile(K.add_scalar, K.scale_into, K.vadd)
    streams = [s.stream("cpu:0"), s.stream("cpu:1")]
    align = s.devices()[0].base_alignment_bytes
    n = int(rng.choice([257, 4096, 70001]))
    model = [rng.standard_normal(n).astype(np.float32) for _ in range(4)]
    regions, bufs = [], []
    for m in model:
        dev = f"cpu:{rng.integers(0, 2)}"
        if rng.integers(0, 2):
            regions.append(s.region(4 * n))
            bufs.append(regions[-1].buffer(n, np.float32, device=dev))
            bufs[-1].write(m)
        else:
            bufs.append(s.array(m, device=dev))
    scratch = s.region(4 * n)
    events = []

    def placed():
        o = {"stream": streams[rng.integers(0, 2)]} if rng.integers(0, 3) == 0 else {"device": f"cpu:{rng.integers(0, 2)}"}
        if events and rng.integers(0, 3) == 0:
            o["wait_for"] = [events[rng.integers(0, len(events))]]
        return o

    def changed(i, lo, values):
        model[i] = model[i].copy()
        model[i][lo:lo + len(values)] = values

    for step in range(40):
        op = int(rng.integers(0, 9))
        a, b, c = (int(x) for x in rng.choice(4, 3, replace=False))
        o = placed()
        what = f"seed {seed} step {step} op {op}"
        if op == 0:
            v = float(rng.integers(-3, 4))
            events.append(k["add_scalar"](n, bufs[a], v, n, **o))
            model[a] = model[a] + np.float32(v)
        elif op == 1:
            events.append(k["scale_into"](n, bufs[a], bufs[b], -1.0, n, **o))
            model[b] = -model[a]
        elif op == 2:
            events.append(k["vadd"](n, bufs[a], bufs[b], bufs[c], n, **o))
            model[c] = model[a] + model[b]
        elif op == 3:
            cnt = int(rng.integers(1, n + 1))
            so, do = int(rng.integers(0, n - cnt + 1)), int(rng.integers(0, n - cnt + 1))
            events.append(s.copy(bufs[a], bufs[b], src_offset_bytes=4 * so, dst_offset_bytes=4 * do, size_bytes=4 * cnt,
                                 **o))
            changed(b, do, model[a][so:so + cnt])
        elif op == 4:
            off = int(rng.integers(0, n))
            v = float(rng.integers(-9, 9))
            events.append(bufs[a].set_value(off, v, wait_for=o.get("wait_for", ())))
            changed(a, off, np.array([v], np.float32))
        elif op == 5:
            off = int(rng.integers(0, n))
            data = rng.standard_normal(int(rng.integers(1, n - off + 1))).astype(np.float32)
            events.append(s.upload(bufs[a], data, offset_bytes=4 * off, wait_for=o.get("wait_for", ())))
            changed(a, off, data)
        elif op == 6:  # a kernel on a byte range of a buffer
            off = int(rng.integers(0, (4 * n) // align)) * align
            cnt = int(rng.integers(1, (4 * n - off) // 4 + 1))
            events.append(k["add_scalar"](cnt, bufs[a].range(off, 4 * cnt), 2.0, cnt, **o))
            changed(a, off // 4, model[a][off // 4:off // 4 + cnt] + np.float32(2))
        elif op == 7:  # the whole buffer written from here: in place for a region buffer
            data = rng.standard_normal(n).astype(np.float32)
            events.append(bufs[a].write(data, wait_for=o.get("wait_for", ())))
            model[a] = data
        elif rng.integers(0, 2):
            np.testing.assert_array_equal(bufs[a].numpy(), model[a], err_msg=what)
        else:
            scratch.download(bufs[a], **{kk: v for kk, v in o.items() if kk != "device"}).wait()
            np.testing.assert_array_equal(scratch.ndarray(np.float32, n), model[a], err_msg=what)
    for i, (buf, m) in enumerate(zip(bufs, model)):
        np.testing.assert_array_equal(buf.numpy(), m, err_msg=f"seed {seed}: buffer {i} at the end")
    for e in events:
        e.wait()  # every command succeeded (a refused one would leave its buffer as it was)
    for buf in bufs:
        s.destroy(buf)
    for r in regions + [scratch]:
        r.close()


# -- the staging ring ----------------------------------------------------------------------------------------

needs_ring = pytest.mark.skipif(not _regions._RING_ORDERED,
                                reason="the staging ring needs x86-64 here (its counts are plain loads and stores)")


@pytest.fixture
def staged(monkeypatch):
    """Counts the staging region's ring and halves transfers."""
    import collections
    calls = collections.Counter()
    for name in ("_ring_download", "_ring_upload", "_halves_download", "_halves_upload"):
        def counted(self, *a, _orig=getattr(_regions.Staging, name), _name=name, **kw):
            calls[_name] += 1
            return _orig(self, *a, **kw)
        monkeypatch.setattr(_regions.Staging, name, counted)
    return calls


@needs_ring
def test_large_transfers_of_a_cpu_buffer_stream_through_the_ring(unix_session, staged):
    s = unix_session
    rng = np.random.default_rng(3)
    data = rng.integers(0, 256, 5 * _regions.RING_SLOT_BYTES + 12345, dtype=np.uint8)  # a last piece in part
    buf = s.array(data, device="cpu:1")
    np.testing.assert_array_equal(buf.numpy(), data)
    part = rng.integers(0, 256, 3 * _regions.RING_SLOT_BYTES + 7, dtype=np.uint8)
    s.upload(buf, part, offset_bytes=1001).wait()
    expected = data.copy()
    expected[1001:1001 + len(part)] = part
    out = np.zeros_like(data)
    assert buf.numpy(out=out) is out
    np.testing.assert_array_equal(out, expected)
    big = rng.standard_normal(3 * _regions.RING_SLOTS * _regions.RING_SLOT_BYTES // 4).astype(np.float32)  # round the ring 3x
    b2 = s.array(big, device="cpu:0")
    np.testing.assert_array_equal(b2.numpy(), big)
    assert staged == {"_ring_upload": 3, "_ring_download": 3}


@needs_ring
def test_ring_transfers_are_ordered_with_the_commands_around_them(unix_session, staged):
    """The ring's stream is not the one the other commands take: hazards order them across streams."""
    s = unix_session
    k = s.compile(K.add_scalar)
    n = 3 << 20
    x = s.empty(n, np.float32, device="cpu:0")
    out = np.empty(n, np.float32)  # (reads into it take the ring; new arrays of a size read again, the pool)
    s.fill(x, 3.0)
    np.testing.assert_array_equal(x.numpy(out=out), np.full(n, 3.0, np.float32))  # after the fill
    ones = np.ones(n, np.float32)
    x.write(ones)
    k["add_scalar"](n, x, 2.0, n)  # after the write
    y = s.empty(n, np.float32, device="cpu:1")
    s.copy(x, y)
    x.write(ones * 7)  # after the launch and the copy read x
    np.testing.assert_array_equal(y.numpy(out=out), np.full(n, 3.0, np.float32))
    np.testing.assert_array_equal(x.numpy(out=out), np.full(n, 7.0, np.float32))
    assert staged == {"_ring_upload": 2, "_ring_download": 3}


def test_padded_buffers_and_named_streams_take_the_staging_halves(unix_session, staged):
    s = unix_session
    data = np.arange(600 * 1024, dtype=np.float32).reshape(600, 1024)
    padded = s.array(data, padding=[(1, 1), (0, 0)], pad_value=-1.0)
    np.testing.assert_array_equal(padded.numpy(), data)
    plain = s.empty(data.shape, np.float32, device="cpu:0")
    s.upload(plain, data * 2, stream=s.stream("cpu:0")).wait()
    np.testing.assert_array_equal(plain.numpy(), data * 2)
    assert staged["_halves_upload"] == 2 and staged["_halves_download"] == 1


@needs_ring
def test_a_client_that_stops_emptying_the_ring_fails_that_transfer_alone(daemon, unix_session):
    """A ring transfer holds only the session's own ring stream while it waits: the session's other commands
    and other clients go on; after 5 s without the client's count moving it fails with DEADLINE_EXCEEDED, and
    the next staged transfer works."""
    from arrayd.v1 import execution_pb2
    s = unix_session
    data = np.random.default_rng(4).integers(0, 256, 16 * _regions.RING_SLOT_BYTES, dtype=np.uint8)
    buf = s.array(data, device="cpu:0")
    staging = s._staging_area()
    ring_stream = staging._ring_stream(buf)
    stalled = s._submit([s._command(stream=ring_stream, download=execution_pb2.Download(
        buffer=buf.id, into_ring=staging._start_ring(0)))])[0]  # never emptied
    other = s.array(np.zeros(1000, np.float32), device="cpu:0")
    for i in range(10):
        s.fill(other, float(i)).wait()
    np.testing.assert_array_equal(other.numpy(), np.full(1000, 9.0, np.float32))
    with arrayd.connect(daemon.target) as c2, c2.session("bystander") as s2:
        b2 = s2.array(np.arange(1000, dtype=np.float32))
        s2.fill(b2, 5.0).wait()
        np.testing.assert_array_equal(b2.numpy(), np.full(1000, 5.0, np.float32))
    with pytest.raises(arrayd.DeadlineExceeded, match=r"consumed count stayed at 0 for 5000 ms \(expected: at least 1 "
                                                      r"for piece 8 of 16\)"):
        stalled.wait()
    np.testing.assert_array_equal(buf.numpy(), data)


@needs_ring
def test_ring_transfers_with_a_bad_ring_or_stream_are_refused_naming_it(unix_session):
    from arrayd.v1 import execution_pb2, regions_pb2
    s = unix_session
    buf = s.array(np.zeros(3 << 20, np.uint8), device="cpu:0")
    staging = s._staging_area()
    ring_stream = staging._ring_stream(buf)
    region = staging.region

    def download(ring, stream=ring_stream):
        return s._submit([s._command(stream=stream, download=execution_pb2.Download(buffer=buf.id, into_ring=ring))])[0]

    with pytest.raises(arrayd.InvalidArgument, match=r"download.into_ring.slots: 1 \(expected: 2 to 64\)"):
        download(regions_pb2.RegionRing(region=region.id, slot_bytes=4096, slots=1)).wait()
    with pytest.raises(arrayd.InvalidArgument, match=r"download.into_ring.slot_bytes: 1000 \(expected: a multiple of 64"):
        download(regions_pb2.RegionRing(region=region.id, slot_bytes=1000, slots=2)).wait()
    with pytest.raises(arrayd.InvalidArgument, match=r"download.into_ring.offset_bytes: 8 \(expected: a multiple of 64\)"):
        download(regions_pb2.RegionRing(region=region.id, offset_bytes=8, slot_bytes=4096, slots=2)).wait()
    with pytest.raises(arrayd.OutOfRange, match=r"download.into_ring"):
        download(regions_pb2.RegionRing(region=region.id, slot_bytes=64 << 20, slots=2)).wait()
    with pytest.raises(arrayd.InvalidArgument, match=r"download.into_ring: on the default stream"):
        download(regions_pb2.RegionRing(region=region.id, slot_bytes=4096, slots=2), stream=None).wait()
    with pytest.raises(arrayd.InvalidArgument, match=r"upload: from_ring with data \(3 bytes\) \(expected: one of them\)"):
        s._submit([s._command(stream=ring_stream, upload=execution_pb2.Upload(
            buffer=buf.id, data=b"abc", from_ring=regions_pb2.RegionRing(region=region.id, slot_bytes=4096, slots=2,
                                                                         size_bytes=3)))])[0].wait()
    padded = s.array(np.zeros((6, 4), np.float32), padding=[(1, 1), (0, 0)], device="cpu:0")
    with pytest.raises(arrayd.InvalidArgument, match=r"download.into_ring: the interior of buffer 0x[0-9a-f]+ "
                                                     r"f32\[6, 4\] pad \[\(1,1\), \(0,0\)\] on cpu:0, which is padded"):
        s._submit([s._command(stream=ring_stream, download=execution_pb2.Download(
            buffer=padded.id, into_ring=regions_pb2.RegionRing(region=region.id, slot_bytes=4096, slots=2)))])[0].wait()
    assert _regions.RING_SLOTS * _regions.RING_SLOT_BYTES + 128 <= region.size


@needs_ring
def test_a_ring_transfer_left_by_an_exception_does_not_spoil_the_next(unix_session, monkeypatch):
    """The program's thread stops emptying the ring (an exception mid-transfer): the next staged transfer waits
    until the daemon has given the left one up (5 s), so that its counts start from zero, then moves its bytes."""
    s = unix_session
    data = np.random.default_rng(5).integers(0, 256, 12 * _regions.RING_SLOT_BYTES, dtype=np.uint8)
    buf = s.array(data, device="cpu:0")
    real = _regions.Staging._await

    def interrupted(self, index, at_least, e):
        if index == _regions._FILLED and at_least == 4:
            raise KeyboardInterrupt("stopped mid-transfer")
        return real(self, index, at_least, e)

    monkeypatch.setattr(_regions.Staging, "_await", interrupted)
    with pytest.raises(KeyboardInterrupt):
        buf.numpy()
    monkeypatch.setattr(_regions.Staging, "_await", real)
    other = np.random.default_rng(6).integers(0, 256, len(data), dtype=np.uint8)
    buf.write(other)
    np.testing.assert_array_equal(buf.numpy(), other)


def test_a_device_whose_streams_do_not_copy_host_memory_takes_the_halves(staged):
    """OpenCL devices (PoCL) refuse ring transfers: the first staged transfer with one learns it from the
    refusal, before any byte moved, and it and every later one there go through the staging halves."""
    from conftest import Daemon
    d = Daemon("--devices", "cpu,opencl")
    try:
        with arrayd.connect(d.unix) as client, client.session() as s:
            devices = [dev.id for dev in s.devices()]
            if "opencl:0" not in devices:
                pytest.skip(f"no OpenCL device here (devices: {devices}; install PoCL: pocl-opencl-icd)")
            rings = {dev.id: dev.ring_transfers for dev in s.devices()}  # (the client learns it anyway)
            assert rings["cpu:0"] and not any(r for name, r in rings.items() if name.startswith("opencl:")), rings
            rng = np.random.default_rng(7)
            small = rng.integers(0, 256, 6 << 20, dtype=np.uint8)  # fewer pieces than the ring has slots
            b = s.array(small, device="opencl:0")
            np.testing.assert_array_equal(b.numpy(), small)
            large = rng.integers(0, 256, 40 << 20, dtype=np.uint8)
            c = s.array(large, device="opencl:0")
            np.testing.assert_array_equal(c.numpy(), large)
            assert staged == {"_ring_upload": 1, "_halves_upload": 2, "_halves_download": 2}
            on_cpu = s.array(small, device="cpu:0")  # the cpu device still streams through the ring
            np.testing.assert_array_equal(on_cpu.numpy(), small)
            assert staged["_ring_upload"] == 2 and staged["_ring_download"] == 1
    finally:
        d.stop()


def _pool_region_made(s):
    """Waits for the region the pool is making in the background (started by a second read of a size)."""
    s._pool.settle(timeout=60)
    assert s._pool.created >= 1


def test_new_arrays_of_a_size_read_again_come_from_a_region_of_the_pool(unix_session):
    """A size read once reads into fresh memory; read again, it gets a region of its own in the background, and
    later new arrays of it are that region's memory, downloaded into by the daemon, the region reused once the
    arrays over it are gone."""
    s = unix_session
    rng = np.random.default_rng(11)
    data = rng.standard_normal((3 << 20) + 5).astype(np.float32)  # 12 MiB and 20 bytes
    buf = s.array(data, device="cpu:0")
    np.testing.assert_array_equal(buf.numpy(), data)   # read once: fresh memory, no region made
    assert s._pool.created == 0 and s._pool.hits == 0
    np.testing.assert_array_equal(buf.numpy(), data)   # read again: its region is made meanwhile
    _pool_region_made(s)
    first = buf.numpy()
    np.testing.assert_array_equal(first, data)
    assert s._pool.hits == 1 and first.flags.writeable and first.shape == data.shape
    first[0] = 42.0                                     # an ordinary array of this process: writable, its own
    np.testing.assert_array_equal(buf.numpy(out=np.empty_like(data)), data)
    del first
    again = buf.numpy()                                 # the region came back: the same memory, new contents
    np.testing.assert_array_equal(again, data)
    assert s._pool.hits == 2 and s._pool.created == 1


def test_a_view_keeps_its_region_from_the_next_new_array(unix_session):
    s = unix_session
    rng = np.random.default_rng(12)
    data = rng.integers(0, 1 << 30, (9 << 20) // 4, dtype=np.int32)
    buf = s.array(data, device="cpu:0")
    buf.numpy(), buf.numpy()
    _pool_region_made(s)
    whole = buf.numpy()
    tail = whole[1000:][::3]                            # a view of a view: it alone holds the memory now
    del whole
    buf.write(-data)
    other = buf.numpy()                                 # not the region under tail: it is not free
    np.testing.assert_array_equal(other, -data)
    np.testing.assert_array_equal(tail, data[1000:][::3])
    assert not np.shares_memory(other, tail)


def test_a_new_array_from_the_pool_outlives_its_session(daemon):
    data = np.arange((10 << 20) // 8, dtype=np.float64)
    with arrayd.connect(daemon.unix) as client:
        with client.session() as s:
            buf = s.array(data, device="cpu:1")
            buf.numpy(), buf.numpy()
            _pool_region_made(s)
            kept = buf.numpy()
            assert s._pool.hits == 1
        np.testing.assert_array_equal(kept, data)      # the session and its regions are gone; the mapping stays
        kept[:] = 1.0


def test_reads_go_on_without_the_pool_when_the_daemon_refuses_it_a_region(unix_session, monkeypatch):
    s = unix_session
    data = np.arange(3 << 20, dtype=np.float32)
    buf = s.array(data, device="cpu:0")  # (the session's staging region is made here, before the refusals)

    def refused(session, nbytes):
        raise arrayd.ResourceExhausted(_regions._code("RESOURCE_EXHAUSTED"), "tenant: memory quota (test)")
    monkeypatch.setattr(_regions.Region, "create", staticmethod(refused))
    for _ in range(3):
        s._pool.settle(timeout=60)
        np.testing.assert_array_equal(buf.numpy(), data)
    assert s._pool.created == 0 and s._pool.hits == 0
