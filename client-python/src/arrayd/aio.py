"""asyncio: the whole client with coroutines, never blocking the event loop::

    async with await arrayd.aio.connect("unix:///run/arrayd/arrayd.sock") as client:
        async with await client.session() as s:
            x = await s.array(np.arange(10, dtype=np.float32))
            print(await x.numpy())

Two kinds of calls, as in the synchronous client:

- **commands** (``launch``, a kernel's call, ``copy``, ``fill``, ``download``, ``host_written``, ``submit``,
  ``set_value``, a graph's ``replay``, a region's ``upload`` / ``download``) are plain methods: they queue the
  command and return its :class:`~arrayd.Event` at once; ``await event`` waits for it without blocking the loop;
- **calls that wait for the daemon** (creating buffers, streams, regions and graphs, compiling, reading, destroying,
  ``upload`` and ``write``, whose large arrays wait until their messages are built as gRPC sends them) are
  coroutines, run on a worker thread (:func:`asyncio.to_thread`).

Handles are wrappers of the synchronous ones (``.sync``); either may be passed where a buffer, stream or kernel is
expected. Cancelling a task that awaits an event stops the wait, not the command: ``await session.cancel(event)``
cancels commands.
"""
from __future__ import annotations

import asyncio
from typing import Any, Iterable, Sequence, TypeVar

import numpy as np

from . import _client
from ._buffer import Buffer, BufferRange, Kernel, Stream
from ._client import Device
from ._regions import Region
from ._event import Event
from ._graphs import Graph, GraphRecorder
from ._session import Session

__all__ = ["connect", "wait", "AsyncClient", "AsyncSession", "AsyncBuffer", "AsyncKernel", "AsyncStream",
           "AsyncRegion", "AsyncGraph", "AsyncGraphRecorder"]


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


class _Async:
    """A wrapper of a synchronous handle (``sync``): equal to and hashed like it, so either works as a key."""

    __slots__ = ("sync",)

    def __init__(self, sync: Any):
        self.sync = sync

    def __eq__(self, other: object) -> bool:
        return self.sync == (other.sync if isinstance(other, _Async) else other)

    def __hash__(self) -> int:
        return hash(self.sync)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sync!r})"


_C = TypeVar("_C", bound="_Closable")


class _Closable(_Async):
    """A wrapper whose ``close`` waits for the daemon (on a worker thread); an async context manager that closes."""

    __slots__ = ()

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self: _C) -> _C:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


def _sync(x: Any) -> Any:
    """The synchronous handle of a wrapper; anything else as it is."""
    return x.sync if isinstance(x, _Async) else x


def _sync_kw(kw: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments with wrappers unwrapped (``stream=``, ``dst=``, …; ``rebind=`` maps of buffers)."""
    out = {}
    for k, v in kw.items():
        if isinstance(v, dict):
            v = {_sync(a): _sync(b) for a, b in v.items()}
        out[k] = _sync(v)
    return out


class AsyncClient(_Closable):
    """A :class:`arrayd.Client` whose blocking calls are coroutines."""

    __slots__ = ()
    sync: _client.Client

    @property
    def target(self) -> str:
        return self.sync.target

    async def devices(self) -> list[Device]:
        return await asyncio.to_thread(self.sync.devices)

    async def session(self, name: str = "python", **kw: Any) -> "AsyncSession":
        """A new session (see :meth:`arrayd.Client.session` for the options)."""
        return AsyncSession(await asyncio.to_thread(self.sync.session, name, **kw))


class AsyncSession(_Closable):
    """A :class:`arrayd.Session`: commands return events at once, calls that wait for the daemon are coroutines.
    Arguments and options are those of the synchronous methods of the same names."""

    __slots__ = ()
    sync: Session

    @property
    def id(self) -> str:
        return self.sync.id

    @property
    def lease(self) -> float:
        return self.sync.lease

    async def devices(self) -> list[Device]:
        return await asyncio.to_thread(self.sync.devices)

    # -- buffers
    async def empty(self, shape: int | Sequence[int], dtype: Any = np.float32, **kw: Any) -> "AsyncBuffer":
        return AsyncBuffer(await asyncio.to_thread(self.sync.empty, shape, dtype, **kw))

    zeros = empty

    async def array(self, data: Any, **kw: Any) -> "AsyncBuffer":
        return AsyncBuffer(await asyncio.to_thread(self.sync.array, data, **kw))

    async def view(self, base: "AsyncBuffer | Buffer", shape: int | Sequence[int], **kw: Any) -> "AsyncBuffer":
        """A view of ``base`` (see :meth:`arrayd.Session.view`)."""
        return AsyncBuffer(await asyncio.to_thread(self.sync.view, _sync(base), shape, **kw))

    async def upload(self, buffer: "AsyncBuffer | Buffer", data: Any, **kw: Any) -> Event:
        """Writes ``data``'s bytes into ``buffer``; returns once they left ``data`` (it may change then), with the
        event of the last part."""
        return await asyncio.to_thread(self.sync.upload, _sync(buffer), data, **_sync_kw(kw))

    def download(self, buffer: "AsyncBuffer | Buffer", **kw: Any) -> list[Event]:
        """Download commands; their events carry the bytes (``await e`` gives them)."""
        return self.sync.download(_sync(buffer), **_sync_kw(kw))

    async def read(self, buffer: "AsyncBuffer | Buffer", **kw: Any) -> np.ndarray:
        return await asyncio.to_thread(self.sync.read, _sync(buffer), **_sync_kw(kw))

    def fill(self, buffer: "AsyncBuffer | Buffer", value: float | int, **kw: Any) -> Event:
        return self.sync.fill(_sync(buffer), value, **_sync_kw(kw))

    def copy(self, src: "AsyncBuffer | Buffer", dst: "AsyncBuffer | Buffer | None" = None, **kw: Any) -> Event:
        return self.sync.copy(_sync(src), _sync(dst), **_sync_kw(kw))

    def host_written(self, buffer: "AsyncBuffer | Buffer", **kw: Any) -> Event:
        return self.sync.host_written(_sync(buffer), **_sync_kw(kw))

    async def destroy(self, buffer: "AsyncBuffer | Buffer") -> None:
        await asyncio.to_thread(self.sync.destroy, _sync(buffer))

    async def describe(self, buffer: "AsyncBuffer | Buffer") -> dict[str, str]:
        return await asyncio.to_thread(self.sync.describe, _sync(buffer))

    async def collect(self) -> int:
        """Destroys the buffers this process no longer references (see :meth:`arrayd.Session.collect`)."""
        return await asyncio.to_thread(self.sync.collect)

    # -- kernels and commands
    async def compile(self, *kernels: Any, backend: str = "") -> dict[str, "AsyncKernel"]:
        found = await asyncio.to_thread(self.sync.compile, *kernels, backend=backend)
        return {name: AsyncKernel(k) for name, k in found.items()}

    async def compile_source(self, dialect: str, source: str, entry_points: Sequence[tuple[str, Sequence[tuple]]],
                             backend: str = "") -> dict[str, "AsyncKernel"]:
        found = await asyncio.to_thread(self.sync.compile_source, dialect, source, entry_points, backend)
        return {name: AsyncKernel(k) for name, k in found.items()}

    def launch(self, kernel: "AsyncKernel | Kernel", global_size: int | Sequence[int], *args: Any, **kw: Any) -> Event:
        return self.sync.launch(_sync(kernel), global_size, *[_sync(a) for a in args], **_sync_kw(kw))

    def submit(self, commands: Sequence[Any]) -> list[Event]:
        return self.sync.submit(commands)

    # -- events
    async def wait(self, *events: Event) -> None:
        """Waits for every event without blocking the loop; raises the first failure."""
        await wait(*events)

    async def cancel(self, *events: Event) -> int:
        return await asyncio.to_thread(self.sync.cancel, *events)

    # -- streams, graphs, regions
    async def stream(self, device: str = "") -> "AsyncStream":
        return AsyncStream(await asyncio.to_thread(self.sync.stream, device))

    def record(self) -> "AsyncGraphRecorder":
        """``async with session.record() as g:`` — commands issued inside are recorded, not run; ``g.graph`` then
        replays them."""
        return AsyncGraphRecorder(self.sync.record())

    async def region(self, nbytes: int) -> "AsyncRegion":
        return AsyncRegion(await asyncio.to_thread(self.sync.region, nbytes))


class AsyncBuffer(_Async):
    """A :class:`arrayd.Buffer` whose reads, writes and destruction are coroutines."""

    __slots__ = ()
    sync: Buffer

    id = property(lambda self: self.sync.id)
    dtype = property(lambda self: self.sync.dtype)
    shape = property(lambda self: self.sync.shape)
    device = property(lambda self: self.sync.device)
    mode = property(lambda self: self.sync.mode)
    padding = property(lambda self: self.sync.padding)
    numpy_dtype = property(lambda self: self.sync.numpy_dtype)
    size = property(lambda self: self.sync.size)
    nbytes = property(lambda self: self.sync.nbytes)
    padded_shape = property(lambda self: self.sync.padded_shape)
    padded_nbytes = property(lambda self: self.sync.padded_nbytes)

    async def numpy(self, *, wait_for: Iterable[Event] = (), out: np.ndarray | None = None) -> np.ndarray:
        return await asyncio.to_thread(self.sync.numpy, wait_for=wait_for, out=out)

    async def numpy_padded(self, *, wait_for: Iterable[Event] = ()) -> np.ndarray:
        return await asyncio.to_thread(self.sync.numpy_padded, wait_for=wait_for)

    async def write(self, data: Any, *, wait_for: Iterable[Event] = ()) -> Event:
        """Writes ``data`` over the whole buffer and waits until it is written; its (completed) event."""
        event = await asyncio.to_thread(self.sync.write, data, wait_for=wait_for)
        await event
        return event

    async def set_values(self, values: Any, *, wait_for: Iterable[Event] = ()) -> Event:
        return await self.write(values, wait_for=wait_for)

    async def get_values(self, *, wait_for: Iterable[Event] = ()) -> np.ndarray:
        return await self.numpy(wait_for=wait_for)

    def set_value(self, index: int | Sequence[int], value: float | int, *, wait_for: Iterable[Event] = ()) -> Event:
        return self.sync.set_value(index, value, wait_for=wait_for)

    async def get_value(self, index: int | Sequence[int], *, wait_for: Iterable[Event] = ()) -> Any:
        return await asyncio.to_thread(self.sync.get_value, index, wait_for=wait_for)

    def range(self, offset_bytes: int, size_bytes: int) -> BufferRange:
        return self.sync.range(offset_bytes, size_bytes)

    def host_written(self, *, wait_for: Iterable[Event] = ()) -> Event:
        return self.sync.host_written(wait_for=wait_for)

    async def destroy(self) -> None:
        await asyncio.to_thread(self.sync.destroy)

    # host-resident data (a buffer in a region): views of the region, no daemon call
    @property
    def __array_interface__(self) -> dict:
        return self.sync.__array_interface__

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any):
        return self.sync.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self.sync.__dlpack_device__()


class AsyncKernel(_Async):
    """A compiled kernel: ``kernel(n, *args)`` launches it and returns its event at once."""

    __slots__ = ()
    sync: Kernel

    id = property(lambda self: self.sync.id)
    name = property(lambda self: self.sync.name)
    params = property(lambda self: self.sync.params)

    def __call__(self, global_size: int | Sequence[int], *args: Any, **kw: Any) -> Event:
        k = self.sync
        return k.session.launch(k, global_size, *[_sync(a) for a in args], **_sync_kw(kw))


class AsyncStream(_Async):
    """An in-order stream: pass it (or ``.sync``) as ``stream=``."""

    __slots__ = ()
    sync: Stream

    id = property(lambda self: self.sync.id)
    device = property(lambda self: self.sync.device)

    async def destroy(self) -> None:
        await asyncio.to_thread(self.sync.destroy)


class AsyncGraph(_Async):
    """A recorded graph: :meth:`replay` queues its commands and returns their events at once."""

    __slots__ = ()
    sync: Graph

    id = property(lambda self: self.sync.id)
    size = property(lambda self: self.sync.size)

    def replay(self, **kw: Any) -> list[Event]:
        return self.sync.replay(**_sync_kw(kw))

    async def destroy(self) -> None:
        await asyncio.to_thread(self.sync.destroy)


class AsyncGraphRecorder:
    """``async with session.record() as g:`` (see :meth:`AsyncSession.record`); ``g.graph`` after the block."""

    def __init__(self, recorder: GraphRecorder):
        self.sync = recorder
        self.graph: AsyncGraph | None = None

    async def __aenter__(self) -> "AsyncGraphRecorder":
        self.sync.__enter__()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        await asyncio.to_thread(self.sync.__exit__, exc_type, exc, tb)
        if self.sync.graph is not None:
            self.graph = AsyncGraph(self.sync.graph)


class AsyncRegion(_Closable):
    """A shared-memory region (the daemon's Unix socket): views of it need no daemon call."""

    __slots__ = ()
    sync: Region

    id = property(lambda self: self.sync.id)
    size = property(lambda self: self.sync.size)

    def ndarray(self, dtype: Any = np.uint8, shape: int | Sequence[int] | None = None, offset: int = 0) -> np.ndarray:
        return self.sync.ndarray(dtype, shape, offset)

    async def buffer(self, shape: int | Sequence[int], dtype: Any = np.float32, **kw: Any) -> AsyncBuffer:
        return AsyncBuffer(await asyncio.to_thread(self.sync.buffer, shape, dtype, **kw))

    def upload(self, buffer: "AsyncBuffer | Buffer", **kw: Any) -> Event:
        return self.sync.upload(_sync(buffer), **_sync_kw(kw))

    def download(self, buffer: "AsyncBuffer | Buffer", **kw: Any) -> Event:
        return self.sync.download(_sync(buffer), **_sync_kw(kw))


async def connect(target: str = "127.0.0.1:7700", **kw: Any) -> AsyncClient:
    """:func:`arrayd.connect` for asyncio."""
    return AsyncClient(await asyncio.to_thread(_client.connect, target, **kw))
