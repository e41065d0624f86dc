"""Per-op autograd overhead: forward + backward of a 50-op elementwise chain on small tensors,
reference against torch eager (CPU, float64), in the same process.

    python benchmarks/autograd.py [--repeat N] [--size N]

Prints the time per op (forward + its share of backward) for each system and the ratio
reference / torch. Target: ratio <= 5. Timings on shared machines are noisy: read the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import reference

CHAIN = 50


def chain(T, x, w):
    """50 elementwise ops mixing unary, binary-with-tensor and binary-with-scalar kinds."""
    h = x
    for i in range(CHAIN // 5):
        h = h * w  # binary, saves both
        h = h.tanh()  # unary, saves its result
        h = h + 0.5  # scalar
        h = h.sigmoid()
        h = h - x if i % 2 else h / w
    return h.sum()


def step(T, x, w):
    x.grad = None
    w.grad = None
    chain(T, x, w).backward()


def median_time(fn, repeat):
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--size", type=int, default=16, help="elements per tensor")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(args.size), rng.standard_normal(args.size)
    times = {}
    for name in ("reference", "torch"):
        if name == "torch":
            try:
                import torch as T
            except ImportError:
                print("torch is not installed: reference timing only")
                continue
            T.set_num_threads(1)
        else:
            T = reference
        x = T.tensor(a, dtype=T.float64, requires_grad=True)
        w = T.tensor(b, dtype=T.float64, requires_grad=True)
        times[name] = median_time(lambda T=T, x=x, w=w: step(T, x, w), args.repeat)
        print(
            f"{name:>9}: {times[name] / CHAIN * 1e6:8.1f} us per op (forward + backward), "
            f"{times[name] * 1e3:.2f} ms per chain"
        )
    if len(times) == 2:
        ratio = times["reference"] / times["torch"]
        print(f"ratio reference/torch: {ratio:.2f}x (target <= 5x) {'OK' if ratio <= 5 else 'ABOVE TARGET'}")


if __name__ == "__main__":
    main()
