"""Records of the matrix decompositions (reference/ops/rules/linalg_decomp.py): eigh, qr, svd,
pinv, lstsq.

Each record's program returns one gauge-invariant tensor: eigenvectors and singular vectors enter
squared or as ``U @ Vh`` (their signs are arbitrary and differ between LAPACK builds), a complete
factorization's extra columns are left out. The reference's error bounds come from perturbation
theory (Weyl, Davis-Kahan, Wedin, Sun; see the rules module): where an eigenvalue or singular
value is repeated the vectors are undetermined and the bound is infinite. LAPACK has no float16 or
bfloat16 kernels: those cases are unsupported for every framework.
"""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import record
from conformance.strategies import value_kinds
from conformance.unsupported import Unsupported

FAMILY = "linalg_decomp"
_KINDS = ("normal", "wide", "ties")


def _lapack_dtype(x):
    name = str(x.dtype).replace("torch.", "")
    if name in ("float16", "bfloat16", "<dtype: 'float16'>", "<dtype: 'bfloat16'>"):
        raise Unsupported(f"no {name} LAPACK kernel (torch, JAX and TF decompose in float32/float64 only)")
    if "bfloat16" in name or "float16" in name:
        raise Unsupported(f"no {name} LAPACK kernel (torch, JAX and TF decompose in float32/float64 only)")


def _checked(fn):
    def run(T, *xs, **params):
        for x in xs:
            _lapack_dtype(x)
        return fn(T, *xs, **params)

    return run


@st.composite
def _matrix(draw, square=False):
    m = draw(st.integers(0, 5))
    n = m if square else draw(st.integers(0, 5))
    batch = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2))))
    return batch + (m, n)


# ---- eigh ------------------------------------------------------------------------------------------------


@st.composite
def _eigh(draw):
    return {"UPLO": draw(st.sampled_from(["L", "U"])), "values": draw(value_kinds(_KINDS))}, {
        "input": draw(_matrix(square=True))
    }


def _eigh_fn(T, x, UPLO):
    L, V = T.linalg.eigh(x + x.mT.conj(), UPLO=UPLO)
    return V * V.conj() * L.unsqueeze(-2) + L.unsqueeze(-1)


def _eigh_jax(J, x, UPLO):
    jnp = J.jnp
    L, V = jnp.linalg.eigh(x + jnp.conj(jnp.swapaxes(x, -1, -2)), UPLO=UPLO, symmetrize_input=False)
    return V * jnp.conj(V) * L[..., None, :] + L[..., :, None]


def _eigh_tf(tf, x, UPLO):
    s = x + tf.linalg.adjoint(x)
    L, V = tf.linalg.eigh(s)  # reads the lower triangle; s is Hermitian, so UPLO does not matter
    L = tf.cast(L, V.dtype)  # (real eigenvalues of a complex matrix)
    return V * tf.math.conj(V) * L[..., None, :] + L[..., :, None]


record(
    "linalg_eigh",
    FAMILY,
    sample=_eigh,
    fn=_checked(_eigh_fn),
    jax=_checked(_eigh_jax),
    tf=_checked(_eigh_tf),
    note="Hermitian input x + x^H; eigenvectors enter as |v|^2 (sign and phase gauge)",
)

# ---- qr ----------------------------------------------------------------------------------------------------


#: No "ties" for QR: small-integer matrices often have linearly dependent leading columns (a zero on
#: R's diagonal, e.g. [[0, 1, -1], [0, 1, 2]]), where Q and R are not differentiable (PyTorch's
#: documentation requires the first min(m, n) columns to be independent): the reference's bound is
#: infinite and its gradients nan there. The frameworks' second derivatives there are nan in some
#: entries and finite in others (all three gave 0.5696 at one entry in campaign seed 2 for
#: [[-2, 0, -2], [2, 0, 0]], whose first-order gradient is nan in torch too): no value exists to judge.
_QR_KINDS = ("normal", "wide")


@st.composite
def _qr(draw):
    shape = draw(_matrix())
    modes = ["reduced"] if shape[-2] > shape[-1] else ["reduced", "complete"]
    return {"mode": draw(st.sampled_from(modes)), "values": draw(value_kinds(_QR_KINDS))}, {"input": shape}


def _qr_fn(T, x, mode):
    Q, R = T.linalg.qr(x, mode=mode)
    return T.cat([Q.reshape(-1), R.reshape(-1)])


def _qr_jax(J, x, mode):
    Q, R = J.jnp.linalg.qr(x, mode=mode)
    return J.jnp.concatenate([Q.reshape(-1), R.reshape(-1)])


def _qr_tf(tf, x, mode):
    Q, R = tf.linalg.qr(x, full_matrices=mode == "complete")
    return tf.concat([tf.reshape(Q, [-1]), tf.reshape(R, [-1])], 0)


record(
    "linalg_qr",
    FAMILY,
    sample=_qr,
    fn=_checked(_qr_fn),
    jax=_checked(_qr_jax),
    tf=_checked(_qr_tf),
    note="Householder QR without sign normalisation (LAPACK's geqrf convention in all three); "
    "mode='complete' only where it is differentiable (m <= n)",
)

# ---- svd ----------------------------------------------------------------------------------------------------


@st.composite
def _svd(draw):
    return {"full_matrices": draw(st.booleans()), "values": draw(value_kinds(_KINDS))}, {
        "input": draw(_matrix())
    }


def _svd_fn(T, x, full_matrices):
    U, S, Vh = T.linalg.svd(x, full_matrices=full_matrices)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return T.cat([(U * U.conj() * S.unsqueeze(-2)).reshape(-1), S.reshape(-1), (U @ Vh).reshape(-1)])


def _svd_jax(J, x, full_matrices):
    jnp = J.jnp
    # JAX raises NotImplementedError for the derivative of full_matrices=True on a non-square
    # input; the program reads only the first min(m, n) vectors, which full_matrices=False gives.
    U, S, Vh = jnp.linalg.svd(x, full_matrices=full_matrices and x.shape[-1] == x.shape[-2])
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    S = S.astype(U.dtype)  # (real singular values of a complex matrix)
    return jnp.concatenate(
        [(U * jnp.conj(U) * S[..., None, :]).reshape(-1), S.reshape(-1), (U @ Vh).reshape(-1)]
    )


def _svd_tf(tf, x, full_matrices):
    # TF raises NotImplementedError for the gradient of full_matrices=True when |m - n| > 1; the
    # program reads only the first min(m, n) vectors, which full_matrices=False gives.
    S, U, V = tf.linalg.svd(x, full_matrices=full_matrices and x.shape[-1] == x.shape[-2], compute_uv=True)
    S = tf.cast(S, U.dtype)  # (real singular values of a complex matrix)
    k = S.shape[-1]
    U, V = U[..., :k], V[..., :k]
    return tf.concat(
        [
            tf.reshape(U * tf.math.conj(U) * S[..., None, :], [-1]),
            tf.reshape(S, [-1]),
            tf.reshape(tf.linalg.matmul(U, V, adjoint_b=True), [-1]),
        ],
        0,
    )


record(
    "linalg_svd",
    FAMILY,
    sample=_svd,
    fn=_checked(_svd_fn),
    jax=_checked(_svd_jax),
    tf=_checked(_svd_tf),
    note="gauge-invariant: U^2 S, S and U @ Vh of the first min(m, n) singular triplets",
)

# ---- pinv -----------------------------------------------------------------------------------------------------


@st.composite
def _pinv(draw):
    hermitian = draw(st.booleans())
    return {"hermitian": hermitian, "values": draw(value_kinds(("normal", "wide")))}, {
        "input": draw(_matrix(square=hermitian))
    }


def _pinv_fn(T, x, hermitian):
    if hermitian:  # x + x^H: Hermitian (symmetric for a real x)
        return T.linalg.pinv(x + x.mT.conj(), hermitian=True)
    return T.linalg.pinv(x)


def _default_rtol(x, dtype_eps):
    return dtype_eps * max(x.shape[-2], x.shape[-1], 1)


def _pinv_jax(J, x, hermitian):
    import numpy as np

    jnp = J.jnp
    rtol = _default_rtol(x, float(np.finfo(np.dtype(str(x.dtype))).eps))
    if hermitian:
        return jnp.linalg.pinv(x + jnp.conj(jnp.swapaxes(x, -1, -2)), rtol=rtol, hermitian=True)
    return jnp.linalg.pinv(x, rtol=rtol)


record(
    "linalg_pinv",
    FAMILY,
    sample=_pinv,
    fn=_checked(_pinv_fn),
    jax=_checked(_pinv_jax),
    tf="tf.linalg.pinv has no hermitian path and cuts singular values at rcond·s_max with its own "
    "default (10·eps·max(m, n)), a different pseudo-inverse near the cut-off",
    note="PyTorch's default cut-off rtol = eps·max(m, n); JAX spelled with the same rtol",
)

# ---- lstsq -------------------------------------------------------------------------------------------------------


@st.composite
def _lstsq(draw):
    m, n, k = draw(st.integers(1, 5)), draw(st.integers(1, 5)), draw(st.integers(1, 3))
    batch = tuple(draw(st.integers(1, 2)) for _ in range(draw(st.integers(0, 1))))
    return {
        "driver": draw(st.sampled_from(["gelsy", "gelsd", "gelss", "gels"])) if m >= n else "gelsd",
        "values": "normal",
    }, {"input": batch + (m, n), "other": batch + (m, k)}


def _lstsq_fn(T, a, b, driver):
    return T.linalg.lstsq(a, b, driver=driver).solution


def _lstsq_jax(J, a, b, driver):
    import numpy as np

    jnp = J.jnp
    rcond = float(np.finfo(np.dtype(str(a.dtype))).eps) * max(a.shape[-2], a.shape[-1])

    def one(a, b):
        return jnp.linalg.lstsq(a, b, rcond=rcond)[0]

    return jnp.vectorize(one, signature="(m,n),(m,k)->(n,k)")(a, b)


record(
    "linalg_lstsq",
    FAMILY,
    inputs=("input", "other"),
    sample=_lstsq,
    fn=_checked(_lstsq_fn),
    jax=_checked(_lstsq_jax),
    tf="tf.linalg.lstsq solves the (optionally regularised) normal equations or a complete orthogonal "
    "factorisation without PyTorch's rcond cut-off: a different minimum-norm rule on rank-deficient input",
    note="the minimum-norm solution (gels: full-rank QR, only drawn for m >= n); its gradient is "
    "that of pinv(A) @ B, as PyTorch defines it",
)
