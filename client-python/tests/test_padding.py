"""Padded buffers and views from Python: the padding keeps its value, writes and reads address the interior,
kernels index the padded array (a stencil reads its halo without a test), views share memory, element access."""
import numpy as np
import pytest

import arrayd


@arrayd.kernel(grid_dims=2)
def stencil(k):
    """out[y, x] = 0.2 * (in[y, x] + its four neighbours), in interior coordinates of a buffer with a halo of 1."""
    src = k.buffer("src", "f32", "read")
    out = k.buffer("out", "f32", "write")
    w = k.scalar("w", "i64", min=1)
    h = k.scalar("h", "i64", min=1)
    x = k.let("x", k.global_id(0))
    y = k.let("y", k.global_id(1))
    row = k.let("row", w + 2)
    c = k.let("c", (y + 1) * row + x + 1)
    with k.when((x < w) & (y < h)):
        out[y * w + x] = 0.2 * (src[c] + src[c - 1] + src[c + 1] + src[c - row] + src[c + row])


def test_a_padded_buffer_keeps_its_padding_and_addresses_its_interior(target):
    data = np.arange(12, dtype=np.int64).reshape(3, 4)
    with arrayd.connect(target) as client, client.session() as s:
        buf = s.array(data, padding=[(1, 1), (2, 0)], pad_value=-7)
        assert buf.shape == (3, 4) and buf.padded_shape == (5, 6)
        np.testing.assert_array_equal(buf.numpy(), data)
        whole = buf.numpy_padded()
        expected = np.full((5, 6), -7, dtype=np.int64)
        expected[1:4, 2:6] = data
        np.testing.assert_array_equal(whole, expected)
        buf.set_value((2, 1), 99)
        assert buf.get_value((2, 1)) == 99
        expected[3, 3] = 99
        np.testing.assert_array_equal(buf.numpy_padded(), expected)
        with pytest.raises(IndexError):
            buf.get_value((3, 0))


def test_a_stencil_reads_the_halo_without_tests(session):
    rng = np.random.default_rng(3)
    grid = rng.standard_normal((64, 48)).astype(np.float32)
    k = session.compile(stencil)["stencil"]
    src = session.array(grid, padding=1, pad_value=1.0)
    out = session.empty(grid.size, np.float32)
    k((48, 64), src, out, 48, 64)
    p = np.pad(grid, 1, constant_values=np.float32(1.0))
    want = np.float32(0.2) * ((((p[1:-1, 1:-1] + p[1:-1, :-2]) + p[1:-1, 2:]) + p[:-2, 1:-1]) + p[2:, 1:-1])
    np.testing.assert_array_equal(out.numpy().reshape(64, 48), want)


def test_views_share_memory_and_outlive_their_base(session):
    base = session.array(np.zeros((2, 3, 4), np.float32), padding=[(0, 0), (0, 0), (1, 1)], pad_value=5.0)
    rows = session.view(base, (6, 4))
    assert rows.padding == ((0, 0), (1, 1))
    flat = session.view(base, 2 * 3 * 6, whole_padded=True)
    rows.write(np.arange(24, dtype=np.float32).reshape(6, 4))
    np.testing.assert_array_equal(base.numpy().reshape(6, 4), np.arange(24, dtype=np.float32).reshape(6, 4))
    base.destroy()
    whole = flat.numpy()
    assert whole[0] == 5.0 and whole[1] == 0.0 and whole[5] == 5.0
    with pytest.raises(arrayd.InvalidArgument, match=r"dims: \[3, 8\]"):
        session.view(rows, (3, 8))


def test_padded_buffers_and_views_from_asyncio(daemon):
    import asyncio

    import arrayd.aio

    async def main():
        async with await arrayd.aio.connect(daemon.target) as client:
            async with await client.session("aio-padding") as s:
                buf = await s.array(np.arange(6, dtype=np.int32).reshape(2, 3), padding=1, pad_value=-1)
                flat = await s.view(buf, 20, whole_padded=True)
                return await flat.numpy()

    whole = np.full((4, 5), -1, dtype=np.int32)
    whole[1:3, 1:4] = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(asyncio.run(main()), whole.reshape(-1))
