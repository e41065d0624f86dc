"""Records of the functional copies of the view ops and unsafe_split/unsafe_chunk
(reference/ops/rules/copies.py): exact ops (values are moved, not computed), so any difference is a
semantic one. JAX and TensorFlow have no views, so their ordinary (copying) ops are the spelling."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import record
from conformance.ops.shape import _expand, _permute, _reshape, _split, _unsqueeze
from conformance.strategies import tensor_shapes, value_kinds

FAMILY = "copies"


def _values(draw):
    return draw(value_kinds(("normal", "ties", "nonfinite")))


record(
    "expand_copy",
    FAMILY,
    sample=_expand,
    fn=lambda T, x, size: T.expand_copy(x, size),
    jax=lambda J, x, size: J.jnp.broadcast_to(x, size),
    tf=lambda tf, x, size: tf.broadcast_to(x, size),
)
record(
    "permute_copy",
    FAMILY,
    rules=("permute_copy", "alias_copy"),
    sample=_permute,
    fn=lambda T, x, dims: T.permute_copy(T.alias_copy(x), dims),
    jax=lambda J, x, dims: J.jnp.transpose(x, dims),
    tf=lambda tf, x, dims: tf.transpose(x, dims),
    note="alias_copy, then permute_copy",
)
record(
    "view_copy",
    FAMILY,
    sample=_reshape,
    fn=lambda T, x, shape: T.view_copy(x, shape),
    jax=lambda J, x, shape: J.jnp.reshape(x, shape),
    tf=lambda tf, x, shape: tf.reshape(x, shape),
)


@st.composite
def _squeeze(draw):
    shape = draw(tensor_shapes(1, 3, 256, 1))
    shape = tuple(1 if draw(st.booleans()) else n for n in shape)
    return {"dim": draw(st.integers(-len(shape), len(shape) - 1)), "values": _values(draw)}, {"input": shape}


def _squeeze_dim(lib, x, dim, squeeze):
    return squeeze(x, axis=dim) if x.shape[dim] == 1 else x


record(
    "unsqueeze_copy",
    FAMILY,
    sample=_unsqueeze,
    fn=lambda T, x, dim: T.unsqueeze_copy(x, dim),
    jax=lambda J, x, dim: J.jnp.expand_dims(x, dim),
    tf=lambda tf, x, dim: tf.expand_dims(x, dim),
)
record(
    "squeeze_copy",
    FAMILY,
    rules=("squeeze_copy", "squeeze_copy_dim", "squeeze_copy_dims"),
    sample=_squeeze,
    fn=lambda T, x, dim: T.squeeze_copy(T.squeeze_copy(T.squeeze_copy(x, (dim,))).unsqueeze(0), 0),
    jax=lambda J, x, dim: J.jnp.squeeze(_squeeze_dim(J, x, dim, J.jnp.squeeze)),
    tf=lambda tf, x, dim: tf.squeeze(_squeeze_dim(tf, x, dim, tf.squeeze)),
    note="squeeze_copy of dims (a tuple), then of all unit dims, then of one (re-added) dim",
)


@st.composite
def _transpose(draw):
    shape = draw(tensor_shapes(2, 3, 256))
    d0 = draw(st.integers(-len(shape), len(shape) - 1))
    d1 = draw(st.integers(-len(shape), len(shape) - 1))
    return {"dim0": d0, "dim1": d1, "values": _values(draw)}, {"input": shape}


def _swap(lib_transpose, x, dim0, dim1):
    perm = list(range(len(x.shape)))
    perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
    return lib_transpose(x, perm)


record(
    "transpose_copy",
    FAMILY,
    sample=_transpose,
    fn=lambda T, x, dim0, dim1: T.transpose_copy(x, dim0, dim1),
    jax=lambda J, x, dim0, dim1: _swap(J.jnp.transpose, x, dim0, dim1),
    tf=lambda tf, x, dim0, dim1: _swap(tf.transpose, x, dim0, dim1),
)


@st.composite
def _matrix(draw):
    return {"values": _values(draw)}, {"input": draw(tensor_shapes(0, 2, 256))}


def _t(lib_transpose, x):
    return lib_transpose(x, list(reversed(range(len(x.shape)))))


record(
    "t_copy",
    FAMILY,
    sample=_matrix,
    fn=lambda T, x: T.t_copy(x),
    jax=lambda J, x: _t(J.jnp.transpose, x),
    tf=lambda tf, x: _t(tf.transpose, x),
)


@st.composite
def _unfold(draw):
    shape = draw(tensor_shapes(1, 3, 128, 1))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    size = draw(st.integers(0, shape[dim]))
    step = draw(st.integers(1, 3))
    return {"dim": dim, "size": size, "step": step, "values": _values(draw)}, {"input": shape}


record(
    "unfold_copy",
    FAMILY,
    sample=_unfold,
    fn=lambda T, x, dim, size, step: T.unfold_copy(x, dim, size, step),
    jax=lambda J, x, dim, size, step: J.jnp.stack(
        [
            J.jnp.moveaxis(J.jnp.take(x, J.jnp.arange(s, s + size), axis=dim % x.ndim), dim % x.ndim, -1)
            for s in range(0, x.shape[dim] - size + 1, step)
        ],
        axis=dim % x.ndim,
    ),
    tf=lambda tf, x, dim, size, step: tf.stack(
        [
            tf.experimental.numpy.moveaxis(  # (tf.range: int indices, also when empty)
                tf.gather(x, tf.range(s, s + size), axis=dim % len(x.shape)), dim % len(x.shape), -1
            )
            for s in range(0, x.shape[dim] - size + 1, step)
        ],
        axis=dim % len(x.shape),
    ),
    note="windows of size along dim, every step; the window dim last",
)


@st.composite
def _as_strided(draw):
    shape = draw(tensor_shapes(1, 2, 64, 1))
    n = 1
    for d in shape:
        n *= d
    size = draw(st.lists(st.integers(0, 3), min_size=1, max_size=2))
    stride = draw(st.lists(st.integers(0, 2), min_size=len(size), max_size=len(size)))
    span = sum((a - 1) * b for a, b in zip(size, stride) if a > 0)
    offset = draw(st.integers(0, max(0, n - 1 - span))) if span <= n - 1 else 0
    if span > n - 1:
        size = [0] * len(size)
    return {"size": size, "stride": stride, "offset": offset, "values": _values(draw)}, {"input": shape}


def _strided_indices(size, stride, offset):
    import itertools

    return [
        offset + sum(i * s for i, s in zip(idx, stride))
        for idx in itertools.product(*[range(a) for a in size])
    ]


record(
    "as_strided_copy",
    FAMILY,
    sample=_as_strided,
    fn=lambda T, x, size, stride, offset: T.as_strided_copy(x, size, stride, offset),
    jax=lambda J, x, size, stride, offset: J.jnp.reshape(
        J.jnp.take(J.jnp.reshape(x, (-1,)), J.jnp.asarray(_strided_indices(size, stride, offset), dtype=int)),
        size,
    ),
    tf=lambda tf, x, size, stride, offset: tf.reshape(
        tf.gather(tf.reshape(x, (-1,)), tf.constant(_strided_indices(size, stride, offset), dtype=tf.int64)),
        size,
    ),
    no_vmap=True,
    note="the strided elements of the contiguous input (a gather from its flat values); not under "
    "vmap: torch's as_strided batching rule reads each sample's physical storage (a batch dim that is "
    "not outermost interleaves the samples), the reference's each sample's own row-major values "
    "(reference.ops.batch_rules.as_strided_batch), so a vmapped as_strided is not one semantics",
)


def _pieces(x, dim, step):
    n = x.shape[dim]
    return [step] * (n // step) + ([n % step] if n % step else [])


record(
    "unbind_copy",
    FAMILY,
    rules=("unbind_copy", "split_with_sizes_copy"),
    sample=_split,
    fn=lambda T, x, dim: T.stack(
        [
            t * (i + 1.0)
            for i, t in enumerate(
                T.unbind_copy(T.cat(T.split_with_sizes_copy(x, _pieces(x, dim, 2), dim), dim), dim)
            )
        ],
        dim,
    ),
    jax=lambda J, x, dim: J.jnp.stack(
        [t * (i + 1.0) for i, t in enumerate(J.jnp.unstack(x, axis=dim))], axis=dim
    ),
    tf=lambda tf, x, dim: tf.stack([t * (i + 1.0) for i, t in enumerate(tf.unstack(x, axis=dim))], axis=dim),
    note="split_with_sizes_copy into pieces of 2, cat back, unbind_copy, each piece scaled, stacked",
)
record(
    "unsafe_split",
    FAMILY,
    rules=("unsafe_split", "unsafe_split_with_sizes"),
    sample=_split,
    fn=lambda T, x, dim: T.cat(
        [
            t * (i + 1.0)
            for i, t in enumerate(
                T.unsafe_split(x, 2, dim) + T.unsafe_split_with_sizes(x, _pieces(x, dim, 3), dim)
            )
        ],
        dim,
    ),
    jax=lambda J, x, dim: J.jnp.concatenate(
        [
            t * (i + 1.0)
            for i, t in enumerate(
                J.jnp.split(x, list(range(2, x.shape[dim], 2)), axis=dim)
                + J.jnp.split(x, list(range(3, x.shape[dim], 3)), axis=dim)
            )
        ],
        axis=dim,
    ),
    tf=lambda tf, x, dim: tf.concat(
        [
            t * (i + 1.0)
            for i, t in enumerate(
                tf.split(x, _pieces(x, dim, 2), axis=dim) + tf.split(x, _pieces(x, dim, 3), axis=dim)
            )
        ],
        axis=dim,
    ),
    no_vmap=True,
    note="pieces of 2 (unsafe_split) and of 3 (unsafe_split_with_sizes), scaled, concatenated; not "
    "under vmap: torch.func has no batching rule for unsafe_split_with_sizes (it raises)",
)
