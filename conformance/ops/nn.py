"""Records of the neural-network primitives (reference/ops/rules/nn.py): softmax, log_softmax,
pooling, batch norm."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import not_fuzzed, record
from conformance.ops._conventions import max_pool_gradient_at_nan
from conformance.strategies import tensor_shapes, value_kinds

FAMILY = "nn"


@st.composite
def _along_dim(draw):
    shape = draw(tensor_shapes(1, 3, 2048, 1))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return {"dim": dim, "values": draw(value_kinds())}, {"input": shape}


record(
    "softmax",
    FAMILY,
    sample=_along_dim,
    fn=lambda T, x, dim: T.softmax(x, dim),
    jax=lambda J, x, dim: J.nn.softmax(x, axis=dim),
    tf=lambda tf, x, dim: tf.nn.softmax(x, axis=dim),
)
record(
    "log_softmax",
    FAMILY,
    sample=_along_dim,
    fn=lambda T, x, dim: T.log_softmax(x, dim),
    jax=lambda J, x, dim: J.nn.log_softmax(x, axis=dim),
    tf=lambda tf, x, dim: tf.nn.log_softmax(x, axis=dim),
)



@st.composite
def _standardize(draw):
    shape = draw(tensor_shapes(1, 3, 256, 1))
    rank = len(shape)
    dims = draw(st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank, unique_by=lambda d: d % rank))
    params = {
        "dim": dims[0] if len(dims) == 1 and draw(st.booleans()) else dims,
        "eps": draw(st.sampled_from([1e-5, 0.5])),
        # JAX's two formulas of the variance (the same mathematics): the reference ignores it
        "algorithm": draw(st.sampled_from(["fast", "stable"])),
        "values": draw(value_kinds()),
    }
    return params, {"input": shape}


# jax.nn.standardize: the reference's composite is layer_norm's two-pass (x - mean) (var + eps)^-1/2
record(
    "standardize",
    FAMILY,
    sample=_standardize,
    fn=lambda T, x, dim, eps, algorithm: T.nn.functional.standardize(x, dim, eps=eps),
    jax=lambda J, x, dim, eps, algorithm: J.nn.standardize(
        x, axis=tuple(dim) if isinstance(dim, list) else dim, epsilon=eps, algorithm=algorithm
    ),
    tf="TensorFlow has no standardize (tf.nn.moments and tf.nn.batch_normalization compose it: not a "
    "function of its own)",
    torch="PyTorch has no standardize (torch 2.13: F.layer_norm standardizes only trailing dims)",
    rules=("mean", "sub", "mul", "add", "pow"),  # the composite's table primitives: no rule of its own
)

@st.composite
def _pool(draw):
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    p = (draw(st.integers(0, k[0] // 2)), draw(st.integers(0, k[1] // 2)))
    n, c = draw(st.integers(0, 2)), draw(st.sampled_from((1, 2, 3, 8, 9, 16)))
    h = draw(st.integers(max(k[0] - 2 * p[0], 1), 9))
    w = draw(st.integers(max(k[1] - 2 * p[1], 1), 9))
    params = {"kernel_size": list(k), "stride": list(s), "padding": list(p), "values": draw(value_kinds())}
    return params, {"input": (n, c, h, w)}


def _jax_window(J, x, kernel_size, stride, padding, init, op):
    pads = [(0, 0), (0, 0)] + [(q, q) for q in padding]
    # a Python scalar init: JAX recognises the add/max monoid and differentiates the window reduction
    return J.lax.reduce_window(x, init, op, (1, 1, *kernel_size), (1, 1, *stride), pads)


def _tf_nhwc(tf, x, padding, value):
    x = tf.transpose(x, (0, 2, 3, 1))
    pads = [[0, 0], [padding[0], padding[0]], [padding[1], padding[1]], [0, 0]]
    return tf.pad(x, pads, constant_values=tf.constant(value, x.dtype))


record(
    "avg_pool2d",
    FAMILY,
    rules=("avg_pool2d", "avg_pool2d_backward"),
    sample=lambda: _pool(),
    fn=lambda T, x, kernel_size, stride, padding: T.nn.functional.avg_pool2d(x, kernel_size, stride, padding),
    jax=lambda J, x, kernel_size, stride, padding: (
        _jax_window(J, x, kernel_size, stride, padding, 0.0, J.lax.add) / (kernel_size[0] * kernel_size[1])
    ),
    tf=lambda tf, x, kernel_size, stride, padding: tf.transpose(
        tf.nn.avg_pool2d(_tf_nhwc(tf, x, padding, 0.0), kernel_size, stride, "VALID"), (0, 3, 1, 2)
    ),
    note="count_include_pad=True (PyTorch's default): JAX and TF spell it as a window sum over the "
    "zero-padded input divided by the window area",
)
record(
    "max_pool2d",
    FAMILY,
    sample=lambda: _pool(),
    fn=lambda T, x, kernel_size, stride, padding: T.nn.functional.max_pool2d(x, kernel_size, stride, padding),
    jax=lambda J, x, kernel_size, stride, padding: _jax_window(
        J, x, kernel_size, stride, padding, -float("inf"), J.lax.max
    ),
    tf=lambda tf, x, kernel_size, stride, padding: tf.transpose(
        tf.nn.max_pool2d(_tf_nhwc(tf, x, padding, -float("inf")), kernel_size, stride, "VALID"), (0, 3, 1, 2)
    ),
    conventions=(
        max_pool_gradient_at_nan(
            lambda T, x, kernel_size, stride, padding: T.nn.functional.max_pool2d(
                x, kernel_size, stride, padding
            )
        ),
    ),
)


@st.composite
def _bn(draw):
    c = draw(st.sampled_from((1, 2, 3, 8, 16, 17)))
    n = draw(st.integers(1, 4))
    spatial = draw(st.sampled_from([(), (3,), (2, 3), (5,)]))
    if n * (1 if not spatial else spatial[0] * (spatial[1] if len(spatial) > 1 else 1)) < 2:
        n = 2
    params = {
        "eps": draw(st.sampled_from([1e-5, 1e-3])),
        "values": draw(value_kinds(("normal", "wide", "ties", "large"))),
    }
    return params, {"input": (n, c, *spatial), "weight": (c,), "bias": (c,)}


def _bshape(x):
    return (1, -1) + (1,) * (len(x.shape) - 2)


def _jax_bn(J, x, w, b, eps):
    jnp = J.jnp
    axes = (0,) + tuple(range(2, x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.var(x, axis=axes, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * w.reshape(_bshape(x)) + b.reshape(_bshape(x))


def _tf_bn(tf, x, w, b, eps):
    axes = [0] + list(range(2, len(x.shape)))
    mean, var = tf.nn.moments(x, axes, keepdims=True)
    return tf.nn.batch_normalization(x, mean, var, tf.reshape(b, _bshape(x)), tf.reshape(w, _bshape(x)), eps)


record(
    "batch_norm",
    FAMILY,
    rules=("batch_norm", "batch_norm_backward"),
    inputs=("input", "weight", "bias"),
    sample=_bn,
    fn=lambda T, x, w, b, eps: T.nn.functional.batch_norm(x, None, None, w, b, training=True, eps=eps),
    jax=_jax_bn,
    tf=_tf_bn,
    note="training mode, batch statistics (biased variance); JAX has no batch-norm op: spelled as a "
    "JAX user writes it with jnp.mean/jnp.var (two-pass), TF with tf.nn.moments + batch_normalization",
)
not_fuzzed(
    "softmax_centred",
    FAMILY,
    "internal: g - Σ(g·y) of softmax's VJP and JVP, exact in float64; reached by the softmax, "
    "log_softmax and logsumexp records' vjp, vjp_vjp, jvp, the second-order forward checks and vmap_vjp",
)
not_fuzzed(
    "softmax_centred_t",
    FAMILY,
    "internal: g - y·Σg of log_softmax's VJP (the transpose of softmax_centred), exact in float64; "
    "reached by the log_softmax and softmax records' vjp, vjp_vjp, jvp and vmap_vjp",
)
not_fuzzed(
    "log_softmax_exp",
    FAMILY,
    "internal: exp(result) of log_softmax's VJP, softmax(self) from the input in float64; reached by "
    "the log_softmax record's vjp, vjp_vjp, jvp and vmap_vjp",
)
not_fuzzed(
    "batch_norm_backward",
    FAMILY,
    "internal: batch_norm's VJP; reached by the batch_norm record's vjp and vjp_vjp checks",
)
not_fuzzed(
    "dropout",
    FAMILY,
    "random: each framework draws its own mask (the reference's mask is an input); no two spellings "
    "compute the same function",
)
