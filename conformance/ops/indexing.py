"""Records of the indexing primitives (reference/ops/rules/indexing.py): gathers with duplicate
indices (their VJP is a scatter-add that must add duplicates) and index assignment."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance.ops import not_fuzzed, record
from conformance.strategies import tensor_shapes, value_kinds
from reference.ops import api

FAMILY = "indexing"


@st.composite
def _take(draw):
    shape = draw(tensor_shapes(1, 3, 256, 1))
    n = 1
    for d in shape:
        n *= d
    index = draw(st.lists(st.integers(0, n - 1), min_size=0, max_size=24))
    if index and draw(st.booleans()):
        index = index + index[: draw(st.integers(1, len(index)))]  # duplicates
    return {"index": index, "values": draw(value_kinds(("normal", "ties", "nonfinite")))}, {"input": shape}


def _reference_take(T, x, index):
    """The reference has no public torch.take: its table primitive, through the api module."""
    return api.take(x, np.asarray(index, dtype=np.int64))


def _reference_put(T, x, src, index):
    return api.put(x, np.asarray(index, dtype=np.int64), src)


def _flat(lib, x):
    return lib.reshape(x, (-1,))


record(
    "take",
    FAMILY,
    rules=("take", "scatter_add"),
    sample=_take,
    fn=_reference_take,
    torch=lambda torch, x, index: torch.take(x, torch.tensor(index, dtype=torch.int64)),
    jax=lambda J, x, index: J.jnp.take(_flat(J.jnp, x), J.jnp.asarray(index, dtype=J.jnp.int32)),
    tf=lambda tf, x, index: tf.gather(_flat(tf, x), tf.constant(index, dtype=tf.int64)),
    note="duplicate indices: the VJP (scatter_add) must add their cotangents",
)


@st.composite
def _put(draw):
    n = draw(st.sampled_from((1, 2, 5, 8, 17, 33)))
    index = draw(st.lists(st.integers(0, n - 1), min_size=0, max_size=n, unique=True))
    return {"index": index, "values": draw(value_kinds(("normal", "ties", "nonfinite")))}, {
        "input": (n,),
        "src": (len(index),),
    }


def _torch_put(T, x, src, index):
    # out of place: torch.func.vmap cannot run the in-place `y[index] = src` (index_put_) on an
    # unbatched y with a batched src ("vmap: index_put_(self, *extra_args) is not possible ...
    # Please try to use out-of-place operators instead of index_put_", the documented
    # torch.func limitation on in-place ops); torch.index_put is the same IndexPutBackward0 node
    return T.index_put(x, (T.tensor(index, dtype=T.int64),), src)


record(
    "put",
    FAMILY,
    inputs=("input", "src"),
    sample=_put,
    fn=_reference_put,
    torch=_torch_put,
    jax=lambda J, x, src, index: x.at[J.jnp.asarray(index, dtype=J.jnp.int32)].set(src),
    # int32 indices (tf.constant's dtype for Python ints): pfor's converter of
    # tensor_scatter_nd_update fails on int64 ones (conformance/ops/gather.py, _tf_nd)
    tf=lambda tf, x, src, index: tf.tensor_scatter_nd_update(
        x, tf.reshape(tf.constant(index, dtype=tf.int32), (-1, 1)), src
    ),
    note="x[index] = src with distinct indices (with duplicates the winner is unspecified)",
)
not_fuzzed("scatter_add", FAMILY, "internal: take's VJP; reached by the take record (duplicate indices)")
