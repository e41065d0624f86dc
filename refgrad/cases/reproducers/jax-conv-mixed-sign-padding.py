"""JAX (XLA:CPU) float32/bfloat16/float16 rank-1 convolution whose padding crops at the low end and
pads at the high end, (-1, 1), returns wrong values once the channel counts are not tiny (17 in, 8
out here; 2 in, 3 out is right); float64, padding (-1, 0) or (1, -1), and the same padding on a
dim of a 2-d convolution are right. The input gradient of a transposed convolution is a convolution
whose padding is the transposed one's crops, so refgrad's conv_transpose1d with padding ((-1, 1),)
shows it in its vjp checks (seed 1 of the README command: conv-e20db477f2c2, bfloat16 vmap_vjp).

The wrong elements hold whatever the output buffer held before: now and then that is the right
value by chance (1 run in 5 of the transposed gradient here, under load), so every computation runs
REPEATS times and the worst of them is judged."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(0)
numbers = ("NHC", "HIO", "NHC")  # channels last: N, W, C; kernel W, I, O


REPEATS = 10


def judged(label, compute, exact):
    """WRONG where the error of the worst of REPEATS runs passes a hundredth of the largest exact
    element (a bfloat16 conv of 34 terms is good to ~3e-3 relative; the wrong values are off by O(1)
    relative or by 1e15 and more)."""
    diffs = (np.abs(np.asarray(compute(), np.float64) - exact) for _ in range(REPEATS))
    err = max(np.max(np.nan_to_num(d, nan=np.inf)) for d in diffs)  # a nan the buffer held is wrong too
    scale = np.max(np.abs(exact))
    print(f"jax {label}: {'WRONG' if err > 1e-2 * scale else 'right'} (max error {err:.3g}, max |exact| {scale:.3g})")


x = rng.standard_normal((2, 3, 17))
w = rng.standard_normal((2, 17, 8))
for dtype in (np.float32, jnp.bfloat16, jnp.float16):
    for padding in ([(-1, 1)], [(-1, 0)], [(1, -1)]):
        xd, wd = x.astype(dtype), w.astype(dtype)
        got = lambda: lax.conv_general_dilated(xd, wd, (1,), padding, dimension_numbers=numbers)
        exact = lax.conv_general_dilated(
            xd.astype(np.float64), wd.astype(np.float64), (1,), padding, dimension_numbers=numbers
        )  # the float64 sum of 34 products of dtype values: exact to ~1e-15 relative
        judged(f"conv1d {np.dtype(dtype).name} padding {padding[0]}", got, np.asarray(exact))

# a transposed conv1d (refgrad's padding ((-1, 1),), kernel 2: JAX's padding (2, 0)), its input gradient
xt = rng.standard_normal((1, 2, 8)).astype(np.float32)
wt = rng.standard_normal((2, 8, 17)).astype(np.float32)
f = lambda x, w: lax.conv_general_dilated(x, w, (1,), [(2, 0)], lhs_dilation=(1,), dimension_numbers=numbers)
g = rng.standard_normal(f(xt, wt).shape).astype(np.float32)
grad = lambda: jax.vjp(lambda x: f(x, wt), xt)[1](g)[0]
exact = jax.vjp(lambda x: f(x, wt.astype(np.float64)), xt.astype(np.float64))[1](g.astype(np.float64))[0]
judged("transposed conv1d input gradient float32", grad, np.asarray(exact))
