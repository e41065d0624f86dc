"""JAX (XLA:CPU) input gradient of a 2-d convolution with a 1x1 kernel whose padding pads the low end
and crops the high end of one spatial dim, (1, -1): the gradient is a convolution of the output
cotangent under (k - 1 - low, k - 1 - high) = (-1, 1) in that dim, the crop-and-pad XLA:CPU gets
wrong (jax-conv1d-pad-crop-input-gradient-with-a-1-wide-kernel in two dims). The cropped input
row, whose exact gradient is 0 (no output reads it), holds the next example's data or memory past
the buffer. 4 output channels, a (1, 3) kernel, a 3-d convolution and another dim that crops are right."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(0)
NUMBERS = {2: ("NCHW", "OIHW", "NCHW"), 3: ("NCDHW", "OIDHW", "NCDHW")}
DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16, "float16": jnp.float16}

for dtype, padding, kernel, out_channels in (
    ("float32", ((1, -1), (0, 0)), (1, 1), 8),
    ("float32", ((0, 0), (1, -1)), (1, 1), 8),
    ("bfloat16", ((1, -1), (0, 0)), (1, 1), 8),
    ("float16", ((0, 0), (1, -1)), (1, 1), 8),
    ("float32", ((1, -1), (0, 0)), (1, 1), 4),
    ("float32", ((1, -1), (0, 0)), (1, 3), 8),
    ("float32", ((1, -1), (0, 0), (0, 0)), (1, 1, 1), 8),
    ("float32", ((1, -1), (0, -1)), (1, 1), 8),  # the other dim crops: right
    ("float32", ((1, -1), (1, -1)), (1, 1), 8),
):
    rank = len(padding)
    x = rng.standard_normal((2, 4, *(3,) * rank))
    w = rng.standard_normal((out_channels, 4, *kernel))

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1,) * rank, list(padding), dimension_numbers=NUMBERS[rank])

    g = rng.standard_normal(f(x, w).shape)
    cast = DTYPES[dtype]
    got = np.asarray(jax.vjp(lambda x: f(x, jnp.asarray(w, cast)), jnp.asarray(x, cast))[1](jnp.asarray(g, cast))[0], np.float64)
    xd, wd, gd = (np.asarray(jnp.asarray(a, cast), np.float64) for a in (x, w, g))  # the same values in float64
    exact = np.asarray(jax.vjp(lambda x: f(x, wd), xd)[1](gd)[0])
    err = np.max(np.nan_to_num(np.abs(got - exact), nan=np.inf))
    verdict = "WRONG" if err > 2e-2 * np.max(np.abs(exact)) else "right"
    print(
        f"jax conv{rank}d {dtype} input gradient, padding {padding}, kernel {kernel}, {out_channels} output "
        f"channels: {verdict} (max error {err:.3g}, max |exact| {np.max(np.abs(exact)):.3g})"
    )
