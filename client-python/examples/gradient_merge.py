"""A data-parallel gradient on the daemon's first two devices, merged through a stream's merge buffer:
each device computes grad[i] = x[i] * (w * x[i] - y[i]) on its half of the data, the second device's
gradient is copied into the merge buffer of a stream on the first, and a kernel adds it there.

    python examples/gradient_merge.py [--target ...]   (a daemon with two devices: serve --devices cpu:2)
"""
import argparse

import numpy as np

import arrayd


@arrayd.kernel
def grad(k):
    x = k.buffer("x", "f32", "read", extent="n")
    y = k.buffer("y", "f32", "read", extent="n")
    g = k.buffer("g", "f32", "write", extent="n")
    w = k.scalar("w", "f32")
    n = k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        g[i] = x[i] * (w * x[i] - y[i])


@arrayd.kernel
def accumulate(k):
    other = k.buffer("other", "f32", "read", extent="n")
    total = k.buffer("total", "f32", "read_write", extent="n")
    n = k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        total[i] = total[i] + other[i]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", default="127.0.0.1:7700")
    p.add_argument("--n", type=int, default=1 << 16)
    args = p.parse_args()
    n, w = args.n, 0.5
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(2)]
    ys = [rng.standard_normal(n).astype(np.float32) for _ in range(2)]
    with arrayd.connect(args.target) as client, client.session("example-gradient") as s:
        devices = [d.id for d in client.devices()][:2]
        if len(devices) < 2:
            raise SystemExit(f"this example needs two devices; the daemon has {devices}")
        k = s.compile(grad, accumulate)
        grads = []
        for dev, x, y in zip(devices, xs, ys):
            g = s.empty(n, np.float32, device=dev)
            k["grad"](n, s.array(x, device=dev), s.array(y, device=dev), g, w, n, device=dev)
            grads.append(g)
        merge_on = s.stream(devices[0])
        s.copy(grads[1], merge="copy", stream=merge_on)     # the other device's gradient into the merge buffer
        done = s.launch(k["accumulate"], n, arrayd.MERGE_BUFFER, grads[0], n, stream=merge_on)
        total = grads[0].numpy(wait_for=[done])
    expected = sum(x * (np.float32(w) * x - y) for x, y in zip(xs, ys))
    np.testing.assert_allclose(total, expected, rtol=1e-6)
    print(f"gradient over {devices}, merged on {devices[0]}: ok (sum {total.sum():.4f})")


if __name__ == "__main__":
    main()
