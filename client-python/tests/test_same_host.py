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
