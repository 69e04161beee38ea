"""asyncio: the same client with coroutines. Calls that answer at once (creating buffers, compiling) run on
a worker thread; events are awaitable::

    async with await arrayd.aio.connect("unix:///run/arrayd/arrayd.sock") as client:
        async with await client.session() as s:
            x = await s.array(np.arange(10, dtype=np.float32))
            print(await x.numpy())

Commands (``launch``, ``copy``, ``fill``, ``host_written``) return :class:`Event` s at once, as in the
synchronous client; ``await event`` waits without blocking the loop.
"""
from __future__ import annotations

import asyncio
from typing import Any

from . import _client, _session
from ._stream import Event


def _as_future(event: Event) -> asyncio.Future:
    """An asyncio future of the running loop that settles when ``event`` completes."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def settle() -> None:
        if future.cancelled():
            return
        failure = event.exception()
        if failure is not None:
            future.set_exception(failure)
        else:
            future.set_result(event._value)

    event.add_done_callback(lambda _e: loop.call_soon_threadsafe(settle))
    return future


async def wait(*events: Event) -> None:
    """Waits for every event without blocking the loop; raises the first failure."""
    for e in events:
        await _as_future(e)


def _awaitable_event(self: Event):
    return _as_future(self).__await__()


Event.__await__ = _awaitable_event  # type: ignore[attr-defined]


class AsyncSession:
    """A :class:`arrayd.Session` whose blocking calls are coroutines."""

    def __init__(self, session: _session.Session):
        self.sync = session

    async def array(self, data: Any, **kw):
        buf = await asyncio.to_thread(self.sync.array, data, **kw)
        return AsyncBuffer(buf)

    async def empty(self, shape, dtype: Any = "f32", **kw):
        return AsyncBuffer(await asyncio.to_thread(self.sync.empty, shape, dtype, **kw))

    async def view(self, base, shape, **kw):
        """A view of ``base`` (see :meth:`arrayd.Session.view`)."""
        b = base.sync if isinstance(base, AsyncBuffer) else base
        return AsyncBuffer(await asyncio.to_thread(self.sync.view, b, shape, **kw))

    async def compile(self, *kernels, **kw):
        return await asyncio.to_thread(self.sync.compile, *kernels, **kw)

    def launch(self, kernel, global_size, *args, **kw) -> Event:
        return self.sync.launch(kernel, global_size, *[a.sync if isinstance(a, AsyncBuffer) else a for a in args], **kw)

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> "AsyncSession":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()


class AsyncBuffer:
    """A :class:`arrayd.Buffer` whose reads and writes are coroutines."""

    def __init__(self, buffer):
        self.sync = buffer

    async def numpy(self, *, out=None):
        return await asyncio.to_thread(self.sync.numpy, out=out)

    async def write(self, data) -> None:
        await _as_future(self.sync.write(data))

    def __getattr__(self, name):
        return getattr(self.sync, name)


class AsyncClient:
    """A :class:`arrayd.Client` whose blocking calls are coroutines."""

    def __init__(self, client: _client.Client):
        self.sync = client

    async def devices(self):
        return await asyncio.to_thread(self.sync.devices)

    async def session(self, name: str = "python", **kw) -> AsyncSession:
        return AsyncSession(await asyncio.to_thread(self.sync.session, name, **kw))

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()


async def connect(target: str = "127.0.0.1:7700", **kw) -> AsyncClient:
    """:func:`arrayd.connect` for asyncio."""
    return AsyncClient(await asyncio.to_thread(_client.connect, target, **kw))
