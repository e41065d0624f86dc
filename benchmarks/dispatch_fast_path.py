"""What ``dispatch.apply``'s fast path saves: the 50-op chain of benchmarks/autograd.py (forward +
backward, float64, small tensors) with the fast path on and off, interleaved in one process.

    python benchmarks/dispatch_fast_path.py [--repeat N] [--size N] [--quick]

Prints the time per op each way and the ratio plain / fast (the median over interleaved rounds
and the ratio of the best samples, see benchmarks/_timing.py). The figure is quoted in the comment
above ``dispatch.apply``; tests/autograd/test_dispatch_fast_path.py checks both paths agree.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _timing  # noqa: E402
from autograd import CHAIN, arguments, chain, step  # noqa: E402


def main(argv=None):
    args, a, b = arguments(argv, __doc__.split("\n")[0])
    import reference
    from reference.autograd import dispatch

    x = reference.tensor(a, dtype=reference.float64, requires_grad=True)
    w = reference.tensor(b, dtype=reference.float64, requires_grad=True)

    def run(enabled, what):
        def fn():
            dispatch.fast_path.enabled = enabled
            try:
                what(reference, x, w)
            finally:
                dispatch.fast_path.enabled = True

        return fn

    fns = {"fast step": run(True, step), "plain step": run(False, step)}
    fns.update({"fast forward": run(True, chain), "plain forward": run(False, chain)})
    repeat = 1 if args.quick else args.repeat
    t = _timing.Paired(fns, repeat, min_seconds=0.002 if args.quick else 0.005)
    for name in ("fast", "plain"):
        per_op = t.median(f"{name} step") / CHAIN * 1e6
        print(f"{name:>6} path: {per_op:8.1f} us per op (forward + backward), median of {repeat} round(s)")
    print(
        f"ratio plain/fast: {t.ratio('plain step', 'fast step'):.3f}x "
        f"(best samples {t.best_ratio('plain step', 'fast step'):.3f}x; the forward alone, recording the "
        f"graph: {t.ratio('plain forward', 'fast forward'):.3f}x), {_timing.CLOCK_NAME} time"
    )


if __name__ == "__main__":
    main()
