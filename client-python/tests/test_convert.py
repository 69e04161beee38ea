"""The conversions of calls' options and arguments to wire values: each valid name gives its wire value, and each
bad one raises ValueError or TypeError naming the option and the value."""
import time

import numpy as np
import pytest

from arrayd import _convert
from arrayd.v1 import common_pb2, execution_pb2


def test_every_named_option_gives_its_wire_value():
    assert _convert.mode_value("Hosted_Volatile") == common_pb2.MEMORY_MODE_HOSTED_VOLATILE
    assert _convert.priority_value(None) == execution_pb2.PRIORITY_UNSPECIFIED
    assert _convert.priority_value("high") == execution_pb2.PRIORITY_HIGH
    assert _convert.merge_value(None) == execution_pb2.MERGE_MODE_UNSPECIFIED
    assert _convert.merge_value("streaming") == execution_pb2.MERGE_MODE_STREAMING
    assert _convert.access_value("READ") == common_pb2.ACCESS_READ
    assert _convert.access_value("read_write") == common_pb2.ACCESS_READ_WRITE


@pytest.mark.parametrize("convert, bad, named", [
    (_convert.mode_value, "vram", "mode: 'vram'"),
    (_convert.mode_value, 3, "mode: 3"),
    (_convert.priority_value, "urgent", "priority: 'urgent'"),
    (_convert.priority_value, ["low"], "priority: ['low']"),
    (_convert.merge_value, "fast", "merge: 'fast'"),
    (_convert.merge_value, {}, "merge: {}"),
    (_convert.access_value, "readonly", "access: 'readonly'"),
    (_convert.access_value, None, "access: None"),
])
def test_a_bad_option_raises_value_error_naming_it(convert, bad, named):
    with pytest.raises(ValueError) as raised:
        convert(bad)
    assert str(raised.value).startswith(named) and "expected" in str(raised.value)


def test_a_deadline_is_an_absolute_time_that_many_seconds_from_now():
    assert _convert.deadline_timestamp(None) is None
    before = time.time()
    ts = _convert.deadline_timestamp(2.5)
    assert before + 2.5 - 0.01 <= ts.seconds + ts.nanos / 1e9 <= time.time() + 2.5 + 0.01


def test_padding_is_one_pair_per_axis():
    assert _convert.padding_pairs(None, 2) is None
    assert _convert.padding_pairs(np.int32(1), 3) == ((1, 1), (1, 1), (1, 1))
    assert _convert.padding_pairs([(0, 2), (1, 0)], 2) == ((0, 2), (1, 0))
    with pytest.raises(ValueError, match=r"padding: 1 pairs \(expected: 2"):
        _convert.padding_pairs([(1, 1)], 2)


def test_scalars_keep_their_dtype_and_refuse_what_does_not_fit():
    assert _convert.scalar(1.5, "f64", "x").f64 == 1.5
    assert _convert.scalar(np.float16(2), "f16", "x").f32 == 2.0
    assert _convert.scalar(255, "u8", "x").u8 == 255
    assert _convert.scalar(-2 ** 63, "i64", "x").i64 == -2 ** 63
    assert _convert.scalar(4.0, "i32", "x").i32 == 4
    with pytest.raises(ValueError, match=r"fill.value: 256 \(expected: 0 to 255 for u8\)"):
        _convert.scalar(256, "u8", "fill.value")
    with pytest.raises(ValueError, match="i32"):
        _convert.scalar(2 ** 31, "i32", "x")
    with pytest.raises(TypeError, match=r"x: 1.5 \(expected: an integer for i64\)"):
        _convert.scalar(1.5, "i64", "x")
