"""Records of the reductions (reference/ops/rules/reductions.py): long ones past the 4096 blocking
threshold tell an accumulator of the input dtype from a float32 one."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import record
from conformance.strategies import LONG_SIZES, tensor_shapes, value_kinds

FAMILY = "reductions"


@st.composite
def _sample(draw, with_dim, min_dim=0):
    if draw(st.integers(0, 5)) == 0:  # a long reduction, alone or with a short batch dim
        n = draw(st.sampled_from(LONG_SIZES))
        shape = (n,) if draw(st.booleans()) else (draw(st.integers(1, 2)), n)
    else:
        shape = draw(tensor_shapes(1 if with_dim else 0, 3, 2048, min_dim))
    params = {"values": draw(value_kinds())}
    if with_dim:
        rank = len(shape)
        dims = draw(
            st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank, unique_by=lambda d: d % rank)
        )
        params["dim"] = dims[0] if len(dims) == 1 and draw(st.booleans()) else dims
        params["keepdim"] = draw(st.booleans())
    return params, {"input": shape}


def _axis(dim):
    return tuple(dim) if isinstance(dim, list) else dim


for _name, _t, _j, _tf in (
    ("sum", "sum", "sum", "reduce_sum"),
    ("mean", "mean", "mean", "reduce_mean"),
):
    record(
        _name,
        FAMILY,
        sample=lambda: _sample(False),
        fn=lambda T, x, _t=_t: getattr(x, _t)(),
        jax=lambda J, x, _j=_j: getattr(J.jnp, _j)(x),
        tf=lambda tf, x, _tf=_tf: getattr(tf.math, _tf)(x),
    )
    record(
        _name + "_dim",
        FAMILY,
        sample=lambda: _sample(True),
        fn=lambda T, x, dim, keepdim, _t=_t: getattr(x, _t)(dim, keepdim=keepdim),
        jax=lambda J, x, dim, keepdim, _j=_j: getattr(J.jnp, _j)(x, axis=_axis(dim), keepdims=keepdim),
        tf=lambda tf, x, dim, keepdim, _tf=_tf: getattr(tf.math, _tf)(x, axis=dim, keepdims=keepdim),
    )

for _name, _j, _tf in (("amax", "max", "reduce_max"), ("amin", "min", "reduce_min")):
    record(
        _name,
        FAMILY,
        sample=lambda: _sample(True, 1),  # no empty dims: a max over nothing is an error
        fn=lambda T, x, dim, keepdim, _n=_name: getattr(T, _n)(x, dim, keepdim=keepdim),
        jax=lambda J, x, dim, keepdim, _j=_j: getattr(J.jnp, _j)(x, axis=_axis(dim), keepdims=keepdim),
        tf=lambda tf, x, dim, keepdim, _tf=_tf: getattr(tf.math, _tf)(x, axis=dim, keepdims=keepdim),
        note="ties share the gradient equally in all three frameworks",
    )
