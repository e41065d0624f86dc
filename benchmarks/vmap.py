"""Per-sample gradients of a small conv net (batch 64): ``vmap(grad(loss))`` against the loop
over samples, both in the reference, and against ``torch.func.vmap(torch.func.grad(loss))``
(float64, CPU), measured in the same run.

Prints two ratios:

* reference loop / reference vmap: what the batch rules buy over slicing (above 1: vmap faster);
* reference vmap / torch.func vmap: how far the oracle is from the framework.

    python benchmarks/vmap.py [--batch 64] [--repeat N] [--threads N]

``--threads N`` pins torch's intra-op pool and NumPy's BLAS to N threads (set before NumPy loads).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def _loss(M, p, x, y):
    """conv(3x3) -> relu -> conv(3x3, stride 2) -> relu -> linear -> cross-entropy, one sample."""
    F = M.nn.functional
    h = F.conv2d(x.unsqueeze(0), p["w1"], p["b1"], padding=1).relu()
    h = F.conv2d(h, p["w2"], p["b2"], stride=2, padding=1).relu()
    h = h.reshape(1, -1) @ p["lin_w"].t() + p["lin_b"]
    return -(F.log_softmax(h, 1) * y).sum()


def _best(fn, repeat):
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    if args.threads:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
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
    t_vmap = _best(ref_vmap, args.repeat)
    t_loop = _best(ref_loop, args.repeat)
    print(f"per-sample gradients, batch {args.batch}, float64")
    print(f"  reference vmap(grad):     {t_vmap * 1e3:9.1f} ms")
    print(f"  reference loop of grad:   {t_loop * 1e3:9.1f} ms   loop / vmap = {t_loop / t_vmap:.2f}x")
    try:
        import torch
        from torch import func as tf
    except ImportError:
        print("  torch.func: not installed (no ratio)")
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    tp = {k: torch.tensor(v) for k, v in params.items()}
    tx, ty = torch.tensor(x), torch.tensor(y)
    tgrad = tf.vmap(tf.grad(lambda p, x, y: _loss(torch, p, x, y)), (None, 0, 0))
    want = tgrad(tp, tx, ty)
    for k in shapes:
        np.testing.assert_allclose(a[k].detach().numpy(), want[k].numpy(), rtol=1e-9, atol=1e-12)
    t_torch = _best(lambda: tgrad(tp, tx, ty), args.repeat)
    print(
        f"  torch.func vmap(grad):    {t_torch * 1e3:9.1f} ms   reference / torch = {t_vmap / t_torch:.1f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
