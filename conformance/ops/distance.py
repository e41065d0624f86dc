"""Records of the distances (reference/ops/rules/distance.py): pnorm (through pairwise_distance)
and cdist's direct form."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import record
from conformance.strategies import value_kinds
from conformance.unsupported import Unsupported

FAMILY = "distance"
_P = [1.0, 2.0, 3.0, 0.5, float("inf")]


def _pnorm_of(lib_abs, lib_sum, lib_max, d, p, axis):
    a = lib_abs(d)
    if p == float("inf"):
        return lib_max(a, axis)
    return lib_sum(a**p, axis) ** (1.0 / p)


@st.composite
def _pairs(draw):
    n, d = draw(st.integers(1, 9)), draw(st.sampled_from([1, 2, 3, 5, 8, 16, 17]))
    return {"p": draw(st.sampled_from(_P)), "values": draw(value_kinds(("normal", "wide", "ties")))}, {
        "input": (n, d),
        "other": (n, d),
    }


record(
    "pnorm",
    FAMILY,
    inputs=("input", "other"),
    sample=_pairs,
    fn=lambda T, a, b, p: T.nn.functional.pairwise_distance(a, b, p),
    jax=lambda J, a, b, p: _pnorm_of(
        J.jnp.abs, lambda x, ax: J.jnp.sum(x, ax), lambda x, ax: J.jnp.max(x, ax), a - b + 1e-6, p, -1
    ),
    tf=lambda tf, a, b, p: _pnorm_of(
        tf.abs, lambda x, ax: tf.reduce_sum(x, ax), lambda x, ax: tf.reduce_max(x, ax), a - b + 1e-6, p, -1
    ),
    note="F.pairwise_distance: the p-norm of a - b + eps (eps = 1e-6) along the last dim",
)


@st.composite
def _cdist(draw):
    n, m = draw(st.integers(0, 9)), draw(st.integers(0, 9))
    d = draw(st.sampled_from([1, 2, 3, 5, 8, 16]))
    return {"p": draw(st.sampled_from(_P)), "values": draw(value_kinds(("normal", "wide")))}, {
        "x1": (n, d),
        "x2": (m, d),
    }


def _torch_cdist(torch, a, b, p):
    if a.dtype in (torch.float16, torch.bfloat16):
        raise Unsupported(f"torch.cdist has no {a.dtype} CPU kernel ('cdist' not implemented for it)")
    return torch.cdist(a, b, p)


def _diff(x1, x2, expand):
    return expand(x1, -2) - expand(x2, -3)


record(
    "cdist",
    FAMILY,
    inputs=("x1", "x2"),
    sample=_cdist,
    fn=lambda T, a, b, p: T.cdist(a, b, p),
    torch=_torch_cdist,
    checks=("forward", "vjp"),
    jax=lambda J, a, b, p: _pnorm_of(
        J.jnp.abs,
        lambda x, ax: J.jnp.sum(x, ax),
        lambda x, ax: J.jnp.max(x, ax, initial=0.0),
        _diff(a, b, J.jnp.expand_dims),
        p,
        -1,
    ),
    tf=lambda tf, a, b, p: _pnorm_of(
        tf.abs,
        lambda x, ax: tf.reduce_sum(x, ax),
        lambda x, ax: tf.reduce_max(x, ax),
        _diff(a, b, tf.expand_dims),
        p,
        -1,
    ),
    note="forward and vjp only: PyTorch implements neither the forward-mode derivative of "
    "_cdist_forward nor the derivative of _cdist_backward (NotImplementedError); at most 9 rows a side: PyTorch's direct form (past 25 rows, p = 2 goes through matmul, "
    "composed of other primitives); coincident rows (ties) are left out: the gradient of a norm at 0 "
    "is each framework's convention",
)
