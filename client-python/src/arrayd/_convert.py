"""Python values of calls' options and arguments as the wire's: memory modes, priorities, deadlines, accesses,
padding and scalars, each refused with a message that names it when it does not fit."""
from __future__ import annotations

import time
from typing import Any

import numpy as np
from google.protobuf import timestamp_pb2

from .v1 import common_pb2, execution_pb2

_MODES = {
    "device": common_pb2.MEMORY_MODE_DEVICE,
    "hosted_constant": common_pb2.MEMORY_MODE_HOSTED_CONSTANT,
    "hosted_changed_on_devices": common_pb2.MEMORY_MODE_HOSTED_CHANGED_ON_DEVICES,
    "hosted_volatile": common_pb2.MEMORY_MODE_HOSTED_VOLATILE,
    "local": common_pb2.MEMORY_MODE_LOCAL,
}
_MERGE_MODES = {None: execution_pb2.MERGE_MODE_UNSPECIFIED, "copy": execution_pb2.MERGE_MODE_COPY,
                "streaming": execution_pb2.MERGE_MODE_STREAMING}
_PRIORITIES = {None: execution_pb2.PRIORITY_UNSPECIFIED, "low": execution_pb2.PRIORITY_LOW,
               "normal": execution_pb2.PRIORITY_NORMAL, "high": execution_pb2.PRIORITY_HIGH}
_ACCESSES = {"read": common_pb2.ACCESS_READ, "write": common_pb2.ACCESS_WRITE, "read_write": common_pb2.ACCESS_READ_WRITE}


def mode_value(mode: str) -> int:
    """A buffer's memory mode by name (``device``, ``hosted_constant``, …)."""
    try:
        return _MODES[mode.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"mode: {mode!r} (expected: one of {', '.join(_MODES)})") from None


def priority_value(priority: str | None) -> int:
    """A command's priority class: ``low``, ``normal``, ``high``, or None for the session's."""
    try:
        return _PRIORITIES[priority]
    except (KeyError, TypeError):
        raise ValueError(f"priority: {priority!r} (expected: low, normal or high)") from None


def deadline_timestamp(deadline: float | None) -> timestamp_pb2.Timestamp | None:
    """A deadline in seconds from now as the wire's absolute Timestamp."""
    if deadline is None:
        return None
    ts = timestamp_pb2.Timestamp()
    ts.FromNanoseconds(int((time.time() + deadline) * 1e9))
    return ts


def merge_value(merge: str | None) -> int:
    """A copy's merge mode: ``copy``, ``streaming``, or None for the daemon's choice."""
    try:
        return _MERGE_MODES[merge]
    except (KeyError, TypeError):
        raise ValueError(f"merge: {merge!r} (expected: copy, streaming or None)") from None


def access_value(access: str) -> int:
    """A native kernel parameter's access: ``read``, ``write`` or ``read_write``."""
    try:
        return _ACCESSES[access.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"access: {access!r} (expected: read, write or read_write)") from None


def padding_pairs(padding: Any, rank: int) -> tuple[tuple[int, int], ...] | None:
    """``n`` (both sides of every axis) or one ``(left, right)`` pair per axis, as pairs; None for no padding."""
    if padding is None:
        return None
    if isinstance(padding, (int, np.integer)):
        return tuple((int(padding), int(padding)) for _ in range(rank))
    pairs = tuple((int(l), int(r)) for l, r in padding)
    if len(pairs) != rank:
        raise ValueError(f"padding: {len(pairs)} pairs (expected: {rank}, one (left, right) pair per axis)")
    return pairs


def scalar(value: Any, dtype: str, what: str) -> common_pb2.Scalar:
    """``value`` as a wire scalar of ``dtype``, refusing what does not fit (naming ``what``)."""
    if dtype in ("f32", "f16", "bf16"):
        return common_pb2.Scalar(f32=float(value))
    if dtype == "f64":
        return common_pb2.Scalar(f64=float(value))
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise TypeError(f"{what}: {value!r} (expected: an integer for {dtype})")
    v = int(value)
    bounds = {"i32": (-2 ** 31, 2 ** 31 - 1), "i64": (-2 ** 63, 2 ** 63 - 1), "u8": (0, 255)}[dtype]
    if not bounds[0] <= v <= bounds[1]:
        raise ValueError(f"{what}: {v} (expected: {bounds[0]} to {bounds[1]} for {dtype})")
    return common_pb2.Scalar(**{dtype: v})
