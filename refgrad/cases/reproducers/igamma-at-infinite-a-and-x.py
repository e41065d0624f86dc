"""The regularized incomplete gamma functions at a = x = inf have no value (P(a, x) -> 1 along
x - a -> inf, -> 0 along a - x -> inf, anything between along x = a: nan, as PyTorch's
torch.special.gammainc / gammaincc and SciPy say). TensorFlow's tf.math.igamma and igammac give
P = 0 and Q = 0 (which do not even sum to 1), JAX's gammainc and gammaincc P = 1 and Q = 0
(TensorFlow 2.21.0, JAX 0.10.2)."""

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf
import torch
from jax.scipy.special import gammainc, gammaincc

jax.config.update("jax_enable_x64", True)
for dtype in ("float32", "float64"):
    inf = np.array(np.inf, dtype)
    t = torch.tensor(inf)
    print(
        f"P, Q (inf, inf) {dtype}: tf {float(tf.math.igamma(inf, inf))}, {float(tf.math.igammac(inf, inf))}; "
        f"jax {float(gammainc(jnp.asarray(inf), jnp.asarray(inf)))}, {float(gammaincc(jnp.asarray(inf), jnp.asarray(inf)))}; "
        f"torch {float(torch.special.gammainc(t, t))}, {float(torch.special.gammaincc(t, t))}"
    )
