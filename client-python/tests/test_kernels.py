"""IR kernels from Python: every construct of the builder, checked against NumPy; refusals point at the
Python line; a guarded access out of range fails the launch with OUT_OF_RANGE."""
import numpy as np
import pytest

import arrayd
import kernels as K
from arrayd import ir


def test_vadd_and_saxpy_match_numpy(target):
    n = 100_003
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    with arrayd.connect(target) as client, client.session() as s:
        k = s.compile(K.vadd, K.saxpy)
        x, y, z = s.array(a), s.array(b), s.empty(n, np.float32)
        k["vadd"](n, x, y, z, n)
        np.testing.assert_array_equal(z.numpy(), a + b)
        s.launch(k["saxpy"], n, 2.0, x, y, n)
        np.testing.assert_array_equal(y.numpy(), np.float32(2.0) * a + b)


def test_local_memory_barriers_and_loops(session):
    n = 64 * 50 - 7
    data = np.random.default_rng(2).random(n).astype(np.float32)
    k = session.compile(K.group_sum, K.row_sums)
    x = session.array(data)
    partial = session.empty(50, np.float32)
    k["group_sum"](64 * 50, x, partial, n)
    np.testing.assert_allclose(partial.numpy().sum(), data.sum(), rtol=1e-5)
    m = np.random.default_rng(3).standard_normal((17, 9)).astype(np.float32)
    out = session.empty(17, np.float32)
    k["row_sums"](17, session.array(m), out, 17, 9)
    np.testing.assert_allclose(out.numpy(), np.abs(m.sum(axis=1)), rtol=1e-5)


def test_relaxed_math_is_opt_in_and_sums_stay_close(session):
    assert K.relaxed_row_sums.proto.relaxed_math and not K.row_sums.proto.relaxed_math
    m = np.random.default_rng(4).standard_normal((33, 1000)).astype(np.float32)
    k = session.compile(K.relaxed_row_sums)
    out = session.empty(33, np.float32)
    k["relaxed_row_sums"](33, session.array(m), out, 33, 1000)
    exact = np.abs(m.astype(np.float64).sum(axis=1))
    bound = 1000 * np.spacing(np.abs(m).astype(np.float64).sum(axis=1).astype(np.float32))
    assert np.all(np.abs(out.numpy() - exact) <= bound)


def test_a_refused_kernel_names_the_python_line(session):
    @arrayd.kernel
    def bad(k):
        x = k.buffer("x", "f32", "read_write", extent="n")
        k.scalar("n", "i64", min=0)
        i = k.let("i", k.global_id(0))
        x[i] = x[i] + ir.i32(1)  # f32 + i32: the daemon refuses the types
    with pytest.raises(arrayd.CompileError) as e:
        session.compile(bad)
    assert e.value.code.name == "INVALID_ARGUMENT"
    assert e.value.location.endswith(f"test_kernels.py:{bad_line()}"), e.value.location
    assert "x[i] = x[i] + ir.i32(1)" in str(e.value)


def bad_line() -> int:
    import inspect
    src, first = inspect.getsourcelines(test_a_refused_kernel_names_the_python_line)
    return first + next(i for i, line in enumerate(src) if "ir.i32(1)" in line)


def test_a_guarded_access_out_of_range_fails_the_launch(session):
    """Both launches on one device: the second writes part of `out` (its kernel may leave elements alone) over
    what the failed one left there; placed on the other device it would fail too, its transfer of `out` reading
    the failed writer's output (docs/api.md §4.2)."""
    k = session.compile(K.gather)["gather"]
    x = session.array(np.arange(4, dtype=np.float32))
    idx = session.array(np.array([0, 3, 9], dtype=np.int64))
    out = session.empty(3, np.float32)
    with pytest.raises(arrayd.OutOfRange, match="gather"):
        k(3, x, idx, out, 3, device="cpu:0").wait()
    idx.write(np.array([3, 2, 1], dtype=np.int64))
    k(3, x, idx, out, 3, device="cpu:0").wait()
    np.testing.assert_array_equal(out.numpy(), [3, 2, 1])


def test_bad_launches_are_refused(session):
    k = session.compile(K.vadd)["vadd"]
    x = session.empty(4, np.float32)
    with pytest.raises(TypeError, match="expected: 4"):
        k(4, x, x, x)
    with pytest.raises(TypeError, match="expected: a Buffer"):
        k(4, x, 1.0, x, 4)
    with pytest.raises(TypeError, match="expected: a i64 scalar"):
        k(4, x, x, x, x)
    with pytest.raises(ValueError, match="argument 3"):
        k(4, x, x, x, 2 ** 70)
    with pytest.raises(arrayd.InvalidArgument, match="global_dims"):
        session.launch(k, [4, 4, 4, 4], x, x, x, 4).wait()
    with pytest.raises(TypeError, match="truth value"):
        @arrayd.kernel
        def truthy(kb):
            n = kb.scalar("n", "i64")
            if kb.global_id(0) < n:
                pass


NATIVE_SCALE = """
ARRAYD_KERNEL void scale(ARRAYD_ITEM, float *x, float f, int64_t n) {
    int64_t i = arrayd_global_id(0);
    if (i < n) x[i] *= f;
}
"""
NATIVE_SIGNATURE = [("scale", [("x", "buffer", "f32", "read_write"), ("f", "scalar", "f32"), ("n", "scalar", "i64")])]


def test_native_source_needs_the_daemons_permission(session):
    with pytest.raises(arrayd.PermissionDenied, match="allow-native-source"):
        session.compile_source("c", NATIVE_SCALE, NATIVE_SIGNATURE)


def test_native_source_where_the_daemon_allows_it():
    from conftest import Daemon
    d = Daemon("--allow-native-source")
    try:
        with arrayd.connect(d.target) as client, client.session() as s:
            k = s.compile_source("c", NATIVE_SCALE, NATIVE_SIGNATURE)["scale"]
            x = s.array(np.arange(5, dtype=np.float32))
            k(5, x, 3.0, 5)
            np.testing.assert_array_equal(x.numpy(), 3 * np.arange(5))
            with pytest.raises(arrayd.CompileError, match="nope"):
                s.compile_source("c", "ARRAYD_KERNEL void scale(ARRAYD_ITEM, float *x, float f, int64_t n) { nope(); }",
                                 NATIVE_SIGNATURE)
    finally:
        d.stop()
