"""Records of reference/ops/rules/misc.py: out-of-place fill (exact), ldexp, frexp (exact)."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import record
from conformance.strategies import tensor_shapes, value_kinds

FAMILY = "misc"


def _values(draw):
    return draw(value_kinds(("normal", "ties", "nonfinite")))


@st.composite
def _fill(draw):
    shape = draw(tensor_shapes(0, 3, 256))
    return {"value": draw(st.sampled_from([0.0, -1.5, 3.25])), "values": _values(draw)}, {"input": shape}


record(
    "fill_out",
    FAMILY,
    sample=_fill,
    fn=lambda T, x, value: T.fill(x, value),
    jax=lambda J, x, value: J.jnp.full_like(x, value),
    tf=lambda tf, x, value: tf.fill(tf.shape(x), tf.constant(value, dtype=x.dtype)),
)


@st.composite
def _fill_tensor(draw):
    shape = draw(tensor_shapes(0, 3, 256))
    return {"values": _values(draw)}, {"input": shape, "value": ()}


record(
    "fill_tensor_out",
    FAMILY,
    inputs=("input", "value"),
    sample=_fill_tensor,
    fn=lambda T, x, value: T.fill(x, value),
    jax=lambda J, x, value: J.jnp.broadcast_to(value, x.shape),
    tf=lambda tf, x, value: tf.broadcast_to(value, tf.shape(x)),
)


@st.composite
def _ldexp(draw):
    shape = draw(tensor_shapes(0, 3, 256))
    return {"values": _values(draw)}, {"input": shape, "other": shape}


record(
    "ldexp",
    FAMILY,
    inputs=("input", "other"),
    sample=_ldexp,
    fn=lambda T, x, other: T.ldexp(x, other),
    jax=lambda J, x, other: x * J.jnp.power(J.jnp.asarray(2.0, dtype=x.dtype), other),
    tf=lambda tf, x, other: x * tf.pow(tf.constant(2.0, dtype=x.dtype), other),
    note="x * 2**other with a floating exponent (jax.numpy.ldexp takes integer exponents only)",
)


@st.composite
def _frexp(draw):
    return {"values": _values(draw)}, {"input": draw(tensor_shapes(0, 3, 256))}


record(
    "frexp",
    FAMILY,
    sample=_frexp,
    fn=lambda T, x: T.frexp(x).mantissa,
    jax=lambda J, x: J.jnp.frexp(x)[0],
    tf="TensorFlow has no frexp",
    note="the mantissa (the exponent is an integer output with no gradient)",
)
