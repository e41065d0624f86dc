"""Records of sort and topk (reference/ops/rules/sorting.py): values only (the indices are integer),
no ties (the frameworks order equal values differently)."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import record
from conformance.ops._conventions import Alternative, Convention, any_repeated
from conformance.ops._ties import tie_routing
from conformance.ops.scans import along
from conformance.strategies import tensor_shapes, value_kinds

FAMILY = "sorting"
_KINDS = ("normal", "wide", "large", "tiny")


def _with_descending(draw_sample):
    @st.composite
    def sample(draw):
        params, shapes = draw(draw_sample())
        return {**params, "descending": draw(st.booleans())}, shapes

    return sample


def _jax_sort(J, x, dim, descending):
    # JAX's own descending sort: it reverses a stable ascending sort, so equal values come out in
    # reversed order (its gradient follows them: the convention sort-descending-order-of-equal-values)
    return J.jnp.sort(x, axis=dim, descending=descending)


def _tf_sort(tf, x, dim, descending):
    return tf.sort(x, axis=dim, direction="DESCENDING" if descending else "ASCENDING")


def _reversed_among_equals(T, x, dim, descending):
    ascending = T.sort(x, dim=dim, stable=True).values
    return T.flip(ascending, (dim,)) if descending else ascending


#: the order of equal values in a descending sort (their gradients follow them)
_DESCENDING_TIES = Convention(
    "sort-descending-order-of-equal-values",
    "where a descending sort meets equal values, their order (and so where each one's gradient goes): "
    "the reference keeps their original order (PyTorch's stable sort)",
    lambda np_, a, p: bool(p.get("descending")) and any_repeated(np_, a, p),
    (
        Alternative(
            "reversed",
            _reversed_among_equals,
            "JAX: jnp.sort(descending=True) reverses a stable ascending sort",
        ),
    ),
)

record(
    "sort",
    FAMILY,
    sample=_with_descending(along(_KINDS)),
    fn=lambda T, x, dim, descending: T.sort(x, dim, descending).values,
    jax=_jax_sort,
    tf=_tf_sort,
    # torch.sort without stable=True orders equal values as its algorithm leaves them
    conventions=(
        _DESCENDING_TIES,
        tie_routing(
            "sort",
            lambda T, x, dim, descending: T.sort(x, dim=dim, descending=descending, stable=True).indices,
            also="equal values in their original order (a stable sort)",
        ),
    ),
)
record(
    "sort_stable",
    FAMILY,
    sample=_with_descending(along(_KINDS)),
    fn=lambda T, x, dim, descending: T.sort(x, dim=dim, descending=descending, stable=True).values,
    jax=_jax_sort,
    tf=_tf_sort,
    conventions=(_DESCENDING_TIES,),
)


@st.composite
def _topk(draw):
    shape = draw(tensor_shapes(1, 3, 256, 1))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return {
        "dim": dim,
        "k": draw(st.integers(0, shape[dim])),
        "largest": draw(st.booleans()),
        "values": draw(value_kinds(_KINDS)),
    }, {"input": shape}


def _last(lib_moveaxis, top_k, neg):
    def f(x, k, dim, largest):
        y = lib_moveaxis(x, dim, -1)
        v = top_k(y if largest else neg(y), k)
        return lib_moveaxis(v if largest else neg(v), -1, dim)

    return f


record(
    "topk",
    FAMILY,
    sample=_topk,
    fn=lambda T, x, dim, k, largest: T.topk(x, k, dim, largest, True).values,
    jax=lambda J, x, dim, k, largest: _last(J.jnp.moveaxis, lambda y, k: J.lax.top_k(y, k)[0], lambda v: -v)(
        x, k, dim, largest
    ),
    tf=lambda tf, x, dim, k, largest: _last(
        tf.experimental.numpy.moveaxis, lambda y, k: tf.math.top_k(y, k).values, lambda v: -v
    )(x, k, dim, largest),
    note="JAX and TF take the top k of the last axis: moved there and back; smallest k as -top_k(-x)",
    # torch.topk orders equal values as its partial sort leaves them (neither stable nor reversed)
    conventions=(tie_routing("topk", lambda T, x, dim, k, largest: T.topk(x, k, dim, largest, True).indices),),
)
