"""arrayd's Python client: NumPy arrays in and out of an arrayd daemon, portable IR kernels written in
Python, pipelined commands ordered by events, and shared memory with a daemon on the same host.

    import numpy as np
    import arrayd

    @arrayd.kernel
    def vadd(k):
        n = k.scalar("n", "i64", min=0)
        a = k.buffer("a", "f32", "read", extent=n)
        b = k.buffer("b", "f32", "read", extent=n)
        c = k.buffer("c", "f32", "write", extent=n)
        i = k.let("i", k.global_id(0))
        with k.when(i < n):
            c[i] = a[i] + b[i]

    with arrayd.connect("127.0.0.1:7700") as client, client.session() as s:
        x = s.array(np.arange(1000, dtype=np.float32))
        y = s.array(np.ones(1000, dtype=np.float32))
        z = s.empty(1000, np.float32)
        kernels = s.compile(vadd)
        kernels["vadd"](1000, x, y, z, 1000)
        print(z.numpy()[:4])
"""
from . import ir
from ._buffer import MERGE_BUFFER, Buffer, BufferRange, Kernel, Stream
from ._client import TLS, Client, Device, connect
from ._dtypes import HAS_BFLOAT16
from ._errors import (AlreadyExists, ArraydError, Cancelled, CompileError, DeadlineExceeded, FailedPrecondition,
                      Internal, InvalidArgument, NotFound, OutOfRange, PermissionDenied, ResourceExhausted,
                      Unauthenticated, Unavailable)
from ._regions import Region
from ._event import Event
from ._graphs import Graph, GraphRecorder
from ._session import Session
from .ir import kernel

__version__ = "0.1.0"

__all__ = [
    "connect", "Client", "Session", "Device", "TLS", "Buffer", "Kernel", "Stream", "Event", "Graph", "GraphRecorder",
    "Region", "MERGE_BUFFER", "BufferRange", "HAS_BFLOAT16", "kernel", "ir",
    "ArraydError", "InvalidArgument", "OutOfRange", "NotFound", "AlreadyExists", "FailedPrecondition",
    "PermissionDenied", "Unauthenticated", "ResourceExhausted", "DeadlineExceeded", "Cancelled", "Unavailable",
    "Internal", "CompileError",
]
