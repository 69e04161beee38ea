"""Errors: every failure the daemon answers is an :class:`ArraydError` carrying the gRPC status code and the
daemon's message; a subclass per code lets callers catch what they expect."""
from __future__ import annotations

import grpc


class ArraydError(Exception):
    """An error answered by the daemon (or the transport): ``code`` is the gRPC status code, ``message`` the
    daemon's text, which names the bad value."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


class InvalidArgument(ArraydError):
    """INVALID_ARGUMENT: a request that names a bad value."""


class OutOfRange(ArraydError):
    """OUT_OF_RANGE: an offset, size or index past what it addresses (a guarded kernel access included)."""


class NotFound(ArraydError):
    """NOT_FOUND: a handle, event or device that does not exist in this session."""


class AlreadyExists(ArraydError):
    """ALREADY_EXISTS: an event id used before."""


class FailedPrecondition(ArraydError):
    """FAILED_PRECONDITION: a call that does not fit the state (a region without the Unix socket, ...)."""


class PermissionDenied(ArraydError):
    """PERMISSION_DENIED: native source on a daemon without --allow-native-source, a read-only handle, ..."""


class Unauthenticated(ArraydError):
    """UNAUTHENTICATED: no token, or a wrong one."""


class ResourceExhausted(ArraydError):
    """RESOURCE_EXHAUSTED: a quota or a device's memory."""


class DeadlineExceeded(ArraydError):
    """DEADLINE_EXCEEDED: a command not started by its deadline, or a call over its time."""


class Cancelled(ArraydError):
    """CANCELLED: a command cancelled before it ran."""


class Unavailable(ArraydError):
    """UNAVAILABLE: the daemon cannot be reached, is shutting down, or lacks a backend."""


class Internal(ArraydError):
    """INTERNAL: a bug in the daemon; its message says where."""


class CompileError(InvalidArgument):
    """A kernel the daemon refused. For kernels built with :mod:`arrayd.ir`, ``location`` is the Python
    file and line of the statement or expression the daemon named, and it is part of the message."""

    def __init__(self, code: grpc.StatusCode, message: str, location: str | None = None, source: str | None = None):
        super().__init__(code, message if location is None else f"{message}\n  at {location}"
                         + (f": {source.strip()}" if source else ""))
        self.message = message
        self.location = location


_BY_CODE: dict[grpc.StatusCode, type[ArraydError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.OUT_OF_RANGE: OutOfRange,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.CANCELLED: Cancelled,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.INTERNAL: Internal,
}
_BY_NUMBER = {c.value[0]: c for c in grpc.StatusCode}


def status_code(number: int) -> grpc.StatusCode:
    """The gRPC status code of a google.rpc.Code number (as in completions and rejected batches)."""
    return _BY_NUMBER.get(number, grpc.StatusCode.UNKNOWN)


def error(code: grpc.StatusCode | int, message: str) -> ArraydError:
    """The exception for a status: the subclass of its code."""
    if isinstance(code, int):
        code = status_code(code)
    return _BY_CODE.get(code, ArraydError)(code, message)


def from_rpc(e: grpc.RpcError) -> ArraydError:
    """The exception for a failed call."""
    code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
    details = e.details() if hasattr(e, "details") else str(e)
    return error(code, details or "")
