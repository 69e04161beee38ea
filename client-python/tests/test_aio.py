"""arrayd.aio against a real daemon: every call of the synchronous client through its asyncio form, wrappers
accepted wherever a handle is, failures raised from awaits, and no daemon call or wait made on the loop's thread."""
from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

import arrayd
import arrayd.aio
import kernels as K
from arrayd import _client, _event


@pytest.fixture
def off_loop(monkeypatch):
    """Records the threads every unary daemon call and every blocking event wait ran on; the test asserts the
    loop's thread is not among them."""
    threads: list[int] = []
    unary, wait = _client.Client._unary, _event.Event.wait

    def recording_unary(self, *args, **kw):
        threads.append(threading.get_ident())
        return unary(self, *args, **kw)

    def recording_wait(self, *args, **kw):
        threads.append(threading.get_ident())
        return wait(self, *args, **kw)

    monkeypatch.setattr(_client.Client, "_unary", recording_unary)
    monkeypatch.setattr(_event.Event, "wait", recording_wait)
    return threads


def run_on_loop(main, off_loop: list[int]):
    """Runs ``main()`` on a new loop; fails if a daemon call or an event wait ran on that loop's thread."""
    loop_thread: list[int] = []

    async def wrapped():
        loop_thread.append(threading.get_ident())
        return await main()

    result = asyncio.run(wrapped())
    assert off_loop, "no daemon call was recorded (the check would pass without looking)"
    assert loop_thread[0] not in off_loop, "a blocking call ran on the event loop's thread"
    return result


def run_in_session(target: str, name: str, body, off_loop: list[int]):
    """:func:`run_on_loop` of ``body(session)`` in a session of a new asyncio client of ``target``."""
    async def main():
        async with await arrayd.aio.connect(target) as client:
            async with await client.session(name) as s:
                return await body(s)

    return run_on_loop(main, off_loop)


def test_buffers_kernels_and_commands(daemon, off_loop):
    async def main():
        async with await arrayd.aio.connect(daemon.target) as client:
            assert client.target == daemon.target
            assert [d.id for d in await client.devices()] == ["cpu:0", "cpu:1"]
            async with await client.session("aio-all") as s:
                assert s.id and s.lease > 0
                assert [d.id for d in await s.devices()] == ["cpu:0", "cpu:1"]
                k = await s.compile(K.vadd, K.add_scalar, K.saxpy)
                assert isinstance(k["vadd"], arrayd.aio.AsyncKernel) and k["vadd"].name == "vadd"
                x = await s.array(np.arange(8, dtype=np.float32))
                y = await s.array(np.ones(8, dtype=np.float32), device="cpu:1")
                z = await s.zeros(8, np.float32)
                assert (x.dtype, x.shape, x.size, x.nbytes, x.numpy_dtype) == ("f32", (8,), 8, 32, np.float32)
                # a kernel's call and Session.launch both take wrappers; events are awaitable
                await k["vadd"](8, x, y, z, 8)
                np.testing.assert_array_equal(await z.numpy(), np.arange(8) + 1)
                e = s.launch(k["add_scalar"], 8, z, 10.0, 8)
                await s.wait(e)
                out = np.empty(8, np.float32)
                assert await z.numpy(out=out) is out
                np.testing.assert_array_equal(out, np.arange(8) + 11)
                # copies, fills, element access, uploads and downloads
                await s.copy(z, x)
                await s.fill(y, 2.0, offset=1, count=2)
                np.testing.assert_array_equal(await s.read(y), [1, 2, 2, 1, 1, 1, 1, 1])
                await x.set_value(0, -5.0)
                assert await x.get_value(0) == -5.0
                assert (await x.write(np.zeros(8, np.float32))).done()
                np.testing.assert_array_equal(await x.get_values(), np.zeros(8))
                await x.set_values(np.full(8, 3, np.float32))
                await s.upload(y, np.arange(4, dtype=np.float32), offset_bytes=16)
                parts = s.download(y, offset_bytes=16, size_bytes=16)
                assert np.frombuffer(await parts[0], np.float32).tolist() == [0, 1, 2, 3]
                assert set((await s.describe(y)).values()) <= {"SHARED", "MODIFIED", "INVALID"}
                # views, padded buffers
                v = await s.view(x, (2, 4))
                np.testing.assert_array_equal(await v.numpy(), np.full((2, 4), 3))
                p = await s.array(np.ones((2, 2), np.float32), padding=1, pad_value=-1.0)
                assert p.padded_shape == (4, 4)
                assert (await p.numpy_padded())[0, 0] == -1.0
                # streams: commands given a stream wrapper run in order on it
                st = await s.stream("cpu:1")
                assert st.device == "cpu:1"
                k["saxpy"](8, 2.0, x, y, 8, stream=st)
                done = k["add_scalar"](8, y, 1.0, 8, stream=st)
                await done
                np.testing.assert_array_equal(await y.numpy(), np.array([1, 2, 2, 1, 0, 1, 2, 3]) + 7)
                await st.destroy()
                for b in (v, p, z):
                    await b.destroy()
                await s.destroy(x)
                with pytest.raises(arrayd.NotFound):
                    await x.numpy()

    run_on_loop(main, off_loop)


def test_graphs_record_and_replay_with_wrapped_buffers(daemon, off_loop):
    async def body(s):
        k = await s.compile(K.add_scalar, K.scale_into)
        x = await s.array(np.ones(4, dtype=np.float32))
        y = await s.empty(4, np.float32)
        async with s.record() as rec:
            e = k["add_scalar"](4, x, 1.0, 4)
            k["scale_into"](4, x, y, 3.0, 4, wait_for=[e])
        g = rec.graph
        assert isinstance(g, arrayd.aio.AsyncGraph) and g.size == 2
        await g.replay()[-1]
        np.testing.assert_array_equal(await y.numpy(), [6] * 4)
        x2 = await s.array(np.full(4, 10, dtype=np.float32))
        await arrayd.aio.wait(*g.replay(rebind={x: x2}, scalars=[(1, 2, 0.5, "f32")]))
        np.testing.assert_array_equal(await y.numpy(), [5.5] * 4)
        await g.destroy()

    run_in_session(daemon.target, "aio-graph", body, off_loop)


def test_failures_are_raised_from_awaits(daemon, off_loop):
    async def body(s):
        k = (await s.compile(K.add_scalar))["add_scalar"]
        x = await s.array(np.zeros(4, dtype=np.float32))
        with pytest.raises(arrayd.DeadlineExceeded):
            await k(4, x, 1.0, 4, deadline=-1.0)
        await x.write(np.zeros(4, np.float32))
        with pytest.raises(arrayd.InvalidArgument, match=r"dims: \[3, 3\]"):
            await s.view(x, (3, 3))
        with pytest.raises(arrayd.CompileError):
            await s.compile(_bad)
        with pytest.raises(arrayd.PermissionDenied, match="allow-native-source"):
            await s.compile_source("c", "ARRAYD_KERNEL void f(ARRAYD_ITEM) {}", [("f", [])])
        with pytest.raises(ValueError, match="data: 3 elements"):
            await x.write(np.zeros(3, np.float32))
        with pytest.raises(IndexError):
            await x.get_value(4)
        with pytest.raises(TypeError, match="argument 0"):
            k(4, 1.0, 1.0, 4)
        with pytest.raises(arrayd.FailedPrecondition, match="unix://"):
            await s.region(4096)
        assert await s.cancel(s.fill(x, 1.0)) in (0, 1)

    run_in_session(daemon.target, "aio-errors", body, off_loop)


@arrayd.kernel
def _bad(k):
    x = k.buffer("x", "f32", "read_write", extent="n")
    k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    x[i] = x[i] + arrayd.ir.i32(1)  # f32 + i32: the daemon refuses the types


def test_regions_over_the_unix_socket(daemon, off_loop):
    async def body(s):
        k = (await s.compile(K.add_scalar))["add_scalar"]
        async with await s.region(4096) as r:
            assert r.size >= 4096
            inside = await r.buffer(4, np.float32)
            view = r.ndarray(np.float32, (4,))
            view[:] = [1, 2, 3, 4]
            await inside.host_written()
            await k(4, inside, 1.0, 4)
            await inside.numpy()  # makes the region current
            np.testing.assert_array_equal(np.asarray(inside), [2, 3, 4, 5])
            elsewhere = await s.array(np.zeros(4, np.float32))
            await r.upload(elsewhere, size_bytes=16)
            np.testing.assert_array_equal(await elsewhere.numpy(), [2, 3, 4, 5])
            await s.fill(elsewhere, 7.0)
            await r.download(elsewhere, region_offset=1024)
            np.testing.assert_array_equal(r.ndarray(np.float32, (4,), 1024), [7] * 4)
            await inside.destroy()

    run_in_session(daemon.unix, "aio-region", body, off_loop)


def test_the_loop_runs_while_a_large_read_is_in_flight(daemon, off_loop):
    """Other tasks progress while a read waits for the daemon (it waits on a worker thread, not the loop)."""
    async def body(s):
        data = np.arange(1 << 22, dtype=np.float32)
        x = await s.array(data)
        ticks = 0
        reading = asyncio.ensure_future(x.numpy())
        while not reading.done():
            ticks += 1
            await asyncio.sleep(0)
        np.testing.assert_array_equal(reading.result(), data)
        return ticks

    # blocking the loop, the read would finish within the first tick's step; on a worker thread it takes more
    assert run_in_session(daemon.target, "aio-concurrent", body, off_loop) > 1


def test_events_are_awaitable_without_importing_the_asyncio_module():
    import subprocess
    import sys
    code = ("import asyncio, sys, arrayd\n"
            "from arrayd._event import Event\n"
            "assert 'arrayd.aio' not in sys.modules\n"
            "e = Event(1)\n"
            "e._finish(Event._SUCCEEDED, b'xy')\n"
            "async def main():\n"
            "    return await e\n"
            "print(asyncio.run(main()))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "b'xy'", r.stdout + r.stderr
