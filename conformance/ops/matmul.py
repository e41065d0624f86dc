"""Records of aten's products (reference/ops/rules/matmul.py): inner sizes at SIMD/blocking edges
and past 4096."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import record
from conformance.strategies import EDGE_SIZES, LONG_SIZES, value_kinds

FAMILY = "matmul"


def _k(draw):
    return draw(st.one_of(st.integers(1, 6), st.sampled_from(EDGE_SIZES[1:]), st.sampled_from(LONG_SIZES)))


def _small(draw):
    return draw(st.one_of(st.integers(0, 4), st.sampled_from((7, 8, 9, 16, 17))))


@st.composite
def _sample(draw, kind):
    k = _k(draw)
    n, m = _small(draw), _small(draw)
    if k > 4096:
        n, m = min(n, 2), min(m, 2)
    shapes = {
        "dot": ((k,), (k,)),
        "mv": ((n, k), (k,)),
        "mm": ((n, k), (k, m)),
        "bmm": ((draw(st.integers(0, 3)), n, k), (None, k, m)),
    }[kind]
    a, b = shapes
    if kind == "bmm":
        b = (a[0], k, m)
    return {"values": draw(value_kinds(("normal", "wide", "ties", "tiny", "nonfinite")))}, {
        "input": a,
        "other": b,
    }


def _highest(J):
    return J.lax.Precision.HIGHEST


record(
    "dot",
    FAMILY,
    inputs=("input", "other"),
    sample=lambda: _sample("dot"),
    fn=lambda T, a, b: T.matmul(a, b),
    torch=lambda torch, a, b: torch.dot(a, b),
    jax=lambda J, a, b: J.jnp.dot(a, b, precision=_highest(J)),
    tf=lambda tf, a, b: tf.tensordot(a, b, 1),
)
record(
    "mv",
    FAMILY,
    inputs=("input", "other"),
    sample=lambda: _sample("mv"),
    fn=lambda T, a, b: T.matmul(a, b),
    torch=lambda torch, a, b: torch.mv(a, b),
    jax=lambda J, a, b: J.jnp.matmul(a, b, precision=_highest(J)),
    tf=lambda tf, a, b: tf.linalg.matvec(a, b),
)
record(
    "mm",
    FAMILY,
    inputs=("input", "other"),
    sample=lambda: _sample("mm"),
    fn=lambda T, a, b: T.matmul(a, b),
    torch=lambda torch, a, b: torch.mm(a, b),
    jax=lambda J, a, b: J.jnp.matmul(a, b, precision=_highest(J)),
    tf=lambda tf, a, b: tf.linalg.matmul(a, b),
)
record(
    "bmm",
    FAMILY,
    inputs=("input", "other"),
    sample=lambda: _sample("bmm"),
    fn=lambda T, a, b: T.matmul(a, b),
    torch=lambda torch, a, b: torch.bmm(a, b),
    jax=lambda J, a, b: J.jnp.matmul(a, b, precision=_highest(J)),
    tf=lambda tf, a, b: tf.linalg.matmul(a, b),
)
