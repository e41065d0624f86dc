"""Records of the solves and factorizations (reference/ops/rules/linalg_solve.py). Inputs are drawn
as they come (normal or wide magnitudes, no ties: a tie makes a singular matrix, where the
frameworks differ by design) except where the op has a domain: Cholesky gets A A^T + n I
(symmetric positive-definite), built in the program with table ops. The error bounds are Higham's
componentwise backward-error bounds carried to first order (see the rules module); a nearly
singular draw gets a large bound through |A^{-1}|, it is not skipped. PyTorch has no float16 or
bfloat16 CPU kernels for these."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import not_fuzzed, record
from conformance.strategies import value_kinds
from conformance.unsupported import Unsupported

FAMILY = "linalg_solve"
_KINDS = ("normal", "wide")


def _batch(draw):
    return tuple(draw(st.integers(0, 2)) for _ in range(draw(st.integers(0, 2))))


def _torch(f):
    """The torch spelling, unsupported in half precision (no CPU kernel)."""

    def run(T, *args, **kw):
        if args[0].dtype in (T.float16, T.bfloat16):
            raise Unsupported("torch (CPU) has no float16 or bfloat16 linear-algebra kernels")
        return f(T, *args, **kw)

    return run


@st.composite
def _square(draw):
    n = draw(st.integers(0, 5))
    return {"values": draw(value_kinds(_KINDS))}, {"input": (*_batch(draw), n, n)}


@st.composite
def _system(draw, with_params=("left",)):
    n, k = draw(st.integers(0, 5)), draw(st.integers(1, 3))
    batch = _batch(draw)
    params = {"values": draw(value_kinds(_KINDS))}
    for p in with_params:
        params[p] = draw(st.booleans())
    left = params.get("left", True)
    return params, {"A": (*batch, n, n), "B": (*batch, n, k) if left else (*batch, k, n)}


def _mT(x, J=None):
    return x.swapaxes(-1, -2) if J is not None else x.mT


def _spd(T, a):
    """A A^H + n I: Hermitian positive-definite (A A^T + n I for a real A)."""
    return T.matmul(a, a.mT.conj()) + a.shape[-1] * T.eye(a.shape[-1], dtype=a.dtype)


def _jspd(J, a):
    return J.jnp.matmul(a, J.jnp.conj(a.swapaxes(-1, -2)), precision=J.lax.Precision.HIGHEST) + a.shape[
        -1
    ] * J.jnp.eye(a.shape[-1], dtype=a.dtype)


def _tspd(tf, a):
    return tf.linalg.matmul(a, a, adjoint_b=True) + a.shape[-1] * tf.eye(a.shape[-1], dtype=a.dtype)


def _jsolve(J, a, b, left):
    if left:
        return J.jnp.linalg.solve(a, b)
    return J.jnp.linalg.solve(a.swapaxes(-1, -2), b.swapaxes(-1, -2)).swapaxes(-1, -2)


def _tsolve(tf, a, b, left):
    if left:
        return tf.linalg.solve(a, b)
    # X A = B is A^T X^T = B^T: adjoint=True solves with conj(a)^H = A^T (a plain adjoint of a would
    # solve with A^H, B conj(A)^-1 for a complex A; tf.math.conj is the identity on real tensors)
    return tf.linalg.matrix_transpose(
        tf.linalg.solve(tf.math.conj(a), tf.linalg.matrix_transpose(b), adjoint=True)
    )


record(
    "linalg_solve",
    FAMILY,
    inputs=("A", "B"),
    sample=_system,
    fn=lambda T, a, b, left: T.linalg.solve(a, b, left=left),
    torch=_torch(lambda T, a, b, left: T.linalg.solve(a, b, left=left)),
    jax=_jsolve,
    tf=_tsolve,
    note="X A = B spelled as the transposed system in JAX and TF",
)
record(
    "linalg_inv",
    FAMILY,
    sample=_square,
    fn=lambda T, a: T.linalg.inv(a),
    torch=_torch(lambda T, a: T.linalg.inv(a)),
    jax=lambda J, a: J.jnp.linalg.inv(a),
    tf=lambda tf, a: tf.linalg.inv(a),
)
record(
    "linalg_det",
    FAMILY,
    sample=_square,
    fn=lambda T, a: T.linalg.det(a),
    torch=_torch(lambda T, a: T.linalg.det(a)),
    jax=lambda J, a: J.jnp.linalg.det(a),
    tf=lambda tf, a: tf.linalg.det(a),
)
record(
    "linalg_slogdet",
    FAMILY,
    sample=_square,
    fn=lambda T, a: T.linalg.slogdet(a).logabsdet,
    torch=_torch(lambda T, a: T.linalg.slogdet(a).logabsdet),
    jax=lambda J, a: J.jnp.linalg.slogdet(a)[1],
    # tf.linalg.slogdet's log|det| of a complex matrix is complex-typed (imaginary part 0): its real
    # part is the real result the others give (a real cotangent of the complex tensor raises)
    tf=lambda tf, a: tf.math.real(tf.linalg.slogdet(a)[1]),
    note="logabsdet (the sign has no derivative); TF's complex-typed log|det| read as its real part",
)


@st.composite
def _triangular(draw):
    params, shapes = draw(_system(("left", "upper", "unitriangular")))
    return params, shapes


def _jtri(J, a, b, left, upper, unitriangular):
    import jax.scipy.linalg as jsl

    if left:
        return jsl.solve_triangular(a, b, lower=not upper, unit_diagonal=unitriangular)
    x = jsl.solve_triangular(a, b.swapaxes(-1, -2), trans=1, lower=not upper, unit_diagonal=unitriangular)
    return x.swapaxes(-1, -2)


record(
    "linalg_solve_triangular",
    FAMILY,
    inputs=("A", "B"),
    sample=_triangular,
    fn=lambda T, a, b, left, upper, unitriangular: T.linalg.solve_triangular(
        a, b, upper=upper, left=left, unitriangular=unitriangular
    ),
    torch=_torch(
        lambda T, a, b, left, upper, unitriangular: T.linalg.solve_triangular(
            a, b, upper=upper, left=left, unitriangular=unitriangular
        )
    ),
    jax=_jtri,
    tf="tf.linalg.triangular_solve has no unit-diagonal mode and reads the other triangle's zeros as given",
)


@st.composite
def _spd_sample(draw):
    params, shapes = draw(_square())
    return {**params, "upper": draw(st.booleans())}, shapes


def _jchol(J, a, upper):
    L = J.jnp.linalg.cholesky(_jspd(J, a))
    return J.jnp.conj(L.swapaxes(-1, -2)) if upper else L  # U = L^H


def _tchol(tf, a, upper):
    L = tf.linalg.cholesky(_tspd(tf, a))
    return tf.linalg.adjoint(L) if upper else L  # U = L^H


record(
    "linalg_cholesky_ex",
    FAMILY,
    sample=_spd_sample,
    fn=lambda T, a, upper: T.linalg.cholesky(_spd(T, a), upper=upper),
    torch=_torch(lambda T, a, upper: T.linalg.cholesky(_spd(T, a), upper=upper)),
    jax=_jchol,
    tf=_tchol,
    note="of A A^T + n I (the op's domain); upper = the transposed factor",
)


def _old_cholesky(T, a, upper):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return T.cholesky(_spd(T, a), upper)


record(
    "cholesky",
    FAMILY,
    sample=_spd_sample,
    fn=_old_cholesky,
    torch=_torch(_old_cholesky),
    checks=("forward", "vjp", "vjp_vjp"),  # PyTorch: forward AD of torch.cholesky is not implemented
    jax=_jchol,
    tf=_tchol,
    note="the deprecated torch.cholesky, of A A^T + n I",
)


def _jlu_factor(J, a):
    import jax.scipy.linalg as jsl

    return jsl.lu_factor(a)[0]


record(
    "linalg_lu_factor_ex",
    FAMILY,
    sample=_square,
    fn=lambda T, a: T.linalg.lu_factor_ex(a).LU,
    torch=_torch(lambda T, a: T.linalg.lu_factor_ex(a).LU),
    jax=_jlu_factor,
    tf=lambda tf, a: tf.linalg.lu(a)[0],
    note="the packed factors of square matrices (the error bound of a rectangular LU is not derived)",
)


def _jlu_u(J, a):
    # jax.scipy.linalg.lu takes 2-d matrices only; lax.linalg.lu is batched (packed factors: U is the
    # upper triangle, L's unit diagonal is implicit)
    import jax.lax.linalg as jll

    return J.jnp.triu(jll.lu(a)[0])


record(
    "linalg_lu",
    FAMILY,
    sample=_square,
    fn=lambda T, a: T.linalg.lu(a).U,
    torch=_torch(lambda T, a: T.linalg.lu(a).U),
    jax=_jlu_u,
    tf="tf.linalg.lu returns the packed factors only (see linalg_lu_factor_ex)",
    note="U of square matrices (L is covered by linalg_lu_factor_ex's packed factors)",
)


def _with_factors(solve, solve_adjoint, b, left, adjoint, mH):
    """lu_solve's four systems from the two solves with given factors, A X = B (``solve``) and
    A^H X = B (``solve_adjoint``): X A = B is A^H X^H = B^H and X A^H = B is A X^H = B^H. Solving
    with A's factors is PyTorch's algorithm (getrs); a direct solve with A^H factors A^H, whose
    LU's |L||U| can exceed A's by orders of magnitude (a 'wide' complex128 A with entries 3091 and
    0.24: jnp.linalg.solve(A^H) 8.2e-14 off where the factors of A give 1.1e-14 and the bound is
    8.7e-17·|...|, ratio 99.8, campaign seed 1)."""
    if left:
        return solve_adjoint(b) if adjoint else solve(b)
    return mH(solve(mH(b)) if adjoint else solve_adjoint(mH(b)))


def _jlu_solve(J, a, b, left, adjoint):
    # jax.scipy.linalg.lu_solve's trans=2 solves with A^H from A's factors (LAPACK getrs's 'C')
    import jax.scipy.linalg as jsl

    lu_piv = jsl.lu_factor(a)
    return _with_factors(
        lambda r: jsl.lu_solve(lu_piv, r, trans=0),
        lambda r: jsl.lu_solve(lu_piv, r, trans=2),
        b,
        left,
        adjoint,
        lambda x: J.jnp.conj(x.swapaxes(-1, -2)),
    )


def _tlu_solve(tf, a, b, left, adjoint):
    # TF has no differentiable LU solve from given factors (tf.linalg.lu has no gradient): its own
    # solve, with adjoint=True for A^H (which factors A^H: known entry tf-solve-adjoint-factors-the-adjoint)
    return _with_factors(
        lambda r: tf.linalg.solve(a, r), lambda r: tf.linalg.solve(a, r, adjoint=True), b, left, adjoint, tf.linalg.adjoint
    )


record(
    "linalg_lu_solve",
    FAMILY,
    inputs=("A", "B"),
    sample=lambda: _system(("left", "adjoint")),
    fn=lambda T, a, b, left, adjoint: T.linalg.lu_solve(
        *T.linalg.lu_factor(a), b, left=left, adjoint=adjoint
    ),
    torch=_torch(
        lambda T, a, b, left, adjoint: T.linalg.lu_solve(
            *T.linalg.lu_factor(a), b, left=left, adjoint=adjoint
        )
    ),
    jax=_jlu_solve,
    tf=_tlu_solve,
    note="lu_factor then lu_solve (adjoint: A^H); JAX with A's factors too (lu_solve trans=2), TF with its own "
    "solve (adjoint=True for A^H)",
)


@st.composite
def _chol_system(draw):
    params, shapes = draw(_system(("upper",)))
    return params, {"B": shapes["B"], "A": shapes["A"]}


def _factor(T, a, upper):
    return T.linalg.cholesky(_spd(T, a), upper=upper)


record(
    "cholesky_solve",
    FAMILY,
    inputs=("B", "A"),
    sample=_chol_system,
    fn=lambda T, b, a, upper: T.cholesky_solve(b, _factor(T, a, upper), upper),
    torch=_torch(lambda T, b, a, upper: T.cholesky_solve(b, _factor(T, a, upper), upper)),
    jax=lambda J, b, a, upper: J.jnp.linalg.solve(_jspd(J, a), b),
    tf=lambda tf, b, a, upper: tf.linalg.solve(_tspd(tf, a), b),
    note="with the Cholesky factor of A A^T + n I; JAX and TF solve with that matrix directly",
)
record(
    "cholesky_inverse",
    FAMILY,
    sample=_spd_sample,
    fn=lambda T, a, upper: T.cholesky_inverse(_factor(T, a, upper), upper),
    torch=_torch(lambda T, a, upper: T.cholesky_inverse(_factor(T, a, upper), upper)),
    jax=lambda J, a, upper: J.jnp.linalg.inv(_jspd(J, a)),
    tf=lambda tf, a, upper: tf.linalg.inv(_tspd(tf, a)),
    note="of the Cholesky factor of A A^T + n I; JAX and TF invert that matrix directly",
)
not_fuzzed(
    "linalg_matrix_exp",
    FAMILY,
    "no rounding-error bound is derived for matrix_exp: scaling and squaring has no a priori "
    "componentwise bound for its squaring phase (Higham, Functions of Matrices, §10.3)",
)
not_fuzzed(
    "lu_unpack",
    FAMILY,
    "moves the packed LU entries into L and U (no arithmetic); reached through lu_solve's and "
    "lu_factor's derivatives and checked there",
)
