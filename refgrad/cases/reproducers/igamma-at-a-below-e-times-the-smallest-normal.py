"""The regularized incomplete gamma P(a, x) at a tiny positive a is 1 - a·E1(x) + O(a²) ~ 1 for x > 0
(Q ~ a·E1(x)): mpmath gives P = 1.0 at a = 1.18e-38 and at a = 1.4e-45, x = 0.5. JAX's and TensorFlow's
series branch (x < 1) gives P = 0, Q = 1 where a < e·(the dtype's smallest normal) (a < tiny·e^x, its
prefactor underflowing) and nan at a subnormal a (TensorFlow for every x); PyTorch's gives P = 0 at a
subnormal a for x <= 1 (Q right)."""

import mpmath as mp
import numpy as np

CASES = (("float32", 1.1754944e-38, 0.5), ("float32", 3.1e-38, 0.999), ("float32", 1e-39, 0.5),
         ("float32", 1.4e-45, 0.5), ("float64", 2.2250738585072014e-308, 0.5), ("float64", 5e-324, 0.5))
for dt, a, x in CASES:
    print(f"mpmath P({a:.4g}, {x}) = {mp.nstr(mp.gammainc(mp.mpf(float(np.dtype(dt).type(a))), 0, x, regularized=True), 10)}")

try:
    import torch

    for dt, a, x in CASES:
        t = lambda v: torch.tensor(v, dtype=getattr(torch, dt))
        print(f"torch {dt} P({a:.4g}, {x}) = {torch.special.gammainc(t(a), t(x)).item()}")
except ImportError:
    print("torch not installed")
try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    for dt, a, x in CASES:
        d = getattr(jnp, dt)
        p, q = jax.scipy.special.gammainc(d(a), d(x)), jax.scipy.special.gammaincc(d(a), d(x))
        print(f"jax {dt} P({a:.4g}, {x}) = {float(p)}, Q = {float(q)}")
except ImportError:
    print("jax not installed")
try:
    import tensorflow as tf

    for dt, a, x in CASES:
        d = getattr(tf, dt)
        p, q = tf.math.igamma(tf.constant(a, d), tf.constant(x, d)), tf.math.igammac(tf.constant(a, d), tf.constant(x, d))
        print(f"tensorflow {dt} P({a:.4g}, {x}) = {float(p)}, Q = {float(q)}")
except ImportError:
    print("tensorflow not installed")
