"""XLA:CPU's rank-1 convolution with a crop of one at the high end and a pad at the low end, padding
(lo >= 1, -1), over a kernel of one tap at stride 1: the forward is right, but its input gradient is a
convolution of the cotangent with padding (k-1-lo, k-1-hi) = (-lo, 1), the crop-low/pad-high pattern of
jax-conv1d-mixed-sign-padding-wrong-values, and in float32/bfloat16/float16 returns whatever the
buffer held (run to run: float32 is sometimes right). float64 is exact; the reference here is JAX's
float64 gradient (a sum of products of the same values)."""

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def conv(x, w, pad, stride):
    return jax.lax.conv_general_dilated(x, w, (stride,), [pad], dimension_numbers=("NCH", "OIH", "NCH"))


rng = np.random.default_rng(0)
for k, pad, stride in ((1, (1, -1), 1), (1, (2, -1), 1), (1, (1, -2), 1), (2, (1, -1), 1), (1, (1, -1), 2)):
    x, w = rng.standard_normal((1, 4, 6)), rng.standard_normal((9, 4, k))
    y, vjp = jax.vjp(lambda a: conv(a, jnp.asarray(w), pad, stride), jnp.asarray(x))
    g = rng.standard_normal(y.shape)
    exact = np.asarray(vjp(jnp.asarray(g))[0])
    worst = {}
    for dt in (jnp.float32, jnp.bfloat16, jnp.float16):
        errs = []
        for _ in range(5):
            _, v = jax.vjp(lambda a: conv(a, jnp.asarray(w, dt), pad, stride), jnp.asarray(x, dt))
            errs.append(float(np.max(np.abs(np.asarray(v(jnp.asarray(g, dt))[0], dtype=np.float64) - exact))))
        worst[jnp.dtype(dt).name] = max(errs)
    bad = [n for n, e in worst.items() if not e < 0.1 * np.max(np.abs(exact))]
    print(f"jax conv1d input gradient k={k} padding {pad} stride {stride}: {'WRONG in ' + ', '.join(bad) if bad else 'right'}"
          f" (max |exact| {np.max(np.abs(exact)):.3g}; worst error of 5 runs: "
          + ", ".join(f"{n} {e:.3g}" for n, e in worst.items()) + ")")
