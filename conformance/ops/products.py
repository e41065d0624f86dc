"""Records of aten's fused products (reference/ops/rules/products.py): beta*self + alpha*product,
vdot, trace, cross."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import record
from conformance.strategies import EDGE_SIZES, value_kinds

FAMILY = "products"
_KINDS = ("normal", "wide", "ties", "tiny", "nonfinite")


def _n(draw):
    return draw(st.one_of(st.integers(0, 4), st.sampled_from(EDGE_SIZES[1:12])))


@st.composite
def _add(draw, kind):
    n, k, m, b = _n(draw), _n(draw), _n(draw), draw(st.integers(0, 3))
    a, c, out = {
        "addmm": ((n, k), (k, m), (n, m)),
        "addmv": ((n, k), (k,), (n,)),
        "addr": ((n,), (m,), (n, m)),
        "baddbmm": ((b, n, k), (b, k, m), (b, n, m)),
        "addbmm": ((b, n, k), (b, k, m), (n, m)),
    }[kind]
    s = out if draw(st.booleans()) else out[-1:]  # self broadcasts
    return {
        "beta": draw(st.sampled_from([1.0, 0.0, 0.5, -2.0])),
        "alpha": draw(st.sampled_from([1.0, 2.0, -1.5])),
        "values": draw(value_kinds(_KINDS)),
    }, {"input": s, "mat1": a, "mat2": c}


def _hi(J):
    return J.lax.Precision.HIGHEST


def _jax_add(kind):
    def f(J, s, a, b, beta, alpha):
        jnp = J.jnp
        if kind == "addr":
            p = jnp.outer(a, b)
        elif kind == "addbmm":
            p = jnp.einsum("bij,bjk->ik", a, b, precision=_hi(J))
        else:
            p = jnp.matmul(a, b, precision=_hi(J))
        return (p * alpha if beta == 0 else beta * s + alpha * p) if alpha != 1 or beta != 1 else s + p

    return f


def _tf_add(kind):
    def f(tf, s, a, b, beta, alpha):
        if kind == "addr":
            p = tf.tensordot(a, b, 0)
        elif kind == "addbmm":
            p = tf.einsum("bij,bjk->ik", a, b)
        elif kind == "addmv":
            p = tf.linalg.matvec(a, b)
        else:
            p = tf.linalg.matmul(a, b)
        return (p * alpha if beta == 0 else beta * s + alpha * p) if alpha != 1 or beta != 1 else s + p

    return f


for _kind in ("addmm", "addmv", "addr", "baddbmm", "addbmm"):
    record(
        _kind,
        FAMILY,
        inputs=("input", "mat1", "mat2"),
        sample=lambda _k=_kind: _add(_k),
        fn=lambda T, s, a, b, beta, alpha, _k=_kind: getattr(T, _k)(s, a, b, beta=beta, alpha=alpha),
        jax=_jax_add(_kind),
        tf=_tf_add(_kind),
        note="beta = 0 ignores self (PyTorch: nan and inf in self are not propagated); JAX and TF "
        "spelled the same way",
    )


@st.composite
def _vec(draw):
    k = _n(draw)
    return {"values": draw(value_kinds(_KINDS))}, {"input": (k,), "other": (k,)}


record(
    "vdot",
    FAMILY,
    inputs=("input", "other"),
    sample=_vec,
    fn=lambda T, a, b: T.vdot(a, b),
    jax=lambda J, a, b: J.jnp.vdot(a, b, precision=_hi(J)),
    # vdot conjugates its first operand (a TF user writes the conj; tensordot alone does not)
    tf=lambda tf, a, b: tf.tensordot(tf.math.conj(a) if a.dtype.is_complex else a, b, 1),
)


@st.composite
def _square(draw):
    return {"values": draw(value_kinds(_KINDS))}, {"input": (_n(draw), _n(draw))}


record(
    "trace",
    FAMILY,
    sample=_square,
    fn=lambda T, x: T.trace(x),
    jax=lambda J, x: J.jnp.trace(x),
    tf=lambda tf, x: tf.linalg.trace(x),
    note="rectangular inputs: the trace of the leading square",
)


@st.composite
def _cross(draw):
    lead = [draw(st.integers(0, 4)) for _ in range(draw(st.integers(0, 2)))]
    return {"values": draw(value_kinds(("normal", "wide", "ties")))}, {
        "input": (*lead, 3),
        "other": (*lead, 3),
    }


record(
    "linalg_cross",
    FAMILY,
    inputs=("input", "other"),
    sample=_cross,
    fn=lambda T, a, b: T.linalg.cross(a, b),
    jax=lambda J, a, b: J.jnp.cross(a, b),
    tf=lambda tf, a, b: tf.linalg.cross(a, b),
    note="the cross product of the last dim (tf.linalg.cross takes the last dim only)",
)
