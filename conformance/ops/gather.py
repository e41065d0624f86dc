"""Records of the dim-wise gathers and scatters (reference/ops/rules/gather.py) and the advanced
indexing primitives (index, index_put): duplicate indices where the op adds them, distinct ones
where a duplicate's winner is unspecified. Index arrays are parameters (integers, not fuzzed
values)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance.ops import record
from conformance.strategies import tensor_shapes, value_kinds

FAMILY = "gather"
_KINDS = ("normal", "ties", "nonfinite")


@st.composite
def _dim_index(draw, unique=False, src=False, max_size=128):
    """x's shape, dim, an index of x's rank (each dim no longer than x's, except along dim)."""
    shape = draw(tensor_shapes(1, 3, max_size, 1))
    r = len(shape)
    dim = draw(st.integers(-r, r - 1))
    d = dim % r
    ishape = [draw(st.integers(0, s)) for s in shape]
    n = shape[d]
    if unique:
        ishape[d] = draw(st.integers(0, n))
        off = draw(st.integers(0, n - 1))
        col = (np.arange(ishape[d]) + off) % n
        shp = [1] * r
        shp[d] = -1
        index = np.broadcast_to(col.reshape(shp), ishape)
    else:
        ishape[d] = draw(st.integers(0, 5))
        index = np.array(
            draw(
                st.lists(st.integers(0, n - 1), min_size=int(np.prod(ishape)), max_size=int(np.prod(ishape)))
            )
        ).reshape(ishape)
    params = {
        "dim": dim,
        "index": index.reshape(-1).tolist(),
        "ishape": ishape,
        "values": draw(value_kinds(_KINDS)),
    }
    shapes = {"input": shape}
    if src:
        shapes["src"] = tuple(ishape)
    return params, shapes


def _idx(T, index, ishape):
    return T.tensor(np.asarray(index, dtype=np.int64).reshape(ishape))


def _coords(index, ishape, dim):
    """The full coordinates of every index element (for .at[] and tensor_scatter_nd_*)."""
    d = dim % len(ishape)
    grid = list(np.indices(ishape))
    grid[d] = np.asarray(index, dtype=np.int64).reshape(ishape)
    return tuple(grid)


def _crop(x, ishape, dim):
    d = dim % len(ishape)
    return x[tuple(slice(None) if i == d else slice(0, s) for i, s in enumerate(ishape))]


record(
    "gather",
    FAMILY,
    sample=lambda: _dim_index(),
    fn=lambda T, x, dim, index, ishape: x.gather(dim, _idx(T, index, ishape)),
    jax=lambda J, x, dim, index, ishape: J.jnp.take_along_axis(
        _crop(x, ishape, dim), J.jnp.asarray(np.asarray(index, dtype=np.int32).reshape(ishape)), axis=dim
    ),
    tf=lambda tf, x, dim, index, ishape: tf.experimental.numpy.take_along_axis(
        _crop(x, ishape, dim), np.asarray(index, dtype=np.int64).reshape(ishape), axis=dim % len(ishape)
    ),
    note="duplicate indices: the VJP adds their cotangents",
)


def _jax_at(J, x, coords):
    return x.at[coords]


def _tf_nd(tf, x, coords, src, how):
    # int32 indices, the dtype of tf.constant of Python ints: tf.vectorized_map of
    # tensor_scatter_nd_update with int64 indices raises (pfor's converter concatenates an int32
    # loop counter with the indices: "Tensors in list passed to 'values' of 'ConcatV2' Op have
    # types [int32, int64]"), see docs/conformance.md "Seed-2 campaign: indexing and forward mode".
    idx = (
        np.stack([c.reshape(-1) for c in coords], axis=-1).astype(np.int32)
        if coords[0].size
        else np.zeros((0, len(coords)), np.int32)
    )
    upd = tf.reshape(src, (-1,))
    return getattr(tf, f"tensor_scatter_nd_{how}")(x, idx, upd)


record(
    "scatter_add_dim",
    FAMILY,
    inputs=("input", "src"),
    sample=lambda: _dim_index(src=True),
    fn=lambda T, x, src, dim, index, ishape: x.scatter_add(dim, _idx(T, index, ishape), src),
    jax=lambda J, x, src, dim, index, ishape: x.at[_coords(index, ishape, dim)].add(src),
    tf=lambda tf, x, src, dim, index, ishape: _tf_nd(tf, x, _coords(index, ishape, dim), src, "add"),
    note="duplicate indices add",
)
record(
    "scatter",
    FAMILY,
    inputs=("input", "src"),
    sample=lambda: _dim_index(unique=True, src=True),
    fn=lambda T, x, src, dim, index, ishape: x.scatter(dim, _idx(T, index, ishape), src),
    jax=lambda J, x, src, dim, index, ishape: x.at[_coords(index, ishape, dim)].set(src),
    tf=lambda tf, x, src, dim, index, ishape: _tf_nd(tf, x, _coords(index, ishape, dim), src, "update"),
    note="distinct indices along dim (a duplicate's winner is unspecified)",
)


@st.composite
def _with_value(draw, base):
    params, shapes = draw(base)
    return {**params, "value": draw(st.sampled_from([0.0, -1.5, 2.0]))}, shapes


record(
    "scatter_value",
    FAMILY,
    sample=lambda: _with_value(_dim_index()),
    fn=lambda T, x, dim, index, ishape, value: x.scatter(dim, _idx(T, index, ishape), value),
    jax=lambda J, x, dim, index, ishape, value: x.at[_coords(index, ishape, dim)].set(value),
    tf=lambda tf, x, dim, index, ishape, value: _tf_nd(
        tf,
        x,
        _coords(index, ishape, dim),
        tf.fill([int(np.prod(ishape))], tf.constant(value, x.dtype)),
        "update",
    ),
    note="a number written: duplicates write the same value",
)


@st.composite
def _scatter_reduce(draw):
    params, shapes = draw(_dim_index(src=True))
    return {
        **params,
        "values": draw(value_kinds(("normal", "wide"))),
        "reduce": draw(st.sampled_from(["sum", "mean", "amax", "amin"])),
        "include_self": draw(st.booleans()),
    }, shapes


_IDENT = {"sum": 0.0, "mean": 0.0, "amax": -np.inf, "amin": np.inf}


def _count(shape, index, ishape, dim, include_self):
    c = np.full(shape, 1.0 if include_self else 0.0)
    np.add.at(c, _coords(index, ishape, dim), 1.0)
    return np.where(c == 0, 1.0, c)


def _jax_scatter_reduce(J, x, src, dim, index, ishape, reduce, include_self):
    at = _coords(index, ishape, dim)
    base = x if include_self else x.at[at].set(_IDENT[reduce])
    out = {"sum": base.at[at].add, "mean": base.at[at].add, "amax": base.at[at].max, "amin": base.at[at].min}[
        reduce
    ](src)
    if reduce == "mean":
        out = out / _count(x.shape, index, ishape, dim, include_self).astype(x.dtype)
    return out


def _tf_scatter_reduce(tf, x, src, dim, index, ishape, reduce, include_self):
    at = _coords(index, ishape, dim)
    base = x
    if not include_self:
        base = _tf_nd(
            tf, x, at, tf.fill([int(np.prod(ishape))], tf.constant(_IDENT[reduce], x.dtype)), "update"
        )
    how = {"sum": "add", "mean": "add", "amax": "max", "amin": "min"}[reduce]
    out = _tf_nd(tf, base, at, src, how)
    if reduce == "mean":
        out = out / tf.constant(_count(tuple(x.shape), index, ishape, dim, include_self), x.dtype)
    return out


record(
    "scatter_reduce",
    FAMILY,
    inputs=("input", "src"),
    sample=_scatter_reduce,
    fn=lambda T, x, src, dim, index, ishape, reduce, include_self: x.scatter_reduce(
        dim, _idx(T, index, ishape), src, reduce, include_self=include_self
    ),
    jax=_jax_scatter_reduce,
    tf=_tf_scatter_reduce,
    note="sum, mean, amax, amin (prod has no declared error model); no ties among the candidates",
)


@st.composite
def _index_1d(draw, unique=False, src=False, max_size=128):
    shape = draw(tensor_shapes(1, 3, max_size, 1))
    r = len(shape)
    dim = draw(st.integers(-r, r - 1))
    n = shape[dim]
    if unique:
        index = draw(st.lists(st.integers(0, n - 1), max_size=n, unique=True))
    else:
        index = draw(st.lists(st.integers(0, n - 1), max_size=6))
    params = {"dim": dim, "index": index, "values": draw(value_kinds(_KINDS))}
    shapes = {"input": shape}
    if src:
        shapes["source"] = tuple(len(index) if i == dim % r else s for i, s in enumerate(shape))
    return params, shapes


def _i1(T, index):
    return T.tensor(index, dtype=T.int64)


def _along(x, dim, key):
    return (slice(None),) * (dim % len(x.shape)) + (np.asarray(key, dtype=np.int64),)


record(
    "index_select",
    FAMILY,
    sample=lambda: _index_1d(),
    fn=lambda T, x, dim, index: x.index_select(dim, _i1(T, index)),
    jax=lambda J, x, dim, index: J.jnp.take(x, np.asarray(index, dtype=np.int32).reshape(-1), axis=dim),
    tf=lambda tf, x, dim, index: tf.gather(
        x * 1.0, np.asarray(index, dtype=np.int64), axis=dim % len(x.shape)
    ),
)


@st.composite
def _index_add(draw):
    params, shapes = draw(_index_1d(src=True))
    return {**params, "alpha": draw(st.sampled_from([1.0, 2.0, -1.5]))}, shapes


record(
    "index_add",
    FAMILY,
    inputs=("input", "source"),
    sample=_index_add,
    fn=lambda T, x, s, dim, index, alpha: x.index_add(dim, _i1(T, index), s, alpha=alpha),
    jax=lambda J, x, s, dim, index, alpha: x.at[_along(x, dim, index)].add(s * alpha if alpha != 1 else s),
    tf="TensorFlow has no index_add along a dim (tensor_scatter_nd_add on the moved axis is a user "
    "composition); recorded on PyTorch and JAX",
    note="duplicate indices add",
)
record(
    "index_copy",
    FAMILY,
    inputs=("input", "source"),
    sample=lambda: _index_1d(unique=True, src=True),
    fn=lambda T, x, s, dim, index: x.index_copy(dim, _i1(T, index), s),
    jax=lambda J, x, s, dim, index: x.at[_along(x, dim, index)].set(s),
    tf="TensorFlow has no index_copy along a dim; recorded on PyTorch and JAX",
    note="distinct indices",
)
record(
    "index_fill",
    FAMILY,
    sample=lambda: _with_value(_index_1d()),
    fn=lambda T, x, dim, index, value: x.index_fill(dim, _i1(T, index), value),
    jax=lambda J, x, dim, index, value: x.at[_along(x, dim, index)].set(value),
    tf="TensorFlow has no index_fill along a dim; recorded on PyTorch and JAX",
)


@st.composite
def _index_fill_tensor(draw):
    params, shapes = draw(_index_1d())
    return params, {**shapes, "value": ()}


record(
    "index_fill_tensor",
    FAMILY,
    inputs=("input", "value"),
    sample=_index_fill_tensor,
    fn=lambda T, x, v, dim, index: x.index_fill(dim, _i1(T, index), v),
    jax=lambda J, x, v, dim, index: x.at[_along(x, dim, index)].set(v),
    tf="TensorFlow has no index_fill along a dim; recorded on PyTorch and JAX",
    note="a 0-d tensor value: its gradient sums the filled places' cotangents",
)


@st.composite
def _masked(draw, source=False):
    shape = draw(tensor_shapes(0, 3, 128))
    mask = draw(st.lists(st.booleans(), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    params = {"mask": mask, "values": draw(value_kinds(_KINDS))}
    shapes = {"input": shape}
    if source:
        shapes["source"] = (sum(mask) + draw(st.integers(0, 2)),)
    return params, shapes


def _mask(mask, shape):
    return np.asarray(mask, dtype=bool).reshape(shape)


record(
    "masked_select",
    FAMILY,
    sample=lambda: _masked(),
    fn=lambda T, x, mask: x.masked_select(T.tensor(_mask(mask, tuple(x.shape)))),
    jax="masked_select has a data-dependent shape: jax.jit cannot trace it (the mask is static here, "
    "but JAX has no masked_select primitive; x[mask] is the same gather as the index record)",
    tf=lambda tf, x, mask: tf.boolean_mask(tf.reshape(x, (-1,)), _mask(mask, (-1,))),
)


def _positions(mask, shape):
    return np.nonzero(_mask(mask, shape))


record(
    "masked_scatter",
    FAMILY,
    inputs=("input", "source"),
    sample=lambda: _masked(source=True),
    fn=lambda T, x, s, mask: x.masked_scatter(T.tensor(_mask(mask, tuple(x.shape))), s),
    jax=lambda J, x, s, mask: J.jnp.reshape(
        J.jnp.reshape(x, (-1,)).at[np.nonzero(_mask(mask, (-1,)))[0]].set(s[: int(sum(mask))]), x.shape
    ),
    tf=lambda tf, x, s, mask: tf.reshape(
        tf.tensor_scatter_nd_update(
            tf.reshape(x, (-1,)),
            np.nonzero(_mask(mask, (-1,)))[0].astype(np.int32).reshape(-1, 1),  # int32: see _tf_nd
            s[: int(sum(mask))],
        ),
        x.shape,
    ),
    note="the source's leading elements fill the masked places in order (the mask is a parameter)",
)


@st.composite
def _flat(draw, unique=False, src=False):
    shape = draw(tensor_shapes(1, 3, 128, 1))
    n = int(np.prod(shape))
    if unique:
        index = draw(st.lists(st.integers(0, n - 1), max_size=min(n, 12), unique=True))
    else:
        index = draw(st.lists(st.integers(-n, n - 1), max_size=12))
    params = {"index": index, "values": draw(value_kinds(_KINDS))}
    shapes = {"input": shape}
    if src:
        shapes["source"] = (len(index),)
    return params, shapes


record(
    "take_index",
    FAMILY,
    sample=lambda: _flat(),
    fn=lambda T, x, index: T.take(x, _i1(T, index)),
    jax=lambda J, x, index: J.jnp.take(J.jnp.reshape(x, (-1,)), np.asarray(index, dtype=np.int64) % x.size),
    tf=lambda tf, x, index: tf.gather(
        tf.reshape(x, (-1,)), np.asarray(index, dtype=np.int64) % int(np.prod(x.shape))
    ),
    note="torch.take: flat indices, negative ones from the end; duplicates",
)


@st.composite
def _put(draw):
    acc = draw(st.booleans())
    params, shapes = draw(_flat(unique=not acc, src=True))
    return {**params, "accumulate": acc}, shapes


def _jax_put(J, x, s, index, accumulate):
    flat = J.jnp.reshape(x, (-1,))
    at = flat.at[np.asarray(index, dtype=np.int64) % flat.shape[0]]
    return J.jnp.reshape(at.add(s) if accumulate else at.set(s), x.shape)


def _tf_put(tf, x, s, index, accumulate):
    flat = tf.reshape(x, (-1,))
    idx = (
        (np.asarray(index, dtype=np.int64) % int(flat.shape[0])).astype(np.int32).reshape(-1, 1)
    )  # see _tf_nd
    out = (tf.tensor_scatter_nd_add if accumulate else tf.tensor_scatter_nd_update)(flat, idx, s)
    return tf.reshape(out, x.shape)


record(
    "put_index",
    FAMILY,
    inputs=("input", "source"),
    sample=_put,
    fn=lambda T, x, s, index, accumulate: x.put(_i1(T, index), s, accumulate),
    jax=_jax_put,
    tf=_tf_put,
    note="Tensor.put: accumulate adds duplicates; without it the indices are distinct",
)


@st.composite
def _index(draw, put=False):
    shape = draw(tensor_shapes(1, 3, 128, 1))
    n = shape[0]
    acc = draw(st.booleans()) if put else False
    if put and not acc:
        index = draw(st.lists(st.integers(0, n - 1), max_size=n, unique=True))
    else:
        index = draw(st.lists(st.integers(-n, n - 1), max_size=6))
    params = {"index": index, "values": draw(value_kinds(_KINDS))}
    shapes = {"input": shape}
    if put:
        params["accumulate"] = acc
        shapes["values_in"] = (len(index), *shape[1:])
    return params, shapes


record(
    "index",
    FAMILY,
    rules=("index",),
    sample=lambda: _index(),
    fn=lambda T, x, index: x[_i1(T, index)],
    jax=lambda J, x, index: x[np.asarray(index, dtype=np.int64) % x.shape[0]],
    tf=lambda tf, x, index: tf.gather(x, np.asarray(index, dtype=np.int64) % x.shape[0]),
    note="advanced indexing of dim 0 by an integer tensor (negative indices, duplicates)",
)


def _jax_index_put(J, x, v, index, accumulate):
    at = x.at[np.asarray(index, dtype=np.int64) % x.shape[0]]
    return at.add(v) if accumulate else at.set(v)


def _tf_index_put(tf, x, v, index, accumulate):
    idx = (np.asarray(index, dtype=np.int64) % x.shape[0]).astype(np.int32).reshape(-1, 1)  # see _tf_nd
    return (tf.tensor_scatter_nd_add if accumulate else tf.tensor_scatter_nd_update)(x, idx, v)


record(
    "index_put",
    FAMILY,
    inputs=("input", "values_in"),
    sample=lambda: _index(put=True),
    fn=lambda T, x, v, index, accumulate: x.index_put((_i1(T, index),), v, accumulate),
    jax=_jax_index_put,
    tf=_tf_index_put,
    note="accumulate adds duplicates; without it the indices are distinct",
)
