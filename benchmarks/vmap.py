"""Per-sample gradients of a small conv net (batch 64): ``vmap(grad(loss))`` against the loop
over samples, both in the reference, and against ``torch.func.vmap(torch.func.grad(loss))``
(float64, CPU), measured in the same run.

Prints two ratios (median over interleaved rounds, and the ratio of the best samples; see
benchmarks/_timing.py):

* reference loop / reference vmap: what the batch rules buy over slicing (above 1: vmap faster);
* reference vmap / torch.func vmap: how far the oracle is from the framework. Target (issue #16): ≤ 2.

    python benchmarks/vmap.py [--batch 64] [--repeat N] [--threads N] [--quick]

``--threads N`` pins torch's intra-op pool and NumPy's BLAS to N threads (default 1; set before
NumPy loads). ``--quick``: batch 4, one round (a smoke test).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _timing  # noqa: E402

TARGET = 2.0


def _loss(M, p, x, y):
    """conv(3x3) -> relu -> conv(3x3, stride 2) -> relu -> linear -> cross-entropy, one sample."""
    F = M.nn.functional
    h = F.conv2d(x.unsqueeze(0), p["w1"], p["b1"], padding=1).relu()
    h = F.conv2d(h, p["w2"], p["b2"], stride=2, padding=1).relu()
    h = h.reshape(1, -1) @ p["lin_w"].t() + p["lin_b"]
    return -(F.log_softmax(h, 1) * y).sum()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5, help="interleaved rounds")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="batch 4, one round: a smoke test")
    args = ap.parse_args(argv)
    if args.quick:
        args.batch, args.repeat = 4, 1
    _timing.pin_threads(args.threads)
    import numpy as np

    import reference as T
    from reference.func import fallback_counts, grad, reset_fallback_counts, vmap

    rng = np.random.default_rng(0)
    shapes = {
        "w1": (8, 3, 3, 3),
        "b1": (8,),
        "w2": (16, 8, 3, 3),
        "b2": (16,),
        "lin_w": (10, 16 * 8 * 8),
        "lin_b": (10,),
    }
    params = {k: rng.standard_normal(s) * 0.1 for k, s in shapes.items()}
    x = rng.standard_normal((args.batch, 3, 16, 16))
    y = np.eye(10)[rng.integers(0, 10, args.batch)]

    rp = {k: T.tensor(v, dtype=T.float64) for k, v in params.items()}
    rx, ry = T.tensor(x, dtype=T.float64), T.tensor(y, dtype=T.float64)
    per_sample = grad(lambda p, x, y: _loss(T, p, x, y))

    def ref_vmap():
        return vmap(per_sample, (None, 0, 0), allow_fallback=False)(rp, rx, ry)

    def ref_loop():
        return [per_sample(rp, rx[k], ry[k]) for k in range(args.batch)]

    reset_fallback_counts()
    a, b = ref_vmap(), ref_loop()
    for k in shapes:  # the two agree before anything is timed
        np.testing.assert_allclose(
            a[k].detach().numpy(), np.stack([g[k].detach().numpy() for g in b]), rtol=1e-9, atol=1e-12
        )
    assert fallback_counts() == {}, fallback_counts()
    fns = {"ref vmap": ref_vmap, "ref loop": ref_loop}
    print(
        f"per-sample gradients, batch {args.batch}, float64, {args.threads} thread(s), {args.repeat} round(s)"
    )
    try:
        import torch
        from torch import func as tf
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(args.threads)
        tp = {k: torch.tensor(v) for k, v in params.items()}
        tx, ty = torch.tensor(x), torch.tensor(y)
        tgrad = tf.vmap(tf.grad(lambda p, x, y: _loss(torch, p, x, y)), (None, 0, 0))
        want = tgrad(tp, tx, ty)
        for k in shapes:
            np.testing.assert_allclose(a[k].detach().numpy(), want[k].numpy(), rtol=1e-9, atol=1e-12)
        fns["torch vmap"] = lambda: tgrad(tp, tx, ty)
    t = _timing.Paired(fns, args.repeat, min_seconds=0.001 if args.quick else 0.02)
    loop = t.ratio("ref loop", "ref vmap")
    print(f"  reference vmap(grad):     {t.median('ref vmap') * 1e3:9.1f} ms")
    print(f"  reference loop of grad:   {t.median('ref loop') * 1e3:9.1f} ms   loop / vmap = {loop:.2f}x")
    if torch is None:
        print("  torch.func: not installed (no ratio)")
        return 0
    ratio, best = t.ratio("ref vmap", "torch vmap"), t.best_ratio("ref vmap", "torch vmap")
    verdict = "(quick: no verdict)" if args.quick else _timing.verdict(ratio, TARGET)
    print(
        f"  torch.func vmap(grad):    {t.median('torch vmap') * 1e3:9.1f} ms   reference / torch = "
        f"{ratio:.2f}x (best samples {best:.2f}x) target <= {TARGET:g}x {verdict}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
