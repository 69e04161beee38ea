"""Handles: buffers (with NumPy in and out), kernels (with their parameters, to convert arguments) and streams."""
from __future__ import annotations

from operator import is_
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from . import _dtypes, _wire
from ._convert import scalar
from ._errors import ArraydError
from .v1 import execution_pb2

if TYPE_CHECKING:
    from ._session import Session
    from ._event import Event


class _MergeBuffer:
    def __repr__(self) -> str:
        return "arrayd.MERGE_BUFFER"


#: A launch argument that stands for the merge buffer of the launch's stream (filled by a merge copy).
MERGE_BUFFER = _MergeBuffer()


class BufferRange:
    """A launch argument: ``size_bytes`` bytes of a buffer's memory from ``offset_bytes``, which the kernel sees as
    an array of its parameter's dtype whatever the buffer's own (``buf.range(offset, size)``). The offset is a
    multiple of the device's ``base_alignment_bytes``, the size a positive multiple of the parameter's element
    size; the daemon refuses others (``InvalidArgument``), and a range past the buffer's end (``OutOfRange``)."""

    def __init__(self, buffer: "Buffer", offset_bytes: int, size_bytes: int):
        if offset_bytes < 0 or size_bytes <= 0:
            raise ValueError(f"range [{offset_bytes}, +{size_bytes}) (expected: offset >= 0, size > 0)")
        self.buffer = buffer
        self.offset_bytes = offset_bytes
        self.size_bytes = size_bytes

    def __repr__(self) -> str:
        return f"BufferRange({self.buffer!r}, {self.offset_bytes}, {self.size_bytes})"


class Buffer:
    """A buffer of the daemon: a logical array with replicas on devices. ``numpy()`` reads it; ``write()``
    writes it; pass it to :meth:`Session.launch` and the copies."""

    def __init__(self, session: "Session", handle: int, dtype: str, shape: tuple[int, ...], device: str, mode: str,
                 region=None, region_offset: int = 0, padding: tuple[tuple[int, int], ...] | None = None):
        self.session = session
        #: a padded buffer's (left, right) padding per axis, else None; ``shape`` is then its interior's
        self.padding = padding
        self.id = handle
        #: the daemon's element type name: "f32", "f64", "i32", "i64", "u8", "f16" or "bf16"
        self.dtype = dtype
        self.shape = shape
        self.device = device
        self.mode = mode
        self._region = region
        self._region_offset = region_offset
        self._arg = _wire.buffer_arg(handle)  # as a launch argument, encoded once
        self._finalizer = None  # set by the session that tracks it (see Session.collect)

    @property
    def numpy_dtype(self) -> np.dtype:
        return _dtypes.numpy_of(self.dtype)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def nbytes(self) -> int:
        return self.size * self.numpy_dtype.itemsize

    @property
    def padded_shape(self) -> tuple[int, ...]:
        """The shape of its memory: ``shape`` grown by the padding (``shape`` itself when unpadded)."""
        if self.padding is None:
            return self.shape
        return tuple(l + d + r for d, (l, r) in zip(self.shape, self.padding))

    @property
    def padded_nbytes(self) -> int:
        return int(np.prod(self.padded_shape)) * self.numpy_dtype.itemsize

    def numpy_padded(self, *, wait_for: Iterable["Event"] = ()) -> np.ndarray:
        """The whole padded array (padding included) as a NumPy array of ``padded_shape``."""
        out = np.empty(self.padded_shape, dtype=self.numpy_dtype)
        for e in self.session.download(self, whole_padded=True, wait_for=wait_for,
                                       _into=memoryview(out.reshape(-1).view(np.uint8))):
            e.wait()
        return out

    def _linear(self, index: Sequence[int]) -> int:
        index = (index,) if isinstance(index, (int, np.integer)) else tuple(index)
        if len(index) != len(self.shape) or any(not 0 <= i < d for i, d in zip(index, self.shape)):
            raise IndexError(f"index: {index} (expected: {len(self.shape)} indexes inside the shape {self.shape})")
        return int(np.ravel_multi_index(index, self.shape))

    def set_value(self, index: int | Sequence[int], value: float | int, *, wait_for: Iterable["Event"] = ()) -> "Event":
        """Writes one element at ``index`` (of a padded buffer's interior), ordered like every other command."""
        return self.session.fill(self, value, offset=self._linear(index), count=1, wait_for=wait_for)

    def get_value(self, index: int | Sequence[int], *, wait_for: Iterable["Event"] = ()) -> Any:
        """Reads one element at ``index``, after every command submitted before it."""
        out = np.empty(1, dtype=self.numpy_dtype)
        size = self.numpy_dtype.itemsize
        for e in self.session.download(self, offset_bytes=self._linear(index) * size, size_bytes=size, wait_for=wait_for,
                                       _into=memoryview(out.view(np.uint8))):
            e.wait()
        return out[0]

    def set_values(self, values: Any, *, wait_for: Iterable["Event"] = ()) -> "Event":
        """Writes every element (of the interior) from ``values``: :meth:`write`, the seed's name."""
        return self.write(values, wait_for=wait_for)

    def get_values(self, *, wait_for: Iterable["Event"] = ()) -> np.ndarray:
        """Every element (of the interior): :meth:`numpy`, the seed's name."""
        return self.numpy(wait_for=wait_for)

    def range(self, offset_bytes: int, size_bytes: int) -> BufferRange:
        """Bytes of this buffer's memory as a launch argument of any dtype (see :class:`BufferRange`)."""
        return BufferRange(self, offset_bytes, size_bytes)

    def numpy(self, *, wait_for: Iterable["Event"] = (), out: np.ndarray | None = None) -> np.ndarray:
        """The contents as a NumPy array, after every command submitted before on it. A buffer that lives in
        a region returns a view of the region itself (no copy): it changes as the buffer does. With ``out`` (a
        writeable C-contiguous array of the buffer's dtype and shape) the contents are read into it and it is
        returned: no new array, so none of the page faults of first touching one (reuse it across reads)."""
        if self._region is None:
            return self.session.read(self, wait_for=wait_for, out=out)  # (checks out)
        if out is not None:
            self._check_out(out)
        self._settle_region(wait_for)
        if out is None:
            return self._view()
        np.copyto(out, self._view())
        return out

    def _check_out(self, out: Any) -> None:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out: {type(out).__name__} (expected: a numpy.ndarray)")
        if out.dtype != self.numpy_dtype or out.shape != tuple(self.shape):
            raise ValueError(f"out: {out.dtype}{list(out.shape)} (expected: {self.numpy_dtype}{list(self.shape)}, "
                             f"the dtype and shape of {self})")
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError(f"out: a {'non-contiguous' if not out.flags.c_contiguous else 'read-only'} array "
                             "(expected: writeable and C-contiguous)")

    def _settle_region(self, wait_for: Iterable["Event"]) -> None:
        """(A buffer in a region.) Returns once the region's bytes hold the buffer's data and every command
        submitted before that used them is done: a download of the buffer into its own bytes, which the daemon
        orders after every earlier use of them (nothing moves when they are current already)."""
        self.session._submit([self.session._command(wait_for=wait_for, download=execution_pb2.Download(
            buffer=self.id, into_region=self._region._slice(self._region_offset, 0)))])[0].wait()

    def write(self, data: Any, *, wait_for: Iterable["Event"] = ()) -> "Event":
        """Writes ``data`` (same number of elements; converted to the buffer's dtype) over the whole buffer, after
        every command submitted before on it. A buffer that lives in a region is written in place, once the
        commands before that use its bytes are done (this waits for them), and the daemon told so; that makes
        it good again after its last writer failed (an upload of all of it does, too)."""
        a = np.asarray(data)
        if a.size != self.size:
            raise ValueError(f"data: {a.size} elements (expected: {self.size}, the size of {self})")
        a = np.ascontiguousarray(a, dtype=self.numpy_dtype)
        if self._region is not None:
            for e in wait_for:
                e.wait()  # (raises a failed one's error: then nothing is written)
            # the region's bytes current and unused first: else a kernel still reading them would see ours, or a
            # newer copy from another device (an eviction's write-back) could land over them afterwards
            try:
                self._settle_region(())
            except ArraydError as ex:
                if not ex.message.startswith("waited on event"):
                    raise
                # the buffer's last writer failed (docs/api.md §4.2): the download settled after every earlier user
                # of the bytes all the same, and this write replaces all of them
            self._view()[...] = a.reshape(self.shape)
            return self.session.host_written(self)
        return self.session.upload(self, a, wait_for=wait_for)

    def host_written(self, *, wait_for: Iterable["Event"] = ()) -> "Event":
        """For a buffer living in a region: this process changed its bytes (see :meth:`Session.host_written`)."""
        return self.session.host_written(self, wait_for=wait_for)

    def destroy(self) -> None:
        self.session.destroy(self)

    # -- host-resident data: NumPy and DLPack see the region itself
    def _view(self) -> np.ndarray:
        if self._region is None:
            raise TypeError(f"{self}: not in host memory (only buffers created in a region are)")
        return self._region.ndarray(self.numpy_dtype, self.shape, self._region_offset)

    @property
    def __array_interface__(self) -> dict:
        return self._view().__array_interface__

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any):
        return self._view().__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self._view().__dlpack_device__()

    def __repr__(self) -> str:
        return f"Buffer(0x{self.id:x}, {self.dtype}{list(self.shape)} on {self.device or 'the first device'})"


class Kernel:
    """A compiled kernel: its handle and parameters (scalars are converted to their declared dtype)."""

    def __init__(self, session: "Session", handle: int, name: str, params: Sequence[tuple[str, str]]):
        self.session = session
        self.id = handle
        self.name = name
        #: per parameter: ("buffer" | "scalar", dtype name)
        self.params = list(params)
        self._field = _wire.kernel_field(handle)
        #: (args, device, global_size, encoded launch) of the last launch whose arguments cannot change (see
        #: Session.launch); holds those objects until the next launch of this kernel
        self._last: tuple | None = None

    def encoded_arguments(self, args: Sequence[Any]) -> bytes:
        """``args`` as the encoded ``Launch.args`` (buffers, numbers converted to their parameter's dtype,
        :data:`MERGE_BUFFER`, :class:`BufferRange` s), checked against the parameters."""
        if len(args) != len(self.params):
            raise TypeError(f"{self.name}: {len(args)} arguments (expected: {len(self.params)})")
        out = []
        for i, (a, (kind, dtype)) in enumerate(zip(args, self.params)):
            if kind == "buffer":
                if isinstance(a, Buffer):
                    out.append(a._arg)
                elif a is MERGE_BUFFER:
                    out.append(_wire.merge_buffer_arg())
                elif isinstance(a, BufferRange):
                    out.append(_wire.message_arg(4, execution_pb2.BufferRange(
                        buffer=a.buffer.id, offset_bytes=a.offset_bytes, size_bytes=a.size_bytes).SerializeToString()))
                else:
                    raise TypeError(f"{self.name}: argument {i}: {type(a).__name__} (expected: a Buffer of {dtype}, "
                                    f"or a BufferRange)")
            else:
                if isinstance(a, Buffer):
                    raise TypeError(f"{self.name}: argument {i}: a Buffer (expected: a {dtype} scalar)")
                out.append(_wire.message_arg(2, scalar(a, dtype, f"{self.name}: argument {i}").SerializeToString()))
        return b"".join(out)

    def __call__(self, global_size: int | Sequence[int], *args: Any, local_size: Sequence[int] | None = None,
                 device: str = "", wait_for: Iterable["Event"] = (), stream: "Stream | None" = None,
                 deadline: float | None = None, priority: str | None = None) -> "Event":
        """Launches it: ``kernel(n, a, b, c, n)`` is ``session.launch(kernel, n, a, b, c, n)`` (the same options)."""
        memo = self._last
        if memo is not None and memo[2] is global_size and memo[1] == device and local_size is None and not wait_for \
                and stream is None and deadline is None and priority is None:
            last = memo[0]
            if last is args or (len(last) == len(args) and all(map(is_, last, args))):
                # the loop of a pipelined program: the same launch again, straight to the stream (this is
                # _encoded_again's check, inlined: the call would cost 0.2 us of a launch's 0.7 us here)
                return self.session._submit_launch(memo[3])
        return self.session._launch(self, global_size, args, local_size, device, wait_for, stream, deadline, priority)

    def _encoded_again(self, global_size: Any, args: tuple, local_size: Sequence[int] | None,
                       device: str) -> bytes | None:
        """The last launch's encoding (``Session._encode_launch`` keeps it) when this one launches the same objects
        the same way, else None. (:meth:`__call__` makes the same check inline for a call without options.)"""
        memo = self._last
        if memo is not None and memo[2] is global_size and local_size is None and memo[1] == device:
            last = memo[0]
            if len(last) == len(args) and all(map(is_, last, args)):
                return memo[3]
        return None

    def __repr__(self) -> str:
        return f"Kernel({self.name!r})"


class Stream:
    """An in-order stream on one device: pass it as ``stream=`` to order commands one after the other."""

    def __init__(self, session: "Session", handle: int, device: str):
        self.session = session
        self.id = handle
        self.device = device

    def destroy(self) -> None:
        s = self.session
        s._ordered_unary("ExecutionService", "DestroyStream", execution_pb2.DestroyStreamRequest(session=s.id, stream=self.id),
                         execution_pb2.DestroyStreamResponse)

    def __repr__(self) -> str:
        return f"Stream(0x{self.id:x} on {self.device})"
