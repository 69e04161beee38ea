"""Shared memory with a daemon on this host (its Unix socket): regions the daemon creates and this process
maps, NumPy views over them, and buffers that live in them (zero copy on the CPU device)."""
from __future__ import annotations

import collections
import mmap
import os
import platform
import socket
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import _dtypes
from ._buffer import Buffer
from ._convert import mode_value
from ._errors import ArraydError, FailedPrecondition
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


#: The most bytes of regions the pool keeps for reuse once the arrays in them are gone, and the most regions.
POOL_IDLE_BYTES = 512 << 20
POOL_IDLE_REGIONS = 4


class ArrayPool:
    """New arrays that the daemon downloads into directly, each in a region of its own mapped here, which goes
    back to the pool once no array (nor view) uses its memory, for the next new array of about its size. A new
    array's pages are then mapped and touched already, where fresh memory costs the kernel's zeroing and a
    fault per page on first touch, about as much as the copy itself.

    A region is made only for a size read before without one, in the background, so that a read of a size read
    once goes as it would without the pool (through the staging region's ring into fresh memory) and leaves
    nothing behind; a size read in a loop gets its region from its second read on. Idle regions count in the
    tenant's memory quota like any region: the pool keeps at most ``POOL_IDLE_REGIONS`` of them,
    ``POOL_IDLE_BYTES`` in all, and destroys the others."""

    def __init__(self, session: "Session"):
        self._session = session
        self._idle: list[Region] = []
        self._returned: collections.deque = collections.deque()  # appended by finalizers: no lock, no call
        self._missed: set[int] = set()  # sizes read without a region
        self._lock = threading.Lock()
        self._maker: threading.Thread | None = None  # the thread making a region, if any
        self._closed = False
        self.created = 0  # regions made, and reads served from the pool (for tests)
        self.hits = 0

    def read(self, buffer: Buffer, wait_for: list) -> "np.ndarray | None":
        """``buffer``'s contents as a new array in a region of the pool, or None when no idle region fits it
        now: the caller reads into memory of its own."""
        n = buffer.nbytes
        region = self._take(n)
        if region is None:
            return None
        try:
            region.download(buffer, size_bytes=n, wait_for=wait_for).wait()
        except BaseException:
            self._discard(region)  # (the daemon may still write into it: destroyed, freed once its command ends)
            raise
        self.hits += 1
        # every array over these bytes, views of views included, has this one as its base (the first array of the
        # chain that NumPy keeps): once it is gone, so are they, and the region can take another new array
        flat = np.frombuffer(region._mm, dtype=buffer.numpy_dtype, count=n // buffer.numpy_dtype.itemsize)
        weakref.finalize(flat, self._returned.append, region)
        return flat.reshape(buffer.shape)

    def _take(self, n: int) -> "Region | None":
        with self._lock:
            while self._returned:
                self._idle.append(self._returned.popleft())
            fits = [r for r in self._idle if n <= r.size <= 2 * n]
            region = min(fits, key=lambda r: r.size) if fits else None
            if region is not None:
                self._idle.remove(region)
            elif n in self._missed and self._maker is None and not self._closed:
                self._maker = threading.Thread(target=self._make, args=(n,), name="arrayd-array-pool", daemon=True)
                self._maker.start()
            else:
                if len(self._missed) >= 64:
                    self._missed.clear()
                self._missed.add(n)
            extra = self._trim()
        for r in extra:
            self._discard(r)
        return region

    def settle(self, timeout: float | None = None) -> None:
        """Waits until no region is being made in the background (at most ``timeout`` seconds)."""
        with self._lock:
            maker = self._maker
        if maker is not None:
            maker.join(timeout)

    def _make(self, n: int) -> None:
        """(The maker thread.) A region of ``n`` bytes for the pool; none when the daemon refuses it (a full
        quota, no region memory left): that size keeps reading into fresh memory."""
        try:
            region = Region.create(self._session, n)
        except Exception:
            region = None
        with self._lock:
            self._maker = None
            self._missed.discard(n)
            if region is not None and not self._closed:
                self.created += 1
                self._idle.append(region)
                region = None
        if region is not None:  # (the session closed meanwhile, freeing it in the daemon)
            region._mm.close()

    def _trim(self) -> list:
        """(Under the lock.) Takes the idle regions past the pool's limits out of it, the largest first."""
        self._idle.sort(key=lambda r: r.size)
        extra = []
        while self._idle and (len(self._idle) > POOL_IDLE_REGIONS or sum(r.size for r in self._idle) > POOL_IDLE_BYTES):
            extra.append(self._idle.pop())
        return extra

    def _discard(self, region: Region) -> None:
        try:
            region.close()
        except Exception:
            pass  # (the session is gone: so is the region)

    def close(self) -> None:
        """The session is closing (which frees its regions in the daemon): unmaps the idle regions here."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle + list(self._returned), []
            self._returned.clear()
        for r in idle:
            try:
                r._mm.close()
            except BufferError:
                pass


#: The ring a staged transfer streams through where it can (see Staging): slots small enough to stay in the
#: cache between the daemon's copy and this process's, enough of them that neither side waits for the other.
RING_SLOT_BYTES = 1 << 20
RING_SLOTS = 8
_FILLED, _CONSUMED = 0, 8  # the ring's counts, as int64 indexes into it (bytes 0 and 64)
_RING_HEADER = 128
#: The ring's counts are plain loads and stores: ordered with the slots' bytes on x86-64 (TSO) only.
_RING_ORDERED = platform.machine().lower() in ("x86_64", "amd64")


class Staging:
    """The staging region of a session over the Unix socket: large array transfers copy through it instead of
    crossing the socket. A contiguous transfer with a buffer on a device whose streams copy host memory
    themselves (a cpu device) streams through a ring of small slots while the daemon copies into or out of the
    other slots (one command, counts in shared memory, no message per slot). Others copy through its two halves:
    this process fills or empties one while the daemon copies the other."""

    def __init__(self, region: Region):
        self.region = region
        self._half = region.size // 2
        self._lock = threading.Lock()
        self._ring_streams: dict[str, Any] = {}  # a buffer's device -> the session's ring stream there, or None
        self._counts = np.ndarray((_CONSUMED + 1,), dtype=np.int64, buffer=region._mm, offset=0)
        self._unfinished = None  # a ring transfer an exception left running

    @classmethod
    def open(cls, session: "Session", nbytes: int) -> "Staging | None":
        try:
            return cls(Region.create(session, nbytes))
        except Exception:
            return None  # a full quota or no region memory: arrays take the session stream

    def upload(self, buffer: Buffer, data: memoryview, offset: int, wait_for: list, stream) -> "Event":
        src = np.frombuffer(data, dtype=np.uint8)
        with self._lock:
            ring = self._ring_stream(buffer) if stream is None else None
            if ring is not None:
                e = self._ring_upload(buffer, src, offset, wait_for, ring)
                if e is not None:
                    return e
            return self._halves_upload(buffer, src, offset, wait_for, stream)

    def download(self, buffer: Buffer, out: np.ndarray, wait_for: list) -> None:
        with self._lock:
            ring = self._ring_stream(buffer)
            if ring is None or not self._ring_download(buffer, out, wait_for, ring):
                self._halves_download(buffer, out, wait_for)

    def _ring_stream(self, buffer: Buffer):
        """(Under the lock.) The stream ring transfers with ``buffer`` run on, or None where they cannot."""
        if not _RING_ORDERED or buffer.padding is not None:
            return None
        if buffer.device not in self._ring_streams:
            try:
                self._ring_streams[buffer.device] = self.region.session.stream(buffer.device)
            except ArraydError:
                self._ring_streams[buffer.device] = None
        return self._ring_streams[buffer.device]

    def _refused(self, buffer: Buffer, e: "Event", moved: bool) -> bool:
        """(The ring's command failed; ``moved``: the daemon took part.) True when the daemon refused the ring for
        the buffer's device before anything moved: the halves take this and later transfers there. Else raises
        the command's error."""
        error = e.exception()
        if not moved and isinstance(error, FailedPrecondition) and "_ring" in str(error):
            self._ring_streams[buffer.device] = None
            return True
        e.wait()
        return False

    def _await(self, index: int, at_least: int, e: "Event") -> bool:
        """Waits for the daemon's count at ``index`` to reach ``at_least``; False when its command ended first
        (failed: it completes only after its last slot). Polls without sleeping for about a millisecond, then
        every 100 us (the command may wait for others first)."""
        counts = self._counts
        polls = 0
        while counts[index] < at_least:
            polls += 1
            # sleep(0) lets the session's threads run (they send the command and read its completion)
            time.sleep(0 if polls < 1024 else 1e-4)
            if polls % 64 == 0 and e.done():
                return counts[index] >= at_least
        return True

    def _start_ring(self, size: int) -> regions_pb2.RegionRing:
        """The ring, its counts zeroed, once the daemon is done with it (a transfer left by an exception ends
        when the daemon gives up waiting for this process: 5 s)."""
        if self._unfinished is not None:
            try:
                self._unfinished.wait()
            except ArraydError:
                pass
            self._unfinished = None
        self._counts[_FILLED] = 0
        self._counts[_CONSUMED] = 0
        return regions_pb2.RegionRing(region=self.region.id, offset_bytes=0, slot_bytes=RING_SLOT_BYTES,
                                      slots=RING_SLOTS, size_bytes=size)

    def _ring_download(self, buffer: Buffer, out: np.ndarray, wait_for: list, stream) -> bool:
        size = buffer.nbytes
        s = self.region.session
        e = s._submit([s._command(wait_for=wait_for, stream=stream, download=execution_pb2.Download(
            buffer=buffer.id, size_bytes=size, into_ring=self._start_ring(size)))])[0]
        return self._move_pieces(buffer, e, out, size, download=True)

    def _ring_upload(self, buffer: Buffer, src: np.ndarray, offset: int, wait_for: list, stream) -> "Event | None":
        size = len(src)
        s = self.region.session
        e = s._submit([s._command(wait_for=wait_for, stream=stream, upload=execution_pb2.Upload(
            buffer=buffer.id, offset_bytes=offset, from_ring=self._start_ring(size)))])[0]
        return e if self._move_pieces(buffer, e, src, size, download=False) else None

    def _move_pieces(self, buffer: Buffer, e: "Event", array: np.ndarray, size: int, *, download: bool) -> bool:
        """This process's side of the ring transfer ``e``: empties each piece into ``array`` once the daemon has
        filled it (a download), or fills it from ``array`` once the daemon has emptied its slot (an upload), and
        publishes its count. True once the command succeeded; False when the daemon refused the ring for the
        buffer's device before anything moved; else raises the command's error."""
        e.done()  # sends it now, and completes it in the background should it fail
        view = self.region.ndarray(np.uint8)
        theirs, ours, lag = (_FILLED, _CONSUMED, 0) if download else (_CONSUMED, _FILLED, RING_SLOTS)
        try:
            for k, start in enumerate(range(0, size, RING_SLOT_BYTES)):
                if not self._await(theirs, k + 1 - lag, e):
                    return not self._refused(buffer, e, self._counts[theirs] > 0)
                slot = _RING_HEADER + (k % RING_SLOTS) * RING_SLOT_BYTES
                n = min(RING_SLOT_BYTES, size - start)
                if download:
                    array[start:start + n] = view[slot:slot + n]
                else:
                    view[slot:slot + n] = array[start:start + n]
                self._counts[ours] = k + 1
        except BaseException:
            self._unfinished = e
            raise
        try:
            e.wait()
        except FailedPrecondition:  # (an upload of at most RING_SLOTS pieces waits for nothing before this)
            return not self._refused(buffer, e, self._counts[theirs] > 0)
        return True

    def _halves_upload(self, buffer: Buffer, src: np.ndarray, offset: int, wait_for: list, stream) -> "Event":
        view = self.region.ndarray(np.uint8)
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

    def _halves_download(self, buffer: Buffer, out: np.ndarray, wait_for: list) -> None:
        view = self.region.ndarray(np.uint8)
        starts = list(range(0, buffer.nbytes, self._half))
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
        self._counts = None  # (a view of the mapping: it would keep it from closing)
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
