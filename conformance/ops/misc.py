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


@st.composite
def _pool_backward(draw):
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w = 2 * draw(st.integers(1, 4)), 2 * draw(st.integers(1, 4))
    return {"values": "normal"}, {"input": (n, c, h, w), "gout": (n, c, h // 2, w // 2)}


def _torch_pool_backward(T, x, g):
    _, idx = T.nn.functional.max_pool2d(x, 2, return_indices=True)
    return T.ops.aten.max_pool2d_with_indices_backward.default(
        g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx
    )


def _jax_pool_backward(J, x, g):
    import jax

    def pool(v):
        return jax.lax.reduce_window(v, -J.jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    return jax.vjp(pool, x)[1](g)[0]


def _tf_pool_backward(tf, x, g):
    xt = tf.transpose(x, (0, 2, 3, 1))
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.nn.max_pool2d(xt, 2, 2, "VALID")
    return tf.transpose(tape.gradient(y, xt, output_gradients=tf.transpose(g, (0, 2, 3, 1))), (0, 3, 1, 2))


record(
    "max_pool2d_with_indices_backward",
    FAMILY,
    inputs=("input", "gout"),
    sample=_pool_backward,
    fn=_torch_pool_backward,
    jax=_jax_pool_backward,
    tf=_tf_pool_backward,
    note="2x2 windows, stride 2 (disjoint, so each input position receives at most one value); "
    "values without ties (the frameworks pick different maxima among ties)",
)
