"""Shared memory with a daemon on this host (its Unix socket): regions the daemon creates and this process
maps, NumPy views over them, and buffers that live in them (zero copy on the CPU device)."""
from __future__ import annotations

import mmap
import os
import socket
import threading
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import _dtypes
from ._buffer import Buffer
from ._convert import mode_value
from ._errors import FailedPrecondition
from .v1 import buffers_pb2, execution_pb2, regions_pb2

if TYPE_CHECKING:
    from ._session import Session
    from ._event import Event


class Region:
    """A shared-memory region mapped into this process. Views (:meth:`ndarray`) read and write its bytes
    directly; :meth:`buffer` makes a buffer that lives in it. :meth:`close` unmaps it and destroys it."""

    def __init__(self, session: "Session", handle: int, size: int, mapping: mmap.mmap):
        self.session = session
        self.id = handle
        self.size = size
        self._mm = mapping

    @classmethod
    def create(cls, session: "Session", nbytes: int) -> "Region":
        client = session._client
        if client._unix_socket is None:
            raise FailedPrecondition(_code("FAILED_PRECONDITION"), f"region: {client.target} is not a unix:// target "
                                     "(shared memory needs the daemon's Unix socket)")
        r = client._unary("RegionService", "CreateRegion",
                          regions_pb2.CreateRegionRequest(session=session.id, size_bytes=nbytes),
                          regions_pb2.CreateRegionResponse)
        fd = _claim(r.descriptor_socket, r.claim)
        try:
            # populated now: the first writes to its pages do not fault one page at a time
            flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
            mapping = mmap.mmap(fd, r.size_bytes, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        return cls(session, r.region, r.size_bytes, mapping)

    def ndarray(self, dtype: Any = np.uint8, shape: int | Sequence[int] | None = None, offset: int = 0) -> np.ndarray:
        """A NumPy view of the region's bytes from ``offset`` (no copy)."""
        dt = np.dtype(_dtypes.numpy_of(_dtypes.name_of(dtype))) if not isinstance(dtype, np.dtype) else dtype
        if shape is None:
            shape = ((self.size - offset) // dt.itemsize,)
        return np.ndarray(shape, dtype=dt, buffer=self._mm, offset=offset)

    def buffer(self, shape: int | Sequence[int], dtype: Any = np.float32, *, offset: int = 0,
               mode: str = "hosted_changed_on_devices", device: str = "", label: str = "") -> Buffer:
        """A hosted buffer that lives in this region from ``offset`` (a multiple of 64): the region's bytes are
        its contents; the CPU device launches on them in place; ``numpy()`` of it is a view of them."""
        dims = [int(shape)] if isinstance(shape, (int, np.integer)) else [int(d) for d in shape]
        name = _dtypes.name_of(dtype)
        s = self.session
        req = buffers_pb2.CreateBufferRequest(session=s.id, dtype=_dtypes.wire(name), dims=dims, memory_mode=mode_value(mode),
                                              device=device, label=label, host_region=self._slice(offset, 0))
        s.collect()
        info = s._client._unary("BufferService", "CreateBuffer", req, buffers_pb2.CreateBufferResponse).buffer
        return s._adopt(Buffer(s, info.buffer, name, tuple(dims), info.device, mode, region=self, region_offset=offset))

    def upload(self, buffer: Buffer, *, region_offset: int = 0, size_bytes: int | None = None, buffer_offset: int = 0,
               wait_for=(), stream=None) -> "Event":
        """Copies ``size_bytes`` of the region (from ``region_offset``) into ``buffer`` at ``buffer_offset``."""
        size = buffer.nbytes - buffer_offset if size_bytes is None else size_bytes
        s = self.session
        return s._submit([s._command(wait_for=wait_for, stream=stream, upload=execution_pb2.Upload(
            buffer=buffer.id, offset_bytes=buffer_offset, from_region=self._slice(region_offset, size)))])[0]

    def download(self, buffer: Buffer, *, region_offset: int = 0, buffer_offset: int = 0, size_bytes: int = 0,
                 wait_for=(), stream=None) -> "Event":
        """Copies bytes of ``buffer`` (0: to its end) into the region at ``region_offset``."""
        s = self.session
        return s._submit([s._command(wait_for=wait_for, stream=stream, download=execution_pb2.Download(
            buffer=buffer.id, offset_bytes=buffer_offset, size_bytes=size_bytes,
            into_region=self._slice(region_offset, size_bytes)))])[0]

    def _slice(self, offset: int, size: int) -> regions_pb2.RegionSlice:
        return regions_pb2.RegionSlice(region=self.id, offset_bytes=offset, size_bytes=size)

    def close(self) -> None:
        """Destroys the region in the session (its memory stays while buffers live in it) and unmaps it here
        (left to the garbage collector while NumPy views of it exist)."""
        s = self.session
        try:
            s._ordered_unary("RegionService", "DestroyRegion", regions_pb2.DestroyRegionRequest(session=s.id, region=self.id),
                             regions_pb2.DestroyRegionResponse)
        finally:
            try:
                self._mm.close()
            except BufferError:
                pass  # views still use it

    def __enter__(self) -> "Region":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Region(0x{self.id:x}, {self.size} bytes)"


class Staging:
    """The staging region of a session over the Unix socket: large array transfers copy through its two
    halves (this process fills or empties one while the daemon copies the other) instead of crossing the
    socket."""

    def __init__(self, region: Region):
        self.region = region
        self._half = region.size // 2
        self._lock = threading.Lock()

    @classmethod
    def open(cls, session: "Session", nbytes: int) -> "Staging | None":
        try:
            return cls(Region.create(session, nbytes))
        except Exception:
            return None  # a full quota or no region memory: arrays take the session stream

    def upload(self, buffer: Buffer, data: memoryview, offset: int, wait_for: list, stream) -> "Event":
        src = np.frombuffer(data, dtype=np.uint8)
        view = self.region.ndarray(np.uint8)
        with self._lock:
            in_use: list = [None, None]
            last = None
            for i, start in enumerate(range(0, len(src), self._half)):
                half = i % 2
                if in_use[half] is not None:
                    in_use[half].wait()
                n = min(self._half, len(src) - start)
                view[half * self._half:half * self._half + n] = src[start:start + n]
                last = self.region.upload(buffer, region_offset=half * self._half, size_bytes=n, buffer_offset=offset + start,
                                          wait_for=wait_for if i == 0 else (), stream=stream)
                in_use[half] = last
            for e in in_use:
                if e is not None:
                    e.wait()
            return last

    def download(self, buffer: Buffer, out: np.ndarray, wait_for: list) -> None:
        view = self.region.ndarray(np.uint8)
        starts = list(range(0, buffer.nbytes, self._half))
        with self._lock:
            in_flight: list = []  # (event, half, start, n): at most two, one per half

            def submit(i: int) -> None:
                start = starts[i]
                n = min(self._half, buffer.nbytes - start)
                half = i % 2
                e = self.region.download(buffer, region_offset=half * self._half, buffer_offset=start, size_bytes=n,
                                         wait_for=wait_for if i == 0 else ())
                in_flight.append((e, half, start, n))

            for i in range(min(2, len(starts))):
                submit(i)
            nxt = len(in_flight)
            while in_flight:
                e, half, start, n = in_flight.pop(0)
                e.wait()
                out[start:start + n] = view[half * self._half:half * self._half + n]
                if nxt < len(starts):  # this half is free again: the daemon fills it while the other is copied out
                    submit(nxt)
                    nxt += 1

    def close(self) -> None:
        try:
            self.region.close()
        except Exception:
            pass


def _claim(descriptor_socket: str, claim: str) -> int:
    """Receives a region's file descriptor for its claim (SCM_RIGHTS over the daemon's region socket)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(descriptor_socket)
        s.sendall(claim.encode("ascii") + b"\n")
        _msg, fds, _flags, _addr = socket.recv_fds(s, 1, 1)
    if not fds:
        raise FailedPrecondition(_code("FAILED_PRECONDITION"), f"region: no descriptor for claim {claim[:8]}… "
                                 "(claimed already, or the region is gone)")
    return fds[0]


def _code(name: str):
    import grpc
    return getattr(grpc.StatusCode, name)
