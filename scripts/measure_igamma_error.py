"""Measure the frameworks' regularized incomplete gamma functions against the reference's exact kernel
(mpmath): the figures behind the error declarations of reference/ops/rules/special_gamma.py.

For P = igamma, Q = igammac, ∂P/∂x (each framework's gradient) and ∂P/∂a (JAX, TensorFlow), in
float32 and float64, prints the worst error in units of u·cond·|y| (cond = 1 + |(a - 1) ln x| + x +
|lnΓ(a)|, the prefactor's exponent, declared separately) with its (a, x). Points: 600, a = 10^U(-3,
3.5) and U(0.1, 10), x = a·U(0.02, 3) and a·(1 + N(0, 0.1)), seed 0; results below 1e3 times the
smallest normal number left out. ``--skip-large-a-torch``: PyTorch's float64 kernels past a = 20
left out (its known departure torch-igamma-float64-large-a, 1e-9 relative there).

Run from the repository root: ``python scripts/measure_igamma_error.py`` (a few minutes)."""

from __future__ import annotations

import sys

import numpy as np
import scipy.special

from reference.ops.rules.special_gamma import igamma_exact


def points(seed=0):
    rng = np.random.default_rng(seed)
    a = np.concatenate([10 ** rng.uniform(-3, 3.5, 400), rng.uniform(0.1, 10, 200)])
    r = np.concatenate([rng.uniform(0.02, 3, 400), 1 + rng.normal(0, 0.1, 200)])
    return a, a * r


def worst(got, exact, a, x, dtype, skip=None):
    u = float(np.finfo(dtype).eps)
    tiny = float(np.finfo(dtype).tiny)
    with np.errstate(all="ignore"):
        cond = 1 + np.abs((a - 1) * np.log(x)) + x + np.abs(scipy.special.gammaln(a))
        ratio = np.abs(got - exact) / (u * cond * np.abs(exact))
    keep = np.isfinite(exact) & (np.abs(exact) > 1e3 * tiny) & (exact.astype(dtype) != 0)
    if skip is not None:
        keep &= ~skip
    ratio = np.where(keep, np.nan_to_num(ratio, nan=np.inf), 0.0)
    i = int(np.argmax(ratio))
    return f"{ratio[i]:.3g} at a={a[i]:.4g}, x={x[i]:.4g}"


def main():
    import jax
    import jax.numpy as jnp
    import tensorflow as tf
    import torch
    from jax.scipy import special as js

    jax.config.update("jax_enable_x64", True)
    skip_torch = "--skip-large-a-torch" in sys.argv
    a64, x64 = points()
    for dtype in ("float32", "float64"):
        a, x = a64.astype(dtype).astype(np.float64), x64.astype(dtype).astype(np.float64)
        exact = {k: np.array([igamma_exact(float(p), float(q), *k) for p, q in zip(a, x)])
                 for k in ((0, 0, False), (0, 0, True), (0, 1, False), (1, 0, False))}  # fmt: skip
        ta = torch.tensor(a, dtype=getattr(torch, dtype))
        tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
        p = torch.special.gammainc(ta, tx)
        (gx,) = torch.autograd.grad(p.sum(), tx)
        q = torch.special.gammaincc(ta, tx)
        skip = (a > 20) if (skip_torch and dtype == "float64") else None
        got = {
            "P": p.detach().double().numpy(),
            "Q": q.detach().double().numpy(),
            "dP/dx": gx.double().numpy(),
        }
        jp, jx = jnp.asarray(a, dtype=dtype), jnp.asarray(x, dtype=dtype)
        ga, gxj = jax.vmap(jax.grad(js.gammainc, argnums=(0, 1)))(jp, jx)
        jgot = {"P": js.gammainc(jp, jx), "Q": js.gammaincc(jp, jx), "dP/dx": gxj, "dP/da": ga}
        fa, fx = tf.constant(a, dtype=dtype), tf.constant(x, dtype=dtype)
        with tf.GradientTape() as tape:
            tape.watch([fa, fx])
            pt = tf.math.igamma(fa, fx)
        gta, gtx = tape.gradient(pt, [fa, fx])
        tgot = {"P": pt, "Q": tf.math.igammac(fa, fx), "dP/dx": gtx, "dP/da": gta}
        keys = {"P": (0, 0, False), "Q": (0, 0, True), "dP/dx": (0, 1, False), "dP/da": (1, 0, False)}
        for name, table, sk in (("torch", got, skip), ("jax", jgot, None), ("tensorflow", tgot, None)):
            for what, value in table.items():
                v = np.asarray(value, dtype=np.float64)
                print(dtype, name, what, worst(v, exact[keys[what]], a, x, dtype, sk))


if __name__ == "__main__":
    main()
