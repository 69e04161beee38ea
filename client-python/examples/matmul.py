"""c = a @ b with a tiled IR kernel: 16 x 16 tiles of a and b in each work-group's local memory, barriers
between the phases; checked against NumPy.

    python examples/matmul.py [--target ...] [--n 256]
"""
import argparse

import numpy as np

import arrayd

TILE = 16


@arrayd.kernel(local_size=(TILE, TILE))
def matmul(k):
    a = k.buffer("a", "f32", "read")
    b = k.buffer("b", "f32", "read")
    c = k.buffer("c", "f32", "write")
    n = k.scalar("n", "i64", min=TILE, max=1 << 14)
    ta = k.local("ta", "f32", TILE * TILE)
    tb = k.local("tb", "f32", TILE * TILE)
    row = k.let("row", k.global_id(1))
    col = k.let("col", k.global_id(0))
    lx = k.let("lx", k.local_id(0))
    ly = k.let("ly", k.local_id(1))
    acc = k.var("acc", 0.0)
    with k.loop("t", 0, n // TILE) as t:
        ta[ly * TILE + lx] = a[row * n + t * TILE + lx]
        tb[ly * TILE + lx] = b[(t * TILE + ly) * n + col]
        k.barrier()
        with k.loop("kk", 0, TILE) as kk:
            acc.add(ta[ly * TILE + kk] * tb[kk * TILE + lx])
        k.barrier()
    c[row * n + col] = acc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", default="127.0.0.1:7700")
    p.add_argument("--n", type=int, default=256, help="edge of the square matrices (a multiple of 16)")
    args = p.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    with arrayd.connect(args.target) as client, client.session("example-matmul") as s:
        kernel = s.compile(matmul)["matmul"]
        x, y, z = s.array(a), s.array(b), s.empty((n, n), np.float32)
        done = kernel((n, n), x, y, z, n, local_size=(TILE, TILE))
        done.wait()
        result = z.numpy()
    np.testing.assert_allclose(result, a @ b, rtol=1e-4, atol=1e-3)
    print(f"matmul {n}x{n}: ok ({2 * n ** 3 / max(done.device_time, 1e-9) / 1e9:.1f} GFLOP/s on the device)")


if __name__ == "__main__":
    main()
