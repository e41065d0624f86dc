"""JAX (XLA:CPU) input gradients of 2-d convolutions that are themselves convolutions with a padding
that crops one end of a spatial dim and pads the other, pad no larger than crop (0 < high <= -low):
the crop-and-pad XLA:CPU gets wrong (jax-conv1d-mixed-sign-padding-wrong-values), here reached by
two spellings the earlier entries leave out.

A: a transposed convolution (refgrad's spelling: the lhs-dilated convolution with the flipped kernel,
padded d(k - 1) - crop) has as input gradient a convolution of the cotangent under (low, high -
output_padding), so refgrad's padding (-1, 1) is the failing pair: wrong where the other dim's
gradient pair pads nowhere or is itself such a pair (a positive pad alone there: right) and the
contraction (transposed output channels x kernel) is wide; an output_padding that takes the pad
away is right.

B: a plain convolution padding (1, -1) with a 1-wide kernel in that dim has the gradient pair
(-1, 1); with a kernel k0 > 1 in the other dim it is wrong where that dim's gradient pair
(k0 - 1 - low, k0 - 1 - high) pads nowhere (low, high >= k0 - 1) and output channels x k0 >= 8."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(0)
DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16, "float16": jnp.float16}


def plain(padding, stride, output_padding, w):
    # w: PyTorch's (out, in, kH, kW)
    return lambda x, w=w: lax.conv_general_dilated(x, w, stride, list(padding), dimension_numbers=("NCHW", "OIHW", "NCHW"))


def transposed(padding, stride, output_padding, w):
    # w: PyTorch's transposed weight (in, out, kH, kW); the padding of refgrad's JAX adapter
    k = w.shape[2:]
    wt = jnp.flip(jnp.swapaxes(w, 0, 1), (2, 3))
    pads = [(kk - 1 - lo, kk - 1 - hi + op) for kk, (lo, hi), op in zip(k, padding, output_padding)]
    return lambda x: lax.conv_general_dilated(x, wt, (1, 1), pads, lhs_dilation=stride, dimension_numbers=("NCHW", "OIHW", "NCHW"))


def report(label, spelling, dtype, x_shape, w_shape, padding, stride=(1, 1), output_padding=(0, 0)):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    cast = DTYPES[dtype]
    xd, wd = (np.asarray(jnp.asarray(a, cast), np.float64) for a in (x, w))  # the same values in float64
    g = rng.standard_normal(spelling(padding, stride, output_padding, wd)(xd).shape)
    gd = np.asarray(jnp.asarray(g, cast), np.float64)
    f = spelling(padding, stride, output_padding, jnp.asarray(w, cast))
    got = np.asarray(jax.vjp(f, jnp.asarray(x, cast))[1](jnp.asarray(g, cast))[0], np.float64)
    exact = np.asarray(jax.vjp(spelling(padding, stride, output_padding, wd), xd)[1](gd)[0])
    err = np.max(np.nan_to_num(np.abs(got - exact), nan=np.inf))
    verdict = "WRONG" if err > 2e-2 * np.max(np.abs(exact)) else "right"
    print(
        f"{label} {dtype} input gradient, padding {padding}, weight {w_shape}, stride {stride}, output_padding "
        f"{output_padding}: {verdict} (max error {err:.3g}, max |exact| {np.max(np.abs(exact)):.3g})"
    )


T = "A: conv_transpose2d"
# seed 1's conv-3de8ea816ee1 (channels last there; the layout does not matter): batch 1
report(T, transposed, "bfloat16", (1, 1, 4, 3), (1, 8, 1, 2), ((0, 0), (-1, 1)))
report(T, transposed, "float32", (2, 2, 4, 4), (2, 8, 2, 2), ((0, 0), (-1, 1)))
report(T, transposed, "float16", (2, 2, 4, 4), (2, 8, 2, 2), ((-1, -1), (-1, 1)))
report(T, transposed, "float32", (2, 2, 4, 4), (2, 8, 2, 1), ((-1, 1), (0, 0)))
report(T, transposed, "float32", (2, 2, 4, 4), (2, 8, 1, 2), ((0, 0), (-1, 1)), (2, 2))
report(T, transposed, "float32", (2, 2, 4, 4), (2, 8, 1, 2), ((1, 1), (-1, 1)))  # other dim pads: right
report(T, transposed, "float32", (2, 2, 4, 4), (2, 8, 1, 2), ((0, 1), (-1, 1)))  # right
report(T, transposed, "float32", (2, 2, 4, 4), (2, 2, 1, 2), ((0, 0), (-1, 1)))  # 2 channels: right
report(T, transposed, "float32", (2, 2, 4, 4), (2, 8, 1, 2), ((0, 0), (-1, 1)), (2, 2), (0, 1))  # right
report(T, transposed, "float32", (2, 2, 4, 4), (2, 8, 1, 2), ((0, 0), (-1, 2)))  # pad > crop: right
# the gradient's pair is (low, high - output_padding): (-1, 2) with output_padding 1 is (-1, 1)
report(T, transposed, "float32", (2, 2, 4, 4), (2, 8, 1, 2), ((0, 0), (-1, 2)), (2, 2), (0, 1))
# seed 1's conv-0f90cae3e4c2 (bfloat16, channels last, batch 1 there): the other dim's (0, 1) with
# output_padding 1 is the gradient's (0, 0), which pads nowhere
report(T, transposed, "float32", (2, 8, 4, 3), (8, 8, 2, 3), ((-1, 1), (0, 1)), (1, 3), (0, 1))
report(T, transposed, "float32", (2, 8, 4, 3), (8, 8, 2, 3), ((-1, 1), (0, 1)), (1, 3))  # (0, 1) pads: right
report(T, transposed, "float32", (2, 2, 4, 4), (2, 8, 2, 2), ((-1, 1), (-1, 1)))  # both dims such pairs
P = "B: conv2d"
# seed 1's conv-b5cff93ffca7 (vmap_vjp over the input: JAX folds the vmap into the batch)
report(P, plain, "float32", (2, 4, 1, 2), (7, 4, 2, 1), ((1, 1), (1, -1)))
report(P, plain, "float32", (2, 4, 3, 3), (3, 4, 3, 1), ((2, 2), (1, -1)))
report(P, plain, "bfloat16", (2, 4, 3, 3), (4, 4, 1, 2), ((1, -1), (1, 1)))
report(P, plain, "float16", (2, 4, 3, 3), (3, 4, 1, 3), ((1, -1), (2, 2)))
report(P, plain, "float32", (2, 4, 3, 3), (3, 4, 2, 1), ((1, 1), (1, -1)))  # 3 x 2 < 8: right
report(P, plain, "float32", (2, 4, 3, 3), (8, 4, 2, 1), ((0, 0), (1, -1)))  # gradient pads (1, 1) there: right
report(P, plain, "float32", (2, 4, 3, 3), (8, 4, 2, 1), ((1, 0), (1, -1)))  # right
