"""Per-op autograd overhead: forward + backward of a 50-op elementwise chain on small tensors,
reference against torch eager (CPU, float64, one thread), in the same process.

    python benchmarks/autograd.py [--repeat N] [--size N] [--quick]

On 16-element tensors the arithmetic is negligible, so the time is the framework's own per-op
work: dispatch, recording the node, saving tensors, the engine, the backward formulas. Prints the
time per op (forward + its share of backward) and the ratio reference / torch (the median over
interleaved rounds and the ratio of the best samples, see benchmarks/_timing.py), split into the
forward (recording) and the backward pass. ``--quick``: one round (a smoke test).

Target (issue #16): ratio ≤ 3.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _timing  # noqa: E402

CHAIN = 50
TARGET = 3.0


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


def arguments(argv, description):
    """``(args, a, b)``: the command line (--repeat, --size, --quick) and the chain's two inputs
    (NumPy, seeded); threads pinned to one."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeat", type=int, default=30, help="interleaved rounds")
    parser.add_argument("--size", type=int, default=16, help="elements per tensor")
    parser.add_argument("--quick", action="store_true", help="one round: a smoke test")
    args = parser.parse_args(argv)
    _timing.pin_threads(1)
    import numpy as np

    rng = np.random.default_rng(0)
    return args, rng.standard_normal(args.size), rng.standard_normal(args.size)


def main(argv=None):
    args, a, b = arguments(argv, __doc__.split("\n")[0])
    import reference

    fns = {}
    systems = {"reference": reference}
    try:
        import torch

        torch.set_num_threads(1)
        systems["torch"] = torch
    except ImportError:
        print("torch is not installed: reference timing only")
    for name, T in systems.items():
        x = T.tensor(a, dtype=T.float64, requires_grad=True)
        w = T.tensor(b, dtype=T.float64, requires_grad=True)
        fns[f"{name} step"] = lambda T=T, x=x, w=w: step(T, x, w)
        fns[f"{name} forward"] = lambda T=T, x=x, w=w: chain(T, x, w)
    repeat = 1 if args.quick else args.repeat
    # short samples (a few ms): a sample that spans a scheduler tick is lost to another process
    t = _timing.Paired(fns, repeat, min_seconds=0.002 if args.quick else 0.005)
    for name in systems:
        per_op = t.median(f"{name} step") / CHAIN * 1e6
        print(
            f"{name:>9}: {per_op:8.1f} us per op (forward + backward), median of {repeat} round(s), {_timing.CLOCK_NAME} time"
        )
    if len(systems) == 2:
        ratio = t.ratio("reference step", "torch step")
        best = t.best_ratio("reference step", "torch step")
        fwd = t.ratio("reference forward", "torch forward")
        verdict = "(quick: no verdict)" if args.quick else _timing.verdict(ratio, TARGET)
        print(
            f"ratio reference/torch: {ratio:.2f}x (best samples {best:.2f}x; the forward alone, recording "
            f"the graph: {fwd:.2f}x) target <= {TARGET:g}x {verdict}"
        )


if __name__ == "__main__":
    main()
