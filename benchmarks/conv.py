"""Reference convolution (float64, default im2col path) against torch CPU float64, same process.

Prints, for forward, input gradient and weight gradient on a tiny, a medium and a large case,
the ratio reference time / torch time (best of repeated runs, alternating the two, so that
background load hits both alike). Timings on shared machines
are noisy; the ratio against a peer measured in the same run is the figure to read.

    python benchmarks/conv.py [--repeat N] [--threads N]

``--threads N`` pins both sides to N threads (torch's intra-op pool and NumPy's BLAS, set
before NumPy loads). On a shared machine, ``--threads 1`` gives the steadier figure: a
2-thread kernel stalls whenever the other core is busy.

Targets: ≤ 1.5× on medium and large, ≤ 10× on tiny.
"""

from __future__ import annotations

import argparse
import os
import time

CASES = {
    "tiny": ((2, 3, 8, 8), (4, 3, 3, 3)),
    "medium": ((8, 16, 32, 32), (32, 16, 3, 3)),
    "large": ((16, 64, 56, 56), (64, 64, 3, 3)),
}
TARGET = {"tiny": 10.0, "medium": 1.5, "large": 1.5}
PARAMS = dict(stride=1, padding=1, dilation=1)


def _calibrate(fn, min_seconds: float) -> int:
    """How many calls make one timed sample last at least ``min_seconds``."""
    fn()  # warm-up
    inner = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        if time.perf_counter() - t0 >= min_seconds or inner >= 1 << 16:
            return inner
        inner *= 4


def paired_times(ours, theirs, repeat: int, min_seconds: float = 0.03) -> tuple[float, float]:
    """Best seconds per call of each, sampled alternately so that background load hits both."""
    loops = [_calibrate(f, min_seconds) for f in (ours, theirs)]
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for i, (fn, inner) in enumerate(zip((ours, theirs), loops)):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t0) / inner)
    return best[0], best[1]


def _ops(torch, x, w, gy):
    from reference.conv import convolution, convolution_backward

    """op name → (reference call, torch call) on the same float64 data."""
    tx, tw, tgy = torch.tensor(x), torch.tensor(w), torch.tensor(gy)
    p = (PARAMS["stride"], PARAMS["padding"], PARAMS["dilation"], False, 0, 1)
    tp = ([1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    backward = torch.ops.aten.convolution_backward
    return {
        "forward": (
            lambda: convolution(x, w, None, *p),
            lambda: torch.ops.aten.convolution(tx, tw, None, *tp),
        ),
        "grad_input": (
            lambda: convolution_backward(gy, x, w, None, *p, (True, False, False)),
            lambda: backward(tgy, tx, tw, None, *tp, [True, False, False]),
        ),
        "grad_weight": (
            lambda: convolution_backward(gy, x, w, None, *p, (False, True, False)),
            lambda: backward(tgy, tx, tw, None, *tp, [False, True, False]),
        ),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=7, help="timed samples per measurement (median is reported)"
    )
    parser.add_argument("--threads", type=int, default=None, help="threads for both torch and NumPy's BLAS")
    args = parser.parse_args(argv)
    if args.threads is not None:  # must happen before NumPy (and its BLAS) is imported
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    import numpy as np

    from reference.conv import convolution

    try:
        import torch
    except ImportError:
        print(
            "torch is not installed: this benchmark compares against torch CPU float64 (pip install refgrad[torch])"
        )
        return 2
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    blas = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__}, BLAS threads {blas}"
    )
    print(f"{'case':8} {'op':12} {'reference ms':>13} {'torch ms':>10} {'ratio':>7}  target")
    worst_over = 0.0
    rng = np.random.default_rng(0)
    for name, (xs, ws) in CASES.items():
        x, w = rng.standard_normal(xs), rng.standard_normal(ws)
        gy = rng.standard_normal(convolution(x, w, **PARAMS).shape)
        ops = _ops(torch, x, w, gy)
        with torch.no_grad():
            for op, (ours, theirs) in ops.items():
                t_ref, t_torch = paired_times(ours, theirs, args.repeat)
                ratio = t_ref / t_torch
                worst_over = max(worst_over, ratio / TARGET[name])
                flag = "ok" if ratio <= TARGET[name] else "OVER"
                print(
                    f"{name:8} {op:12} {t_ref * 1e3:13.3f} {t_torch * 1e3:10.3f} {ratio:7.2f}  ≤{TARGET[name]:g} {flag}"
                )
    print("all within target" if worst_over <= 1 else "some ratios are over target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
