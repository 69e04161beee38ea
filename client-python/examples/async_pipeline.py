"""asyncio: one task per device, each uploading its share of an array, running a few steps of
y = a * x + y on it and reading it back, all awaited together without blocking the loop; checked
against NumPy.

    python examples/async_pipeline.py [--target 127.0.0.1:7700 | unix:///run/arrayd/arrayd.sock]
"""
import argparse
import asyncio

import numpy as np

import arrayd
import arrayd.aio


@arrayd.kernel
def saxpy(k):
    a = k.scalar("a", "f32")
    x = k.buffer("x", "f32", "read", extent="n")
    y = k.buffer("y", "f32", "read_write", extent="n")
    n = k.scalar("n", "i64", min=0)
    i = k.let("i", k.global_id(0))
    with k.when(i < n):
        y[i] = a * x[i] + y[i]


async def on_device(s: arrayd.aio.AsyncSession, kernel: arrayd.aio.AsyncKernel, device: str, x: np.ndarray,
                    steps: int) -> np.ndarray:
    """``steps`` launches of ``y = 0.5 * x + y`` on ``device``, each after the one before (the buffer's hazards
    order them); the last one awaited, then ``y`` read back."""
    bx = await s.array(x, device=device)
    by = await s.zeros(len(x), np.float32, device=device)
    done = None
    for _ in range(steps):
        done = kernel(len(x), 0.5, bx, by, len(x), device=device)
    await done
    return await by.numpy()


async def run(target: str, n: int, steps: int) -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal(n).astype(np.float32)
    async with await arrayd.aio.connect(target) as client:
        devices = [d.id for d in await client.devices()]
        async with await client.session("example-async-pipeline") as s:
            kernel = (await s.compile(saxpy))["saxpy"]
            shares = np.array_split(data, len(devices))
            parts = await asyncio.gather(*(on_device(s, kernel, d, share, steps) for d, share in zip(devices, shares)))
    result = np.concatenate(parts)
    expected = np.zeros(n, np.float32)
    for _ in range(steps):
        expected = np.float32(0.5) * data + expected
    np.testing.assert_allclose(result, expected, rtol=1e-6)
    print(f"async pipeline of {n} floats over {len(devices)} devices, {steps} steps each: ok")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", default="127.0.0.1:7700")
    p.add_argument("--n", type=int, default=1 << 20)
    p.add_argument("--steps", type=int, default=8)
    args = p.parse_args()
    asyncio.run(run(args.target, args.n, args.steps))


if __name__ == "__main__":
    main()
