"""Measure the frameworks' regularized incomplete beta function against the reference's exact
kernel (mpmath): the figure behind the error declaration of reference/ops/rules/special_beta.py.

For I_x(a, b) (JAX's jax.scipy.special.betainc, TensorFlow's tf.math.betainc), in float32 and
float64, prints the worst error in units of u·cond·tail + u (the bound's shape: see _bound; tail
the one the kernel evaluates) with its (a, b, x). Points: 600, a, b = 10^U(-2, 3), x = U(0, 1)
(300) and x at the mean a/(a + b) times 1 + N(0, 0.05) (300), seed 0.

Run from the repository root: ``python scripts/measure_betainc_error.py`` (a minute)."""

from __future__ import annotations

import numpy as np

from reference.ops.rules.special_beta import _cond, betainc_exact


def points(seed=0):
    rng = np.random.default_rng(seed)
    a, b = 10 ** rng.uniform(-2, 3, 600), 10 ** rng.uniform(-2, 3, 600)
    mean = a / (a + b) * (1 + 0.05 * rng.standard_normal(600))
    x = np.clip(np.concatenate([rng.uniform(0, 1, 300), mean[300:]]), 1e-6, 1 - 1e-6)
    return a, b, x


def per_cond(got, exact, a, b, x, dtype):
    u = float(np.finfo(dtype).eps) / 2
    with np.errstate(all="ignore"):
        lower = (x < (a + 1) / (a + b + 2)) & (x <= a / (a + b))
        upper = (x >= (a + 1) / (a + b + 2)) & (x > a / (a + b))
        tail = np.where(lower, exact, np.where(upper, 1 - exact, np.maximum(exact, 1 - exact)))
        scaled = np.abs(got - exact) / (u * (_cond(a, b, x) * tail + 1))
    scaled = np.where(np.isfinite(exact), np.nan_to_num(scaled, nan=np.inf), 0.0)
    i = int(np.argmax(scaled))
    return f"{scaled[i]:.3g} at a={a[i]!r}, b={b[i]!r}, x={x[i]!r} (I = {exact[i]!r}, got {got[i]!r})"


def main():
    import jax
    import jax.numpy as jnp
    import tensorflow as tf
    from jax.scipy.special import betainc

    jax.config.update("jax_enable_x64", True)
    a64, b64, x64 = points()
    for dtype in ("float32", "float64"):
        a, b, x = (v.astype(dtype).astype(np.float64) for v in (a64, b64, x64))
        exact = np.array([betainc_exact(float(p), float(q), float(r), 0) for p, q, r in zip(a, b, x)])
        got = {
            "jax": betainc(*(jnp.asarray(v, dtype=dtype) for v in (a, b, x))),
            "tensorflow": tf.math.betainc(*(tf.constant(v, dtype=dtype) for v in (a, b, x))),
        }
        for name, value in got.items():
            print(dtype, name, "betainc", per_cond(np.asarray(value, dtype=np.float64), exact, a, b, x, dtype))


if __name__ == "__main__":
    main()
