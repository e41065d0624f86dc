"""Solves and factorizations of ``torch.linalg`` (real and complex dtypes): PyTorch's names, signatures,
defaults, vector right-hand-side rules and errors.

Primitives (:mod:`reference.ops.rules.linalg_solve`): linalg_solve, linalg_inv,
linalg_solve_triangular, linalg_det, linalg_slogdet, linalg_cholesky_ex, cholesky,
linalg_lu_factor_ex, linalg_lu, linalg_lu_solve, cholesky_solve, cholesky_inverse,
linalg_matrix_exp.

Composites, as in PyTorch: logdet (slogdet and where), matrix_power (inv and matmuls by binary
powering), tensorinv/tensorsolve (reshape, inv/solve), linalg.diagonal (diagonal), lu_unpack
(tril/triu of the packed factors). householder_product (orgqr) is a composite here (the
product of the reflectors I - tau v v^H in table ops), where PyTorch has a primitive
(LinalgHouseholderProductBackward0): values and gradients agree, node names do not.
"""

from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np

from reference.autograd.dispatch import apply
from reference.autograd.grad_mode import no_grad
from reference.autograd.tensor import Tensor, _make, is_complex_dtype, is_floating_dtype
from reference.backend import device_of, to_device, to_numpy
from reference.ops import api as A
from reference.ops.functions.complex import conj_physical
from reference.ops.rules import RULES
from reference.ops.rules import linalg_solve as R
from reference.scalar_types import scalar_type_name

__all__ = [
    "det",
    "slogdet",
    "logdet",
    "inverse",
    "cholesky",
    "cholesky_solve",
    "cholesky_inverse",
    "matrix_power",
    "matrix_exp",
    "lu_unpack",
    "orgqr",
    "lu",
    "lu_solve",
    "triangular_solve",
]
METHODS = {
    "det": lambda self: det(self),
    "slogdet": lambda self: slogdet(self),
    "logdet": lambda self: logdet(self),
    "inverse": lambda self: inverse(self),
    "cholesky": lambda self, upper=False: cholesky(self, upper),
    "cholesky_solve": lambda self, input2, upper=False: cholesky_solve(self, input2, upper),
    "cholesky_inverse": lambda self, upper=False: cholesky_inverse(self, upper),
    "matrix_power": lambda self, n: matrix_power(self, n),
    "matrix_exp": lambda self: matrix_exp(self),
    "orgqr": lambda self, input2: orgqr(self, input2),
    "lu": lambda self, pivot=True, get_infos=False: lu(self, pivot, get_infos),
    "lu_solve": lambda self, LU_data, LU_pivots: lu_solve(self, LU_data, LU_pivots),
    "triangular_solve": lambda self, A, upper=True, transpose=False, unitriangular=False: triangular_solve(
        self, A, upper, transpose, unitriangular
    ),
}


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError, a RuntimeError): a factorization failed."""


LinAlgError = _LinAlgError


def _float_or_complex(dt):
    return is_floating_dtype(dt) or is_complex_dtype(dt)


from reference.ops.functions._low_precision import no_kernel, no_low_precision  # noqa: E402


def _tensor(x, name="A"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")
    return x


def _check_float(x, fname):
    if not _float_or_complex(x._data.dtype):
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. Got {scalar_type_name(x.dtype)}"
        )


def _check_matrix(x, fname, name="A"):
    if x.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor {name} must have at least 2 dimensions.")


def _check_square(x, fname, name="A"):
    _check_matrix(x, fname, name)
    m, n = x.shape[-2:]
    if m != n:
        raise RuntimeError(
            f"{fname}: {name} must be batches of square matrices, but they are {m} by {n} matrices"
        )


def _square_float(x, fname):
    _tensor(x)
    _check_matrix(x, fname)
    _check_square(x, fname)
    _check_float(x, fname)


def _first_failure(info):
    """(batch index or None, info value) of the first nonzero info, or None."""
    info = np.asarray(info)
    if info.ndim == 0:
        return (None, int(info)) if info != 0 else None
    flat = info.reshape(-1)
    bad = np.nonzero(flat)[0]
    if not len(bad):
        return None
    return int(bad[0]), int(flat[bad[0]])


def _raise_info(info, fname, message, error=LinAlgError, batched=None):
    found = _first_failure(info)
    if found is None:
        return
    index, value = found
    where = "" if index is None else f"(Batch element {index}): "
    raise error(f"{fname}: {where}{message(value)}")


def _values(x):
    """The values of ``x`` for a data-dependent check; under vmap, the physical (batched) values."""
    while x._batched is not None:
        x = next(iter(x._batched.values()))[0]
    return to_numpy(x._data)  # (a device-to-host copy: the check runs on the host)


def _info_of(x):
    with no_grad():
        return R.lu_kernel(_values(x))[2]


def _singular_inv(v):
    return f"The diagonal element {v} is zero, the inversion could not be completed because the input matrix is singular."


def _matrix_info(x, info=None):
    """getrf's info as an int32 tensor of x's batch shape (under vmap: a batched tensor)."""
    out = A._batched_plain(_matrix_info, (x,))
    if out is not None:
        return out
    with no_grad():
        info = np.asarray(R.lu_kernel(to_numpy(x.detach()._data))[2], dtype=np.int32)  # on the host
        return _make(to_device(info, *device_of(x._data)))


# ---- inv ---------------------------------------------------------------------------------------------


def inv_ex(A_, *, check_errors=False, out=None):
    _square_float(A_, "linalg.inv_ex")
    no_low_precision(A_, "linalg.inv")
    info = _info_of(A_)
    if check_errors:
        _raise_info(info, "linalg.inv_ex", _singular_inv)
    return _InvEx(apply(RULES["linalg_inv"], (A_,), {}), _matrix_info(A_, info))


_InvEx = namedtuple("linalg_inv_ex", ["inverse", "info"])


def inv(A_, *, out=None):
    _square_float(A_, "linalg.inv")
    no_low_precision(A_, "linalg.inv")
    _raise_info(_info_of(A_), "linalg.inv", _singular_inv)
    return apply(RULES["linalg_inv"], (A_,), {})


def inverse(input, *, out=None):
    return inv(input)


# ---- solve -----------------------------------------------------------------------------------------------


def _is_vector_rhs(a, b):
    """PyTorch's linalg_solve_is_vector_rhs: B is a vector, or a batch of vectors of A's batch shape."""
    return b.ndim == 1 or (a.ndim - 1 == b.ndim and tuple(b.shape) == tuple(a.shape[:-1]))


def _check_rhs(a, b, left, fname):
    n = a.shape[-1]
    ok = b.shape[-2] == n if left else b.shape[-1] == n
    if not ok:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{fname}: Incompatible shapes of A and B for the equation {eq} "
            f"({a.shape[-2]}x{a.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})"
        )
    A.check_broadcast(_Shape(b.shape[:-2]), _Shape(a.shape[:-2]))  # PyTorch names B's batch 'a'


class _Shape:
    def __init__(self, shape):
        self.shape = tuple(shape)


_SolveEx = namedtuple("linalg_solve_ex", ["result", "info"])


def solve_ex(A_, B, *, left=True, check_errors=False, out=None):
    return _solve(A_, B, left, check_errors, "linalg.solve_ex", ex=True)


def solve(A_, B, *, left=True, out=None):
    return _solve(A_, B, left, True, "linalg.solve", ex=False)


def _solve(a, b, left, check_errors, fname, ex):
    _tensor(a), _tensor(b, "B")
    _check_float(a, "linalg.solve")
    _check_square(a, "linalg.solve")
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found A of type {scalar_type_name(a.dtype)} "
            f"and B of type {scalar_type_name(b.dtype)} instead"
        )
    vector = _is_vector_rhs(a, b)
    b2 = A.unsqueeze(b, -1) if vector else b
    _check_rhs(a, b2, left, "linalg.solve")
    no_kernel(a, "lu_cpu")
    info = _info_of(a)
    if check_errors:
        _raise_info(
            info, "torch.linalg.solve", lambda v: "The solver failed because the input matrix is singular."
        )
    x = apply(RULES["linalg_solve"], (a, b), {"left": left, "vector": vector})
    return _SolveEx(x, _matrix_info(a, info)) if ex else x


def solve_triangular(A_, B, *, upper=None, left=True, unitriangular=False, out=None):
    if upper is None:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: "upper"')
    fname = "linalg.solve_triangular"
    _tensor(A_), _tensor(B, "B")
    _check_matrix(A_, fname)
    _check_matrix(B, fname, "B")
    _check_square(A_, fname)
    _check_float(A_, fname)
    dt = A.result_type(A_, B)
    a, b = (A.to(t, dt) if t.dtype != dt else t for t in (A_, B))
    _check_rhs(a, b, left, fname)
    no_kernel(a, "triangular_solve_cpu")
    return apply(
        RULES["linalg_solve_triangular"],
        (a, b),
        {"upper": bool(upper), "left": bool(left), "unitriangular": bool(unitriangular)},
    )


# ---- determinants ------------------------------------------------------------------------------------------

_Slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])


def det(A_, *, out=None):
    _square_float(A_, "linalg.det")
    no_kernel(A_, "lu_cpu")
    return apply(RULES["linalg_det"], (A_,), {})


def slogdet(A_, *, out=None):
    _square_float(A_, "linalg.slogdet")
    no_low_precision(A_, "linalg.slogdet")
    return _Slogdet(*apply(RULES["linalg_slogdet"], (A_,), {}))


def logdet(input):
    """PyTorch's logdet: where(sign == -1, nan, logabsdet) of slogdet; complex input:
    log(sign) + logabsdet."""
    _square_float(input, "logdet")
    no_low_precision(input, "logdet")
    sign, logabs = apply(RULES["linalg_slogdet"], (input,), {})
    if is_complex_dtype(sign.dtype):
        return A.add(A.log(sign), logabs)
    return A.where(sign == -1.0, float("nan"), logabs)


# ---- Cholesky ----------------------------------------------------------------------------------------------


def _not_pd(v):
    return (
        "The factorization could not be completed because the input is not positive-definite "
        f"(the leading minor of order {v} is not positive-definite)."
    )


_CholeskyEx = namedtuple("linalg_cholesky_ex", ["L", "info"])


def cholesky_ex(A_, *, upper=False, check_errors=False, out=None):
    _square_float(A_, "linalg.cholesky_ex")
    no_kernel(A_, "cholesky_cpu")
    L, info = apply(RULES["linalg_cholesky_ex"], (A_,), {"upper": bool(upper)})
    if check_errors:
        _raise_info(_values(info), "linalg.cholesky_ex", _not_pd)
    return _CholeskyEx(L, info)


def linalg_cholesky(A_, *, upper=False, out=None):
    _square_float(A_, "linalg.cholesky")
    no_kernel(A_, "cholesky_cpu")
    L, info = apply(RULES["linalg_cholesky_ex"], (A_,), {"upper": bool(upper)})
    _raise_info(_values(info), "linalg.cholesky", _not_pd)
    return L


def cholesky(input, upper=False, *, out=None):
    """The deprecated torch.cholesky (its own node, CholeskyBackward0)."""
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
        "PyTorch release.",
        UserWarning,
        stacklevel=2,
    )
    _square_float(input, "cholesky")
    no_kernel(input, "cholesky_cpu")
    with no_grad():
        info = R.cholesky_kernel(_values(input), bool(upper))[1]
    _raise_info(info, "cholesky", _not_pd)
    return apply(RULES["cholesky"], (input,), {"upper": bool(upper)})


def cholesky_solve(input, input2, upper=False, *, out=None):
    _tensor(input), _tensor(input2, "input2")
    _check_matrix(input, "cholesky_solve", "B")
    _check_square(input2, "cholesky_solve")
    if input.shape[-2] != input2.shape[-1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for cholesky_solve: each A matrix is {input2.shape[-2]} by "
            f"{input2.shape[-1]} but each b matrix is {input.shape[-2]} by {input.shape[-1]}"
        )
    _check_float(input2, "cholesky_solve")
    A.check_broadcast(_Shape(input.shape[:-2]), _Shape(input2.shape[:-2]))
    no_kernel(input2, "cholesky_solve_cpu")
    return apply(RULES["cholesky_solve"], (input, input2), {"upper": bool(upper)})


def cholesky_inverse(input, upper=False, *, out=None):
    _square_float(input, "cholesky_inverse")
    no_kernel(input, "cholesky_inverse_out_cpu")
    return apply(RULES["cholesky_inverse"], (input,), {"upper": bool(upper)})


# ---- LU ------------------------------------------------------------------------------------------------------

_LuFactorEx = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_LuFactor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
_Lu = namedtuple("linalg_lu", ["P", "L", "U"])
_LuUnpack = namedtuple("lu_unpack", ["P", "L", "U"])


def _zero_pivot(v):
    return (
        f"U[{v},{v}] is zero and using it on lu_solve would result in a division by zero. If you still want "
        "to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
    )


def _lu_checks(a, pivot, fname="linalg.lu_factor"):
    _tensor(a)
    if a.ndim < 2:
        raise RuntimeError(
            f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(a.shape)} instead"
        )
    if not _float_or_complex(a._data.dtype):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{scalar_type_name(a.dtype)}'")
    no_kernel(a, "lu_cpu")
    if not pivot:
        raise RuntimeError(f"{fname}: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A_, *, pivot=True, check_errors=False, out=None):
    _lu_checks(A_, pivot)
    lu, piv, info = apply(RULES["linalg_lu_factor_ex"], (A_,), {"pivot": True})
    if check_errors:
        _raise_info(_values(info), "torch.linalg.lu_factor_ex", _zero_pivot, RuntimeError)
    return _LuFactorEx(lu, piv, info)


def lu_factor(A_, *, pivot=True, out=None):
    _lu_checks(A_, pivot)
    lu, piv, info = apply(RULES["linalg_lu_factor_ex"], (A_,), {"pivot": True})
    _raise_info(_values(info), "torch.linalg.lu_factor", _zero_pivot, RuntimeError)
    return _LuFactor(lu, piv)


def linalg_lu(A_, *, pivot=True, out=None):
    _lu_checks(A_, pivot)
    P, L, U = apply(RULES["linalg_lu"], (A_,), {"pivot": True})
    return _Lu(P.detach(), L, U)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """torch.lu_unpack as table ops on the packed factors (PyTorch: LuUnpackBackward0)."""
    P, L, U = R.lu_unpack(LU_data, LU_pivots)
    P = P.detach()
    empty = A.zeros((0,), dtype=LU_data.dtype, device=LU_data.device)
    return _LuUnpack(P if unpack_pivots else empty, L if unpack_data else empty, U if unpack_data else empty)


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    fname = "linalg.lu_solve"
    _tensor(LU, "LU"), _tensor(pivots, "pivots"), _tensor(B, "B")
    _check_square(LU, fname, "LU")
    _check_matrix(B, fname, "B")
    if str(pivots.dtype) != "int32":
        raise RuntimeError(f"{fname}: pivots should be a Tensor of scalar type torch.int32")
    _check_rhs(LU, B, left, fname)
    no_kernel(LU, "linalg.lu_solve_cpu")
    return apply(RULES["linalg_lu_solve"], (LU, pivots, B), {"left": bool(left), "adjoint": bool(adjoint)})


def lu(A_, pivot=True, get_infos=False, out=None):
    """The deprecated torch.lu: linalg.lu_factor_ex (errors checked unless ``get_infos``)."""
    _lu_checks(A_, pivot)
    lu_, piv, info = apply(RULES["linalg_lu_factor_ex"], (A_,), {"pivot": True})
    if get_infos:
        return lu_, piv, info
    _raise_info(_values(info), "torch.linalg.lu_factor_ex", _zero_pivot, RuntimeError)
    return lu_, piv


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """The deprecated torch.lu_solve(b, LU_data, LU_pivots) = linalg.lu_solve(LU_data, LU_pivots, b)."""
    return linalg_lu_solve(LU_data, LU_pivots, b)


_TriangularSolve = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def triangular_solve(b, A_, upper=True, transpose=False, unitriangular=False, *, out=None):
    """The deprecated torch.triangular_solve as linalg.solve_triangular (PyTorch: its own node,
    TriangularSolveBackward0): op(A) X = b, op(A) = A^T when ``transpose``."""
    a = A.transpose(A_, -1, -2) if transpose else A_
    x = solve_triangular(a, b, upper=bool(upper) != bool(transpose), unitriangular=unitriangular)
    return _TriangularSolve(x, A.clone(A_))


# ---- powers, exponential, tensor forms ---------------------------------------------------------------------


def matrix_power(A_, n, *, out=None):
    """PyTorch's linalg_matrix_power: inv for n < 0, then binary powering with matmul."""
    _tensor(A_)
    _check_matrix(A_, "linalg.matrix_power")
    _check_square(A_, "linalg.matrix_power")
    n = int(n)
    if n == 0:
        eye = _make(np.broadcast_to(np.eye(A_.shape[-1], dtype=np.dtype(A_.dtype)), A_.shape).copy())
        return A.copy_(A.clone(A_), eye)
    a = A_
    if n < 0:
        a = inv(a)
        n = -n
    if n == 1:
        return A.clone(a)
    if n == 2:
        return A.matmul(a, a)
    if n == 3:
        return A.matmul(A.matmul(a, a), a)
    z = result = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = a if z is None else A.matmul(z, z)
        if bit == 1:
            result = z if result is None else A.matmul(result, z)
    return result


def matrix_exp(A_):
    _square_float(A_, "linalg.matrix_exp")
    return apply(RULES["linalg_matrix_exp"], (A_,), {})


def tensorinv(A_, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    end, start = tuple(A_.shape[ind:]), tuple(A_.shape[:ind])
    p_end, p_start = int(np.prod(end)), int(np.prod(start))
    if p_end != p_start:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
            f"but got {p_end} != {p_start}"
        )
    square = A.reshape(A_, (p_end, p_end))
    _check_float(square, "linalg.inv")
    no_low_precision(square, "linalg.inv")
    _raise_info(_info_of(square), "inv", _singular_inv)
    return A.reshape(apply(RULES["linalg_inv"], (square,), {}), end + start)


def tensorsolve(A_, B, dims=None, *, out=None):
    a = A_
    if dims is not None:
        nd = a.ndim
        dims = [d % nd for d in dims]
        rest = [d for d in range(nd) if d not in dims]
        a = A.permute(a, tuple(rest + dims))
    result_shape = tuple(a.shape[B.ndim :])
    p_res, p_other = int(np.prod(result_shape)), int(np.prod(tuple(B.shape)))
    if p_res != p_other:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {p_res} != {p_other}"
        )
    x = solve(A.reshape(a, (p_res, p_res)), A.reshape(B, (p_other,)))
    return A.reshape(x, result_shape)


def householder_product(A_, tau, *, out=None):
    """Q = H_1 ... H_k (first n columns), H_i = I - tau_i v_i v_i^H, v_i = (0, ..., 0, 1, A[i+1:, i])
    (LAPACK's orgqr / ungqr; v^H = v^T for real A)."""
    fname = "torch.linalg.householder_product"
    _tensor(A_), _tensor(tau, "tau")
    if A_.ndim < 2:
        raise RuntimeError(f"{fname}: input must have at least 2 dimensions.")
    m, n = A_.shape[-2:]
    k = tau.shape[-1] if tau.ndim else 1
    if m < n:
        raise RuntimeError(f"{fname}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < k:
        raise RuntimeError(f"{fname}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    no_kernel(A_, "orgqr_cpu")
    dt = np.dtype(A_.dtype)
    batch = tuple(A_.shape[:-2])
    eye = _make(np.broadcast_to(np.eye(m, n, dtype=dt), batch + (m, n)).copy())
    # I[:, :n] as a function of A with a zero derivative (PyTorch's node exists even when k = 0)
    q = A.where(_make(np.ones((m, n), dtype=bool)), eye, A_)
    for i in reversed(range(k)):  # Q = H_1 (H_2 (... (H_k I[:, :n])))
        col = A.narrow(A.narrow(A_, -1, i, 1), -2, i + 1, m - i - 1)  # (..., m-i-1, 1)
        head = _make(np.concatenate([np.zeros(i), np.ones(1)]).astype(dt).reshape((i + 1, 1)))
        head = A.expand(head, batch + (i + 1, 1))
        v = A.cat([head, col], -2)  # (..., m, 1)
        t = A.unsqueeze(A.unsqueeze(A.select(tau, -1, i), -1), -1)
        vh = A.transpose(v, -1, -2)
        if is_complex_dtype(vh.dtype):
            vh = _conj_physical(vh)
        q = q - t * A.matmul(v, A.matmul(vh, q))
    return q


def _conj_physical(x):
    return conj_physical(x)


def orgqr(input, tau):
    return householder_product(input, tau)


def diagonal(A_, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(A_, offset, dim1, dim2)


NAMESPACES = {
    "linalg": {
        "LinAlgError": LinAlgError,
        "inv": inv,
        "inv_ex": inv_ex,
        "solve": solve,
        "solve_ex": solve_ex,
        "solve_triangular": solve_triangular,
        "det": det,
        "slogdet": slogdet,
        "cholesky": linalg_cholesky,
        "cholesky_ex": cholesky_ex,
        "lu_factor": lu_factor,
        "lu_factor_ex": lu_factor_ex,
        "lu": linalg_lu,
        "lu_solve": linalg_lu_solve,
        "matrix_power": matrix_power,
        "matrix_exp": matrix_exp,
        "tensorinv": tensorinv,
        "tensorsolve": tensorsolve,
        "householder_product": householder_product,
        "diagonal": diagonal,
    }
}
