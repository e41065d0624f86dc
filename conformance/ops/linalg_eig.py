"""Records of the general eigendecomposition (reference/ops/rules/linalg_eig.py): linalg_eig, and
its complex solve (reached only through eig's derivatives).

The program returns real tensors that depend neither on the eigenvectors' phases (each column of
V is determined up to ``e^{i phi}``, and MKL's and OpenBLAS's geev give real eigenvectors of
opposite signs) nor on the order of the eigenvalues: ``Re sum_i |V_ji|^2 L_i`` and
``Re sum_i L_i^2``, with ``|V|^2`` as ``V * conj(V)`` (smooth where an element is 0; ``abs`` has
a kink there that a second-order check would meet) (a real input has conjugate eigenvalue pairs with conjugate eigenvectors, so
both sums are real; of a complex input both parts of the sums are read). The reference's bounds are first-order perturbation bounds (condition number
``1/|y^H x|`` of each eigenvalue; see the rules module), infinite where eigenvalues are not
isolated. LAPACK has no float16 or bfloat16 kernels: those cases are
unsupported for every framework.
"""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import not_fuzzed, record
from conformance.ops.linalg_decomp import _checked, _matrix
from conformance.strategies import value_kinds

FAMILY = "linalg_eig"
#: No "ties": small-integer matrices are often defective (a repeated eigenvalue with one eigenvector,
#: e.g. [[0, -1], [1, -2]]), where V is singular, the derivative does not exist, and whether
#: PyTorch's gauge check raises depends on LAPACK's rounding (MKL's float32 geev raises where
#: OpenBLAS's does not); the reference's bound is infinite there, but an error is not a value.
_KINDS = ("normal", "wide")


@st.composite
def _eig(draw):
    return {"values": draw(value_kinds(_KINDS))}, {"input": draw(_matrix(square=True))}


def _eig_fn(T, x):
    L, V = T.linalg.eig(x)
    a = ((V * V.conj()) * L.unsqueeze(-2)).sum(-1)
    b = (L * L).sum(-1, keepdim=True)
    if x.is_complex():  # the sums are complex: both parts are read
        return T.cat([a, b], -1)
    return T.cat([a.real, b.real], -1)


def _eig_jax(J, x):
    jnp = J.jnp
    # jnp.linalg.eig refuses eigenvector derivatives unless asked (jax issue #2748: they assume
    # distinct eigenvalues, which PyTorch assumes too); CPU only (LAPACK geev)
    L, V = J.lax.linalg.eig(
        x, compute_left_eigenvectors=False, compute_right_eigenvectors=True, enable_eigvec_derivs=True
    )
    a = ((V * jnp.conj(V)) * L[..., None, :]).sum(-1)
    b = (L * L).sum(-1, keepdims=True)
    if jnp.iscomplexobj(x):
        return jnp.concatenate([a, b], -1)
    return jnp.concatenate([jnp.real(a), jnp.real(b)], -1)


def _eig_tf(tf, x):
    L, V = tf.linalg.eig(x)
    a = tf.reduce_sum(V * tf.math.conj(V) * L[..., None, :], -1)
    b = tf.reduce_sum(L * L, -1, keepdims=True)
    if x.dtype.is_complex:
        return tf.concat([a, b], -1)
    return tf.concat([tf.math.real(a), tf.math.real(b)], -1)


record(
    "linalg_eig",
    FAMILY,
    sample=_eig,
    fn=_checked(_eig_fn),
    jax=_checked(_eig_jax),
    tf=_checked(_eig_tf),
    note="phase- and order-invariant: Re sum_i |V_ji|^2 L_i and Re sum_i L_i^2 (complex input: the sums)",
)

not_fuzzed(
    "linalg_eig_solve",
    FAMILY,
    "the complex linear solve V^-H M / V^-1 M inside linalg_eig's VJP and JVP formulas; it is "
    "exercised through linalg_eig's vjp, vjp_vjp and jvp checks",
)
