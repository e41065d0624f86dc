"""Measure JAX's and TensorFlow's exponential, Dawson, Spence, Fresnel and sine/cosine integrals, and
their first and second derivatives (each framework's autodiff), against the reference's exact
kernels (mpmath): the figures behind the error declarations of reference/ops/rules/special_expint.py
and its neighbours.

The declarations are mixed (reference.errors.exact_elementwise): a c-ulp kernel is allowed
2·c·u·(|y| + |y'·x|), the relative rounding of its result and the propagation of a relative
perturbation of its argument. For each function, framework, dtype (float32, float64) and order
(0, 1, 2) this prints c = max |got - exact| / (2·u·(|y| + |y'·x|)) and where; results whose exact
value is below 1e3 times the smallest normal number, or past the largest, are left out.
Points: 400 per function, x = ±10^U(-4, 2.5) (the domain's part of it), seed 0.

Run from the repository root: ``python scripts/measure_special_integrals.py [name ...]``."""

from __future__ import annotations

import sys

import numpy as np

from reference.ops.rules import special_dawsn
from reference.ops.rules import special_expint as E
from reference.ops.rules import special_fresnel as F
from reference.ops.rules.special_spence import spence_exact


def _jax_spelling(name, *args):
    import jax.scipy.special as js

    return lambda x: getattr(js, name)(*args, x)


def _jax_pair(name, index):
    import jax.scipy.special as js

    return lambda x: getattr(js, name)(x)[index]


def _tf_spelling(name):
    import tensorflow as tf

    return lambda x: getattr(tf.math.special, name)(x)


#: name -> (exact(x, order) for orders 0..3, positive-only domain, JAX spelling, TF spelling or None)
def functions():
    return {
        "expi": (E.expi_exact, False, _jax_spelling("expi"), _tf_spelling("expint")),
        "exp1": (lambda x, k: (-1) ** k * E.expn_exact(x, 0, 1 - k), True, _jax_spelling("exp1"), None),
        "expn3": (lambda x, k: (-1) ** k * E.expn_exact(x, 0, 3 - k), True, _jax_spelling("expn", 3), None),
        "dawsn": (special_dawsn.dawsn_exact, False, _jax_spelling("dawsn"), _tf_spelling("dawsn")),
        "spence": (spence_exact, True, _jax_spelling("spence"), _tf_spelling("spence")),
        "fresnel_sin": (F.fresnel_sin_exact, False, _jax_pair("fresnel", 0), _tf_spelling("fresnel_sin")),
        "fresnel_cos": (F.fresnel_cos_exact, False, _jax_pair("fresnel", 1), _tf_spelling("fresnel_cos")),
        "sici_si": (F.sici_si_exact, False, _jax_pair("sici", 0), None),
        "sici_ci": (F.sici_ci_exact, False, _jax_pair("sici", 1), None),
    }


def points(positive, seed=0):
    rng = np.random.default_rng(seed)
    x = 10 ** rng.uniform(-4, 2.5, 400)
    return x if positive else x * rng.choice([-1.0, 1.0], 400)


def _jax_orders(fn, x, dtype):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    a = jnp.asarray(x, dtype=dtype)
    d1 = jax.vmap(jax.grad(fn))(a)
    try:
        d2 = jax.vmap(jax.grad(jax.grad(fn)))(a)
    except TypeError as e:  # expn, exp1: the custom jvp's n - 1 is a tracer ("No constant handler")
        print("  jax second derivative raises:", str(e)[:60])
        d2 = None
    return [np.asarray(v, dtype=np.float64) for v in (fn(a), d1, d2) if v is not None]


def _tf_orders(fn, x, dtype):
    import tensorflow as tf

    a = tf.constant(x, dtype=dtype)
    with tf.GradientTape() as outer:
        outer.watch(a)
        with tf.GradientTape() as inner:
            inner.watch(a)
            y = fn(a)
        d1 = inner.gradient(y, a)
    d2 = outer.gradient(d1, a)
    return [np.asarray(v, dtype=np.float64) for v in (y, d1, d2)]


def worst(got, exact, slope, x, dtype):
    u = float(np.finfo(dtype).eps) / 2
    tiny, big = float(np.finfo(dtype).tiny), float(np.finfo(dtype).max)
    with np.errstate(all="ignore"):
        c = np.abs(got - exact) / (2 * u * (np.abs(exact) + np.abs(slope * x)))
    keep = np.isfinite(got) & np.isfinite(exact) & (np.abs(exact) > 1e3 * tiny) & (np.abs(exact) < big) & np.isfinite(slope)
    c = np.where(keep, np.nan_to_num(c, nan=np.inf), 0.0)
    i = int(np.argmax(c))
    bad = np.isfinite(exact) & (np.abs(exact) < big) & ~np.isfinite(got)
    where = f", not finite at {int(bad.sum())} points (e.g. x = {x[bad][0]:.6g})" if bad.any() else ""
    return f"c = {c[i]:.3g} at x = {x[i]:.6g}{where}"


def main(names):
    for name, (exact, positive, jax_fn, tf_fn) in functions().items():
        if names and name not in names:
            continue
        x64 = points(positive)
        for dtype in ("float32", "float64"):
            x = x64.astype(dtype).astype(np.float64)
            table = np.array([[exact(float(v), k) for v in x] for k in range(4)])
            for framework, run in (("jax", _jax_orders), ("tensorflow", _tf_orders)):
                fn = jax_fn if framework == "jax" else tf_fn
                if fn is None:
                    continue
                for k, got in enumerate(run(fn, x, dtype)):
                    print(name, framework, dtype, f"order {k}:", worst(got, table[k], table[k + 1], x, dtype))


if __name__ == "__main__":
    main(sys.argv[1:])
