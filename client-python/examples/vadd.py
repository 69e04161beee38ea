"""c = a + b over a million floats on an arrayd daemon, checked against NumPy.

    python examples/vadd.py [--target 127.0.0.1:7700 | unix:///run/arrayd/arrayd.sock]
"""
import argparse

import numpy as np

import arrayd


@arrayd.kernel
def vadd(k):
    a = k.buffer("a", "f32", "read", extent="n")
    b = k.buffer("b", "f32", "read", extent="n")
    c = k.buffer("c", "f32", "write", extent="n")
    n = k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        c[i] = a[i] + b[i]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", default="127.0.0.1:7700")
    p.add_argument("--n", type=int, default=1 << 20)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    a = rng.standard_normal(args.n).astype(np.float32)
    b = rng.standard_normal(args.n).astype(np.float32)
    with arrayd.connect(args.target) as client, client.session("example-vadd") as s:
        x, y, z = s.array(a), s.array(b), s.empty(args.n, np.float32)
        kernel = s.compile(vadd)["vadd"]
        done = kernel(args.n, x, y, z, args.n)
        result = z.numpy(wait_for=[done])
    np.testing.assert_array_equal(result, a + b)
    print(f"vadd of {args.n} floats: ok (c[:3] = {result[:3]})")


if __name__ == "__main__":
    main()
