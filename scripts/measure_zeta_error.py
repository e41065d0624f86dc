"""Measure the frameworks' Hurwitz zeta function against the reference's exact kernel (mpmath): the
figures behind the error declarations of reference/ops/rules/special_zeta.py.

For ζ(s, q), ∂ζ/∂q (each framework's gradient: -s·ζ(s + 1, q)), ∂ζ/∂s, ∂²ζ/∂s² and ∂²ζ/∂s∂q
(JAX's, the jvp of its Euler-Maclaurin series) and ∂²ζ/∂q² (each framework's second derivative), in float32 and float64,
prints the worst relative error in ulps of the result (|got - exact| / (u·|exact|)) and the worst in
units of u·(1 + s·L(s, q))·|y|, L = |ln q| + 1/(s - 1) (the bound's condition: see _cond), with
its (s, q). Points: 600, s = 1 + 10^U(-3, 2) and U(1.05, 12), q = 10^U(-3, 3), seed 0; results below
1e3 times the smallest normal number, or past the largest, left out.

Run from the repository root: ``python scripts/measure_zeta_error.py`` (a minute)."""

from __future__ import annotations

import numpy as np

from reference.ops.rules.special_zeta import _cond, zeta_exact


def points(seed=0):
    rng = np.random.default_rng(seed)
    s = np.concatenate([1 + 10 ** rng.uniform(-3, 2, 400), rng.uniform(1.05, 12, 200)])
    q = 10 ** rng.uniform(-3, 3, 600)
    return s, q


def worst(got, exact, s, q, dtype):
    u = float(np.finfo(dtype).eps) / 2
    tiny, big = float(np.finfo(dtype).tiny), float(np.finfo(dtype).max)
    with np.errstate(all="ignore"):
        rel = np.abs(got - exact) / (u * np.abs(exact))
        scaled = rel / _cond(s, q)
    keep = np.isfinite(exact) & (np.abs(exact) > 1e3 * tiny) & (np.abs(exact) < big)
    out = []
    for r in (rel, scaled):
        r = np.where(keep, np.nan_to_num(r, nan=np.inf), 0.0)
        i = int(np.argmax(r))
        out.append(f"{r[i]:.3g} at s={s[i]:.6g}, q={q[i]:.4g}")
    return "  ulps: " + out[0] + "  |  per cond: " + out[1]


def main():
    import jax
    import jax.numpy as jnp
    import tensorflow as tf
    import torch
    from jax.scipy import special as js

    jax.config.update("jax_enable_x64", True)
    s64, q64 = points()
    orders = {
        "zeta": (0, 0),
        "d/dq": (0, 1),
        "d/ds": (1, 0),
        "d2/dq2": (0, 2),
        "d2/ds2": (2, 0),
        "d2/dsdq": (1, 1),
    }
    for dtype in ("float32", "float64"):
        s, q = s64.astype(dtype).astype(np.float64), q64.astype(dtype).astype(np.float64)
        exact = {
            k: np.array([zeta_exact(float(a), float(b), *o) for a, b in zip(s, q)]) for k, o in orders.items()
        }
        ts = torch.tensor(s, dtype=getattr(torch, dtype))
        tq = torch.tensor(q, dtype=getattr(torch, dtype), requires_grad=True)
        z = torch.special.zeta(ts, tq)
        (gq,) = torch.autograd.grad(z.sum(), tq, create_graph=True)
        (hq,) = torch.autograd.grad(gq.sum(), tq)
        got = {"torch": {"zeta": z, "d/dq": gq, "d2/dq2": hq}}
        js_, jq = jnp.asarray(s, dtype=dtype), jnp.asarray(q, dtype=dtype)
        gs, gqj = jax.vmap(jax.grad(js.zeta, argnums=(0, 1)))(js_, jq)
        hqj = jax.vmap(jax.grad(jax.grad(js.zeta, argnums=1), argnums=1))(js_, jq)
        hss = jax.vmap(jax.grad(jax.grad(js.zeta, argnums=0), argnums=0))(js_, jq)
        hsq = jax.vmap(jax.grad(jax.grad(js.zeta, argnums=1), argnums=0))(js_, jq)
        got["jax"] = {
            "zeta": js.zeta(js_, jq),
            "d/dq": gqj,
            "d/ds": gs,
            "d2/dq2": hqj,
            "d2/ds2": hss,
            "d2/dsdq": hsq,
        }
        fs, fq = tf.constant(s, dtype=dtype), tf.constant(q, dtype=dtype)
        with tf.GradientTape() as outer:
            outer.watch(fq)
            with tf.GradientTape() as inner:
                inner.watch(fq)
                zt = tf.math.zeta(fs, fq)
            gtq = inner.gradient(zt, fq)
        got["tensorflow"] = {"zeta": zt, "d/dq": gtq, "d2/dq2": outer.gradient(gtq, fq)}
        for name, table in got.items():
            for what, value in table.items():
                v = np.asarray(value.detach() if hasattr(value, "detach") else value, dtype=np.float64)
                print(dtype, name, what, worst(v, exact[what], s, q, dtype))


if __name__ == "__main__":
    main()
