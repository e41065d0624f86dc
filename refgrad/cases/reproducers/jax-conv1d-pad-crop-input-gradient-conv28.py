"""JAX (XLA:CPU) float32 input gradient of a rank-1 convolution with a 1-wide kernel whose padding pads
the low end and crops the high end, (1, -1): the gradient is a convolution of the output cotangent
with the flipped kernel under the padding (k - 1 - low, k - 1 - high) = (-1, 1), the crop-and-pad
of jax-conv1d-mixed-sign-padding-wrong-values, and the cropped input position, whose exact gradient
is 0 (no output reads it), holds the next example's data or memory past the buffer. A 2-wide kernel
gives the gradient padding (0, 2) and (-1, 2), which are right."""

import jax
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(0)
numbers = ("NCH", "OIH", "NCH")

for kernel, padding in ((1, (1, -1)), (2, (1, -1)), (2, (2, -1))):
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    w = rng.standard_normal((8, 4, kernel)).astype(np.float32)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1,), [padding], dimension_numbers=numbers)

    g = rng.standard_normal(f(x, w).shape).astype(np.float32)
    got = np.asarray(jax.vjp(lambda x: f(x, w), x)[1](g)[0], np.float64)
    exact = np.asarray(  # float64 of the same float32 values: exact to ~1e-15 relative
        jax.vjp(lambda x: f(x, w.astype(np.float64)), x.astype(np.float64))[1](g.astype(np.float64))[0]
    )
    err = np.max(np.nan_to_num(np.abs(got - exact), nan=np.inf))
    verdict = "WRONG" if err > 1e-3 * np.max(np.abs(exact)) else "right"
    print(
        f"jax conv1d float32 input gradient, kernel {kernel}, padding {padding}: {verdict} "
        f"(max error {err:.3g}, max |exact| {np.max(np.abs(exact)):.3g}; cropped position: "
        f"{got[0, 0, -1]:.4g}, exact {exact[0, 0, -1]:.4g})"
    )

# The law (conv29's sweep against the reference): wrong where stride 1, dilation 1, high < 0,
# low + high >= 2 (k - 1) and (output channels / groups) x k >= 8.
for kernel, padding, out_channels, dilation in (
    (1, (1, -2), 8, 1),  # low + high < 0: right
    (1, (2, -1), 8, 1),  # wrong
    (1, (1, -1), 4, 1),  # 4 output channels contracted: right
    (1, (1, -1), 8, 2),  # dilated (a 1-wide kernel's dilation changes nothing but XLA's path): right
    (2, (3, -1), 4, 1),  # 2-wide: low + high = 2 >= 2, 4 x 2 contracted: wrong
):
    x = rng.standard_normal((2, 4, 4)).astype(np.float32)
    w = rng.standard_normal((out_channels, 4, kernel)).astype(np.float32)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1,), [padding], rhs_dilation=(dilation,), dimension_numbers=numbers)

    g = rng.standard_normal(f(x, w).shape).astype(np.float32)
    got = np.asarray(jax.vjp(lambda x: f(x, w), x)[1](g)[0], np.float64)
    exact = np.asarray(jax.vjp(lambda x: f(x, w.astype(np.float64)), x.astype(np.float64))[1](g.astype(np.float64))[0])
    err = np.max(np.nan_to_num(np.abs(got - exact), nan=np.inf))
    verdict = "WRONG" if err > 1e-3 * np.max(np.abs(exact)) else "right"
    print(
        f"kernel {kernel}, padding {padding}, {out_channels} output channels, dilation {dilation}: {verdict} "
        f"(max error {err:.3g}, max |exact| {np.max(np.abs(exact)):.3g})"
    )
