"""Reference convolution (float64, default path) against torch CPU float64, same process, one thread.

Prints, for forward, input gradient and weight gradient on a tiny, a medium and a large case,
the ratio reference time / torch time: the median over interleaved rounds of the per-round ratio,
and the ratio of the best samples (benchmarks/_timing.py says why both). Both sides run on one
thread (NumPy's BLAS through OMP/OPENBLAS/MKL_NUM_THREADS, set before NumPy loads; torch through
``torch.set_num_threads``), unless ``--threads`` says otherwise.

It then prints the *floor*: the GEMMs alone that the reference's default path runs for each role
(same shapes, operands already laid out, no im2col copy, no col2im), in NumPy, against torch's
whole kernel. A ratio below that floor is out of reach for NumPy code that keeps its arithmetic in
BLAS (the difference is OpenBLAS against torch's MKL on these shapes).

    python benchmarks/conv.py [--repeat N] [--threads N] [--quick]

``--quick``: the tiny case only, one round (seconds; a smoke test, not a measurement).

Targets (issue #16): medium and large ≤ 1.2 for forward and weight gradient, ≤ 1.5 for the input
gradient; tiny ≤ 10 (per-call overhead).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _timing  # noqa: E402

CASES = {
    "tiny": ((2, 3, 8, 8), (4, 3, 3, 3)),
    "medium": ((8, 16, 32, 32), (32, 16, 3, 3)),
    "large": ((16, 64, 56, 56), (64, 64, 3, 3)),
}
ROLES = ("forward", "grad_input", "grad_weight")
TARGETS = {"forward": 1.2, "grad_input": 1.5, "grad_weight": 1.2}
TINY_TARGET = 10.0


def target(case: str, role: str) -> float:
    return TINY_TARGET if case == "tiny" else TARGETS[role]


def _calls(torch, x, w, gy):
    """role → (reference call, torch call) on the same float64 data; stride 1, padding 1."""
    from reference.conv import convolution, convolution_backward

    tx, tw, tgy = torch.tensor(x), torch.tensor(w), torch.tensor(gy)
    p = (1, 1, 1, False, 0, 1)  # stride, padding, dilation, transposed, output_padding, groups
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


def _gemms(np, xs, ws, rng):
    """role → the GEMMs alone that the default path runs (stride 1, 'same' padding, one group).

    forward:     y[n] = w (O, C·K) @ cols[n] (C·K, P)            (im2col.forward)
    grad_input:  gx[n] = w_flipped (C, O·K) @ cols_gy[n] (O·K, P) (dgrad_transposed_conv: the
                 stride-1 default)
    grad_weight: Σ_n gy[n] (O, P) @ cols[n]ᵀ (P, C·K)             (im2col.grad_weight)
    """
    n, c, h, wd = xs
    o, _, kh, kw = ws
    k, p = kh * kw, h * wd
    w2 = rng.standard_normal((o, c * k))
    wf = rng.standard_normal((c, o * k))
    cols = rng.standard_normal((n, c * k, p))
    cols_gy = rng.standard_normal((n, o * k, p))
    gy = rng.standard_normal((n, o, p))
    return {
        "forward": lambda: np.matmul(w2, cols),
        "grad_input": lambda: np.matmul(wf, cols_gy),
        "grad_weight": lambda: np.matmul(gy, cols.transpose(0, 2, 1)).sum(axis=0),
    }


def measure_case(torch, np, xs, ws, repeat: int, min_seconds: float, floor: bool = False) -> dict:
    """role → {ratio, best_ratio, ref_ms, torch_ms[, floor]} for one (input, weight) shape."""
    from reference.conv import convolution

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    gy = rng.standard_normal(convolution(x, w, None, 1, 1, 1, False, 0, 1).shape)
    calls = _calls(torch, x, w, gy)
    gemms = _gemms(np, xs, ws, rng) if floor else {}
    out = {}
    with torch.no_grad():
        for role, (ours, theirs) in calls.items():
            fns = {"ref": ours, "torch": theirs}
            if floor:
                fns["gemm"] = gemms[role]
            t = _timing.Paired(fns, repeat, min_seconds)
            row = {
                "ratio": t.ratio("ref", "torch"),
                "best_ratio": t.best_ratio("ref", "torch"),
                "ref_ms": t.median("ref") * 1e3,
                "torch_ms": t.median("torch") * 1e3,
            }
            if floor:
                row["floor"] = t.ratio("gemm", "torch")
                row["floor_best"] = t.best_ratio("gemm", "torch")
            out[role] = row
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds per measurement")
    parser.add_argument(
        "--threads", type=int, default=1, help="threads for torch and NumPy's BLAS (default 1)"
    )
    parser.add_argument("--quick", action="store_true", help="tiny case, one round: a smoke test")
    args = parser.parse_args(argv)
    _timing.pin_threads(args.threads)  # before NumPy (and its BLAS) is imported
    import numpy as np

    try:
        import torch
    except ImportError:
        print(
            "torch is not installed: this benchmark compares against torch CPU float64 (pip install refgrad[torch])"
        )
        return 2
    torch.set_num_threads(args.threads)
    cases = {"tiny": CASES["tiny"]} if args.quick else CASES
    repeat, min_seconds = (1, 0.001) if args.quick else (args.repeat, 0.03)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); numpy {np.__version__}, "
        f"BLAS threads {_timing.blas_threads()}; float64; {repeat} interleaved round(s); {_timing.CLOCK_NAME} time"
    )
    print(
        f"{'case':8} {'role':12} {'ref ms':>9} {'torch ms':>9} {'ratio':>6} {'best':>6} "
        f"{'GEMM floor':>10}  target"
    )
    over = []
    for name, (xs, ws) in cases.items():
        rows = measure_case(torch, np, xs, ws, repeat, min_seconds, floor=(name != "tiny" or args.quick))
        for role in ROLES:
            r = rows[role]
            goal = target(name, role)
            flag = "(quick: no verdict)" if args.quick else _timing.verdict(r["ratio"], goal)
            if flag == "OVER":
                over.append(f"{name} {role}")
            floor = f"{r['floor']:10.2f}" if "floor" in r else f"{'':10}"
            print(
                f"{name:8} {role:12} {r['ref_ms']:9.3f} {r['torch_ms']:9.3f} {r['ratio']:6.2f} "
                f"{r['best_ratio']:6.2f} {floor}  ≤{goal:g} {flag}"
            )
    print(
        "ratio: median over rounds of reference/torch; best: ratio of the best samples; GEMM floor: "
        "the reference's GEMMs alone (NumPy/OpenBLAS) / torch's whole kernel"
    )
    if not args.quick:
        print("all within target" if not over else f"over target: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
