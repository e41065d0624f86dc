"""Records of the general eigendecomposition (reference/ops/rules/linalg_eig.py): linalg_eig, and
its complex solve (reached only through eig's derivatives).

The program returns real tensors that depend neither on the eigenvectors' phases (each column of
V is determined up to ``e^{i phi}``, and MKL's and OpenBLAS's geev give real eigenvectors of
opposite signs) nor on the order of the eigenvalues: ``Re sum_i |V_ji|^2 L_i`` and
``Re sum_i L_i^2``, with ``|V|^2`` as ``V * conj(V)`` (smooth where an element is 0; ``abs`` has
a kink there that a second-order check would meet) (a real input has conjugate eigenvalue pairs with conjugate eigenvectors, so
both sums are real). The reference's bounds are first-order perturbation bounds (condition number
``1/|y^H x|`` of each eigenvalue; see the rules module), infinite where eigenvalues are not
isolated (the ``ties`` values). LAPACK has no float16 or bfloat16 kernels: those cases are
unsupported for every framework.
"""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import not_fuzzed, record
from conformance.ops.linalg_decomp import _checked, _matrix
from conformance.strategies import value_kinds

FAMILY = "linalg_eig"
_KINDS = ("normal", "wide", "ties")


@st.composite
def _eig(draw):
    return {"values": draw(value_kinds(_KINDS))}, {"input": draw(_matrix(square=True))}


def _eig_fn(T, x):
    L, V = T.linalg.eig(x)
    a = ((V * V.conj()) * L.unsqueeze(-2)).sum(-1).real
    b = (L * L).sum(-1, keepdim=True).real
    return T.cat([a, b], -1)


def _eig_jax(J, x):
    jnp = J.jnp
    L, V = jnp.linalg.eig(x)  # CPU only (LAPACK geev)
    a = jnp.real(((V * jnp.conj(V)) * L[..., None, :]).sum(-1))
    b = jnp.real((L * L).sum(-1, keepdims=True))
    return jnp.concatenate([a, b], -1)


def _eig_tf(tf, x):
    L, V = tf.linalg.eig(x)
    a = tf.math.real(tf.reduce_sum(V * tf.math.conj(V) * L[..., None, :], -1))
    b = tf.math.real(tf.reduce_sum(L * L, -1, keepdims=True))
    return tf.concat([a, b], -1)


record(
    "linalg_eig",
    FAMILY,
    sample=_eig,
    fn=_checked(_eig_fn),
    jax=_checked(_eig_jax),
    tf=_checked(_eig_tf),
    note="phase- and order-invariant: Re sum_i |V_ji|^2 L_i and Re sum_i L_i^2",
)

not_fuzzed(
    "linalg_eig_solve",
    FAMILY,
    "the complex linear solve V^-H M / V^-1 M inside linalg_eig's VJP and JVP formulas; it is "
    "exercised through linalg_eig's vjp, vjp_vjp and jvp checks",
)
