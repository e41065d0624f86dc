"""Records of the copying shape ops (reference/ops/rules/shape_ops.py): exact data movement, so any
difference is a semantic one."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance.ops import COMPLEX_DTYPES, record
from conformance.ops._run import refuses
from conformance.strategies import tensor_shapes, value_kinds

FAMILY = "shape_ops"
_KINDS = ("normal", "ties", "nonfinite")


def _values(draw):
    return draw(value_kinds(_KINDS))


@st.composite
def _flip(draw):
    shape = draw(tensor_shapes(1, 3, 256))
    r = len(shape)
    dims = draw(st.lists(st.integers(-r, r - 1), min_size=1, max_size=r, unique_by=lambda d: d % r))
    return {"dims": dims, "values": _values(draw)}, {"input": shape}


record(
    "flip",
    FAMILY,
    sample=_flip,
    fn=lambda T, x, dims: T.flip(x, dims),
    jax=lambda J, x, dims: J.jnp.flip(x, axis=tuple(dims)),
    tf=lambda tf, x, dims: tf.reverse(x, axis=dims),
)


@st.composite
def _roll(draw):
    shape = draw(tensor_shapes(1, 3, 256))
    r = len(shape)
    dims = draw(st.lists(st.integers(-r, r - 1), min_size=1, max_size=r, unique_by=lambda d: d % r))
    shifts = [draw(st.integers(-7, 7)) for _ in dims]
    return {"shifts": shifts, "dims": dims, "values": _values(draw)}, {"input": shape}


record(
    "roll",
    FAMILY,
    sample=_roll,
    fn=lambda T, x, shifts, dims: T.roll(x, shifts, dims),
    jax=lambda J, x, shifts, dims: J.jnp.roll(x, shifts, axis=tuple(dims)),
    tf=lambda tf, x, shifts, dims: tf.roll(x, shifts, axis=dims),
)


@st.composite
def _rot90(draw):
    shape = draw(tensor_shapes(2, 3, 256))
    r = len(shape)
    d0 = draw(st.integers(0, r - 1))
    d1 = draw(st.integers(0, r - 1).filter(lambda d: d != d0))
    return {"k": draw(st.integers(-5, 5)), "dims": [d0, d1], "values": _values(draw)}, {"input": shape}


record(
    "rot90",
    FAMILY,
    sample=_rot90,
    fn=lambda T, x, k, dims: T.rot90(x, k, dims),
    jax=lambda J, x, k, dims: J.jnp.rot90(x, k, axes=tuple(dims)),
    tf="TensorFlow's rot90 is tf.image.rot90 (the height/width dims of an image batch only)",
)


@st.composite
def _repeat(draw):
    shape = draw(tensor_shapes(0, 3, 64))
    extra = draw(st.integers(0, 1))
    reps = [draw(st.integers(0, 3)) for _ in range(len(shape) + extra)]
    return {"repeats": reps, "values": _values(draw)}, {"input": shape}


def _tf_repeat(tf, x, repeats):
    lead = len(repeats) - len(x.shape)
    return tf.tile(tf.reshape(x, [1] * lead + list(x.shape)), repeats)


record(
    "repeat",
    FAMILY,
    sample=_repeat,
    fn=lambda T, x, repeats: x.repeat(*repeats) if repeats else x.repeat(()),
    torch=lambda torch, x, repeats: x.repeat(*repeats) if repeats else x.repeat(()),
    jax=lambda J, x, repeats: J.jnp.tile(x, repeats),
    tf=_tf_repeat,
    note="PyTorch's repeat is NumPy's tile (leading dims prepended)",
)


@st.composite
def _tri(draw):
    shape = draw(tensor_shapes(2, 3, 256))
    return {"diagonal": draw(st.integers(-3, 3)), "values": _values(draw)}, {"input": shape}


def _tf_tri(tf, x, diagonal, upper):
    n, m = x.shape[-2], x.shape[-1]
    i, j = np.indices((n, m))
    keep = (j - i >= diagonal) if upper else (j - i <= diagonal)
    return tf.where(tf.constant(keep), x, tf.zeros_like(x))


for _name, _upper in (("tril", False), ("triu", True)):
    record(
        _name,
        FAMILY,
        sample=_tri,
        fn=lambda T, x, diagonal, _n=_name: getattr(T, _n)(x, diagonal),
        jax=lambda J, x, diagonal, _n=_name: getattr(J.jnp, _n)(x, diagonal),
        tf=lambda tf, x, diagonal, _u=_upper: _tf_tri(tf, x, diagonal, _u),
        note="TF spelled with a mask (tf.linalg.band_part takes no negative offsets)",
    )


@st.composite
def _diag_embed(draw):
    shape = draw(tensor_shapes(1, 2, 64))
    return {"offset": draw(st.integers(-2, 2)), "values": _values(draw)}, {"input": shape}


record(
    "diag_embed",
    FAMILY,
    sample=_diag_embed,
    fn=lambda T, x, offset: T.diag_embed(x, offset),
    jax="jax.numpy has no diag_embed (jnp.diag takes 1-D input only, without batch dims)",
    tf=lambda tf, x, offset: tf.linalg.diag(x, k=offset),
)


@st.composite
def _diag2(draw):
    shape = draw(tensor_shapes(2, 2, 256))
    return {"diagonal": draw(st.integers(-2, 2)), "values": _values(draw)}, {"input": shape}


record(
    "diagonal_copy",
    FAMILY,
    sample=_diag2,
    fn=lambda T, x, diagonal: T.diag(x, diagonal),
    jax=lambda J, x, diagonal: J.jnp.diag(x, diagonal),
    tf="tf.linalg.diag_part(k=) pads a short diagonal; the diagonal of a 2-D tensor (torch.diag) is "
    "recorded on PyTorch and JAX",
    note="torch.diag of a 2-D tensor (a copy, aten's diagonal_copy path)",
)


@st.composite
def _narrow(draw):
    shape = draw(tensor_shapes(1, 3, 256, 1))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    start = draw(st.integers(0, shape[dim]))
    return {
        "dim": dim,
        "start": start,
        "length": draw(st.integers(0, shape[dim] - start)),
        "values": _values(draw),
    }, {"input": shape}


def _sl(x, dim, start, stop, step=1):
    return x[(slice(None),) * (dim % len(x.shape)) + (slice(start, stop, step),)]


record(
    "narrow_copy",
    FAMILY,
    sample=_narrow,
    fn=lambda T, x, dim, start, length: x.narrow_copy(dim, start, length),
    jax=lambda J, x, dim, start, length: _sl(x, dim, start, start + length),
    tf=lambda tf, x, dim, start, length: _sl(x, dim, start, start + length),
)


@st.composite
def _select_scatter(draw):
    shape = draw(tensor_shapes(1, 3, 256, 1))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    src = tuple(s for i, s in enumerate(shape) if i != dim % len(shape))
    index = draw(st.integers(-shape[dim], shape[dim] - 1))
    return {"dim": dim, "index": index, "values": _values(draw)}, {"input": shape, "src": src}


def _at(x, dim, key):
    return (slice(None),) * (dim % len(x.shape)) + (key,)


def _no_complex_autograd(op):
    """PyTorch's autograd refuses ``op`` of complex tensors that require grad (torch 2.13: it is not in
    autograd's GRADIENT_IMPLEMENTED_FOR_COMPLEX list): every check whose inputs require grad raises
    (the reverse-mode ones, and the jvp check, whose leaves require grad like the vjp checks');
    values, vmap and torch.func's forward over forward of plain tensors (jvp_jvp) compute and are
    judged. The reference differentiates the op (a linear map) and judges JAX against that."""

    def why(case, check):
        if case.dtype in COMPLEX_DTYPES and check not in ("forward", "vmap", "jvp_jvp"):
            return (
                f"PyTorch cannot differentiate torch.{op} of complex tensors that require grad: autograd "
                f"raises '{op} does not support automatic differentiation for outputs with complex "
                "dtype.' (torch 2.13)"
            )
        return None

    return why


record(
    "select_scatter",
    FAMILY,
    inputs=("input", "src"),
    sample=_select_scatter,
    fn=lambda T, x, src, dim, index: T.select_scatter(x, src, dim, index),
    torch=refuses(_no_complex_autograd("select_scatter"))(
        lambda T, x, src, dim, index: T.select_scatter(x, src, dim, index)
    ),
    jax=lambda J, x, src, dim, index: x.at[_at(x, dim, index)].set(src),
    tf="TensorFlow has no select_scatter (tensor_scatter_nd_update of a whole slice needs every "
    "coordinate spelled out)",
)


@st.composite
def _slice_scatter(draw):
    shape = draw(tensor_shapes(1, 3, 256, 1))
    dim = draw(st.integers(0, len(shape) - 1))
    start = draw(st.integers(0, shape[dim]))
    end = draw(st.integers(start, shape[dim]))
    step = draw(st.integers(1, 3))
    n = len(range(start, end, step))
    src = tuple(n if i == dim else s for i, s in enumerate(shape))
    return {"dim": dim, "start": start, "end": end, "step": step, "values": _values(draw)}, {
        "input": shape,
        "src": src,
    }


record(
    "slice_scatter",
    FAMILY,
    inputs=("input", "src"),
    sample=_slice_scatter,
    fn=lambda T, x, src, dim, start, end, step: T.slice_scatter(x, src, dim, start, end, step),
    torch=refuses(_no_complex_autograd("slice_scatter"))(
        lambda T, x, src, dim, start, end, step: T.slice_scatter(x, src, dim, start, end, step)
    ),
    jax=lambda J, x, src, dim, start, end, step: x.at[_at(x, dim, slice(start, end, step))].set(src),
    tf="TensorFlow has no slice_scatter (tensor_scatter_nd_update needs every coordinate spelled out)",
)


@st.composite
def _diagonal_scatter(draw):
    n, m = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    offset = draw(st.integers(-(n - 1), m - 1))
    k = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    return {"offset": offset, "values": _values(draw)}, {"input": (n, m), "src": (k,)}


def _jax_diag_scatter(J, x, src, offset):
    k = src.shape[0]
    i = np.arange(k) + max(-offset, 0)
    return x.at[i, i + offset].set(src)


record(
    "diagonal_scatter",
    FAMILY,
    inputs=("input", "src"),
    sample=_diagonal_scatter,
    fn=lambda T, x, src, offset: T.diagonal_scatter(x, src, offset),
    jax=_jax_diag_scatter,
    tf="tf.linalg.set_diag(k=) aligns and pads a diagonal by its own rules; recorded on PyTorch and JAX",
)


@st.composite
def _block_diag(draw):
    a = draw(tensor_shapes(2, 2, 36))
    b = draw(tensor_shapes(0, 2, 36))
    return {"values": _values(draw)}, {"input": a, "other": b}


def _jax_block_diag(J, a, b):
    import jax.scipy.linalg as jsl

    return jsl.block_diag(a, b)


record(
    "block_diag",
    FAMILY,
    inputs=("input", "other"),
    sample=_block_diag,
    fn=lambda T, a, b: T.block_diag(a, b),
    jax=_jax_block_diag,
    tf="TensorFlow's block diagonal is a LinearOperator (tf.linalg.LinearOperatorBlockDiag) of square "
    "blocks only",
)


@st.composite
def _unfold(draw):
    shape = draw(tensor_shapes(1, 3, 128, 1))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    size = draw(st.integers(0, shape[dim]))
    return {"dim": dim, "size": size, "step": draw(st.integers(1, 3)), "values": _values(draw)}, {
        "input": shape
    }


def _jax_unfold(J, x, dim, size, step):
    d = dim % len(x.shape)
    n = (x.shape[d] - size) // step + 1
    wins = [J.jnp.moveaxis(_sl(x, d, i * step, i * step + size), d, -1) for i in range(n)]
    return J.jnp.stack(wins, axis=d)


record(
    "unfold",
    FAMILY,
    sample=_unfold,
    fn=lambda T, x, dim, size, step: x.unfold(dim, size, step) * 1.0,
    jax=lambda J, x, dim, size, step: _jax_unfold(J, x, dim, size, step) * 1.0,
    tf="TensorFlow has no unfold along an arbitrary dim (tf.signal.frame frames the last axis with its "
    "own padding rules)",
    note="Tensor.unfold (a view; windows of size along dim, step apart)",
)
