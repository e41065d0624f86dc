"""Records of the view and joining primitives (reference/ops/rules/shape.py): exact ops, so any
difference is a semantic one (the bound is the inputs' own, zero)."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import not_fuzzed, record
from conformance.strategies import tensor_shapes, value_kinds

FAMILY = "shape"


def _values(draw):
    return draw(value_kinds(("normal", "ties", "nonfinite")))


@st.composite
def _reshape(draw):
    shape = draw(tensor_shapes(1, 3, 512))
    n = 1
    for d in shape:
        n *= d
    target = (
        [n]
        if n == 0
        else draw(st.sampled_from([[n], [-1], [1, n], [n, 1]] + ([[2, n // 2]] if n % 2 == 0 else [])))
    )
    return {"shape": target, "values": _values(draw)}, {"input": shape}


record(
    "view",
    FAMILY,
    rules=("view", "alias"),
    sample=_reshape,
    fn=lambda T, x, shape: x.reshape(shape),
    jax=lambda J, x, shape: J.jnp.reshape(x, shape),
    tf=lambda tf, x, shape: tf.reshape(x, shape),
)


@st.composite
def _transposed_reshape(draw):
    shape = draw(tensor_shapes(2, 2, 256, 1))
    return {"values": _values(draw)}, {"input": shape}


record(
    "reshape_copy",
    FAMILY,
    sample=_transposed_reshape,
    fn=lambda T, x: x.t().reshape(-1),
    jax=lambda J, x: J.jnp.reshape(x.T, (-1,)),
    tf=lambda tf, x: tf.reshape(tf.transpose(x), (-1,)),
    note="reshape of a non-contiguous view: a copy (aten's _reshape_copy path)",
)


@st.composite
def _permute(draw):
    shape = draw(tensor_shapes(1, 3, 512))
    dims = draw(st.permutations(list(range(len(shape)))))
    return {"dims": list(dims), "values": _values(draw)}, {"input": shape}


record(
    "permute",
    FAMILY,
    sample=_permute,
    fn=lambda T, x, dims: x.permute(dims),
    jax=lambda J, x, dims: J.jnp.transpose(x, dims),
    tf=lambda tf, x, dims: tf.transpose(x, dims),
)


@st.composite
def _expand(draw):
    shape = draw(tensor_shapes(1, 3, 64))
    target = [draw(st.integers(0, 3)) if d == 1 else d for d in shape]
    lead = draw(st.lists(st.integers(0, 3), max_size=1))
    return {"size": lead + target, "values": _values(draw)}, {"input": shape}


record(
    "expand",
    FAMILY,
    sample=_expand,
    fn=lambda T, x, size: x.expand(size),
    jax=lambda J, x, size: J.jnp.broadcast_to(x, size),
    tf=lambda tf, x, size: tf.broadcast_to(x, size),
)


@st.composite
def _unsqueeze(draw):
    shape = draw(tensor_shapes(0, 3, 256))
    return {"dim": draw(st.integers(-len(shape) - 1, len(shape))), "values": _values(draw)}, {"input": shape}


record(
    "unsqueeze",
    FAMILY,
    sample=_unsqueeze,
    fn=lambda T, x, dim: x.unsqueeze(dim),
    jax=lambda J, x, dim: J.jnp.expand_dims(x, dim),
    tf=lambda tf, x, dim: tf.expand_dims(x, dim),
)


@st.composite
def _select(draw):
    shape = draw(tensor_shapes(1, 3, 256, 1))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    index = draw(st.integers(-shape[dim], shape[dim] - 1))
    return {"dim": dim, "index": index, "values": _values(draw)}, {"input": shape}


def _take_along(lib, x, dim, index):
    return lib.gather(x, index % x.shape[dim], axis=dim)


record(
    "select",
    FAMILY,
    sample=_select,
    fn=lambda T, x, dim, index: x.select(dim, index),
    jax=lambda J, x, dim, index: J.jnp.take(x, index, axis=dim),
    tf=lambda tf, x, dim, index: _take_along(tf, x, dim, index),
)


@st.composite
def _slice(draw):
    shape = draw(tensor_shapes(1, 3, 256, 1))
    dim = draw(st.integers(0, len(shape) - 1))
    start = draw(st.integers(0, shape[dim]))
    stop = draw(st.integers(start, shape[dim]))
    step = draw(st.integers(1, 3))
    return {"dim": dim, "start": start, "stop": stop, "step": step, "values": _values(draw)}, {"input": shape}


def _sl(x, dim, start, stop, step):
    return x[(slice(None),) * dim + (slice(start, stop, step),)]


record(
    "slice",
    FAMILY,
    sample=_slice,
    fn=lambda T, x, dim, start, stop, step: _sl(x, dim, start, stop, step),
    jax=lambda J, x, dim, start, stop, step: _sl(x, dim, start, stop, step),
    tf=lambda tf, x, dim, start, stop, step: _sl(x, dim, start, stop, step),
)


@st.composite
def _diagonal(draw):
    shape = draw(tensor_shapes(2, 3, 256, 1))
    return {"offset": draw(st.integers(-2, 2)), "values": _values(draw)}, {"input": shape}


record(
    "diagonal",
    FAMILY,
    sample=_diagonal,
    fn=lambda T, x, offset: T.diagonal(x, offset, 0, 1),
    jax=lambda J, x, offset: J.jnp.diagonal(x, offset, 0, 1),
    tf="tf.linalg.diag_part takes the last two dims and puts the diagonal last; a dims-(0, 1) diagonal "
    "with an offset is a transpose plus diag_part(k=offset) whose padding rules differ (not recorded)",
)


@st.composite
def _split(draw):
    shape = draw(tensor_shapes(1, 3, 256, 1))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return {"dim": dim, "values": _values(draw)}, {"input": shape}


record(
    "unbind",
    FAMILY,
    rules=("unbind", "stack"),
    sample=_split,
    fn=lambda T, x, dim: T.stack([t * (i + 1.0) for i, t in enumerate(x.unbind(dim))], dim),
    jax=lambda J, x, dim: J.jnp.stack(
        [t * (i + 1.0) for i, t in enumerate(J.jnp.unstack(x, axis=dim))], axis=dim
    ),
    tf=lambda tf, x, dim: tf.stack([t * (i + 1.0) for i, t in enumerate(tf.unstack(x, axis=dim))], axis=dim),
    note="unbind, each piece scaled differently, stacked back (covers stack too)",
)
record(
    "split",
    FAMILY,
    rules=("split", "split_with_sizes", "cat"),
    sample=_split,
    fn=lambda T, x, dim: T.cat([t * (i + 1.0) for i, t in enumerate(x.split(2, dim))], dim),
    jax=lambda J, x, dim: J.jnp.concatenate(
        [t * (i + 1.0) for i, t in enumerate(J.jnp.split(x, list(range(2, x.shape[dim], 2)), axis=dim))],
        axis=dim,
    ),
    tf=lambda tf, x, dim: tf.concat(
        [
            t * (i + 1.0)
            for i, t in enumerate(
                tf.split(x, [2] * (x.shape[dim] // 2) + [x.shape[dim] % 2] * (x.shape[dim] % 2), axis=dim)
            )
        ],
        axis=dim,
    ),
    note="split into pieces of 2, each scaled differently, concatenated back (covers cat too)",
)
not_fuzzed(
    "as_strided",
    FAMILY,
    "arbitrary strides into storage: JAX and TensorFlow have no storage to stride into; the program "
    "cases check as_strided (functionalised as gathers) on all three frameworks",
)
not_fuzzed("stack", FAMILY, "covered by the unbind record (unbind, scale, stack)")
not_fuzzed("cat", FAMILY, "covered by the split record (split, scale, cat)")
not_fuzzed("split_with_sizes", FAMILY, "covered by the split record")
not_fuzzed("alias", FAMILY, "internal: x[...] and .view_as make it; covered by the view record")


@st.composite
def _with_ones(draw):
    shape = [draw(st.sampled_from((1, 1, 2, 3, 8))) for _ in range(draw(st.integers(1, 4)))]
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return {"dim": dim, "values": _values(draw)}, {"input": tuple(shape)}


def _jax_squeeze(J, x, dim):
    return J.jnp.squeeze(x, dim) if x.shape[dim] == 1 else x


def _tf_squeeze(tf, x, dim):
    return tf.squeeze(x, [dim]) if x.shape[dim] == 1 else x


record(
    "squeeze",
    FAMILY,
    sample=lambda: _with_ones().map(lambda ps: ({"values": ps[0]["values"]}, ps[1])),
    fn=lambda T, x: x.squeeze(),
    jax=lambda J, x: J.jnp.squeeze(x),
    tf=lambda tf, x: tf.squeeze(x),
)
record(
    "squeeze_dim",
    FAMILY,
    rules=("squeeze_dim", "squeeze_dims"),
    sample=_with_ones,
    fn=lambda T, x, dim: x.squeeze(dim),
    jax=lambda J, x, dim: _jax_squeeze(J, x, dim),
    tf=lambda tf, x, dim: _tf_squeeze(tf, x, dim),
    note="PyTorch's squeeze(dim) of a dim that is not 1 is a no-op (JAX and TF raise: spelled as the no-op)",
)
not_fuzzed("squeeze_dims", FAMILY, "covered by the squeeze_dim record")


@st.composite
def _transpose(draw):
    shape = draw(tensor_shapes(1, 3, 512))
    r = len(shape)
    return {
        "dim0": draw(st.integers(-r, r - 1)),
        "dim1": draw(st.integers(-r, r - 1)),
        "values": _values(draw),
    }, {"input": shape}


def _swap(lib, x, dim0, dim1):
    r = len(x.shape)
    perm = list(range(r))
    perm[dim0 % r], perm[dim1 % r] = perm[dim1 % r], perm[dim0 % r]
    return lib.transpose(x, perm)


record(
    "transpose",
    FAMILY,
    rules=("transpose", "t"),
    sample=_transpose,
    fn=lambda T, x, dim0, dim1: x.transpose(dim0, dim1),
    jax=lambda J, x, dim0, dim1: _swap(J.jnp, x, dim0, dim1),
    tf=lambda tf, x, dim0, dim1: _swap(tf, x, dim0, dim1),
)
not_fuzzed("t", FAMILY, "covered by the transpose record")
