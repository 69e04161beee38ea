"""Element types: the daemon's data types and their NumPy dtypes."""
from __future__ import annotations

from typing import Any

import numpy as np

from .v1 import common_pb2 as pb

try:  # bf16 as a real NumPy dtype when ml_dtypes is installed
    import ml_dtypes as _ml_dtypes

    BFLOAT16: Any = np.dtype(_ml_dtypes.bfloat16)
    HAS_BFLOAT16 = True
except ImportError:  # else its bits as uint16
    BFLOAT16 = np.dtype(np.uint16)
    HAS_BFLOAT16 = False

#: name -> (wire enum, NumPy dtype)
DTYPES: dict[str, tuple[int, np.dtype]] = {
    "f32": (pb.DATA_TYPE_F32, np.dtype(np.float32)),
    "f64": (pb.DATA_TYPE_F64, np.dtype(np.float64)),
    "i32": (pb.DATA_TYPE_I32, np.dtype(np.int32)),
    "i64": (pb.DATA_TYPE_I64, np.dtype(np.int64)),
    "u8": (pb.DATA_TYPE_U8, np.dtype(np.uint8)),
    "f16": (pb.DATA_TYPE_F16, np.dtype(np.float16)),
    "bf16": (pb.DATA_TYPE_BF16, BFLOAT16),
}
_BY_WIRE = {wire: name for name, (wire, _) in DTYPES.items()}
_BY_NUMPY = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.int32): "i32",
             np.dtype(np.int64): "i64", np.dtype(np.uint8): "u8", np.dtype(np.float16): "f16"}
if HAS_BFLOAT16:
    _BY_NUMPY[BFLOAT16] = "bf16"


def name_of(dtype: Any) -> str:
    """The daemon's name ("f32", ...) of a NumPy dtype, a NumPy scalar type, or a name."""
    if isinstance(dtype, str) and dtype in DTYPES:
        return dtype
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"dtype: {dtype!r} (expected: one of {', '.join(DTYPES)} or a NumPy dtype of them)") from e
    if d in _BY_NUMPY:
        return _BY_NUMPY[d]
    raise TypeError(f"dtype: {d} (expected: float32, float64, int32, int64, uint8, float16"
                    f"{' or bfloat16' if HAS_BFLOAT16 else ''}; bf16 buffers read as uint16 without ml_dtypes)")


def wire(dtype: Any) -> int:
    return DTYPES[name_of(dtype)][0]


def numpy_of(name_or_wire: str | int) -> np.dtype:
    name = _BY_WIRE[name_or_wire] if isinstance(name_or_wire, int) else name_or_wire
    return DTYPES[name][1]


def name_of_wire(w: int) -> str:
    return _BY_WIRE[w]
