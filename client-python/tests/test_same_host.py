"""Same host (the daemon's Unix socket): regions mapped here, NumPy views over them, buffers living in them
computed in place, __array_interface__ / __dlpack__, and what is refused over TCP."""
import numpy as np
import pytest

import arrayd
import kernels as K


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
