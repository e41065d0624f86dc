"""Matrix decompositions and the norms built on them: PyTorch's names, signatures, defaults and
errors (real and complex floating dtypes, docs/complex.md).

Primitives (:mod:`reference.ops.rules.linalg_decomp`): linalg_eigh, linalg_qr, linalg_svd,
linalg_pinv, linalg_lstsq. Compositions, as in PyTorch (their ``grad_fn`` is that of the ops they
are made of): eigvalsh (eigh's eigenvalues: ``LinalgEighBackward0``), svdvals (svd's singular
values: ``LinalgSvdBackward0``), torch.svd (linalg.svd and a transpose), torch.qr, pinverse,
matrix_rank (no gradient: an integer), matrix_norm (vector_norm for 'fro', svdvals then
sum/amax/amin for 'nuc'/2/-2, abs-sum then amax/amin for 1/-1/inf/-inf), linalg.norm, cond
(svdvals for 2/-2/None; the other orders need the inverse, which the solve family provides:
``linalg.inv_ex``).
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple

import numpy as np

import reference
from reference.autograd.dispatch import apply
from reference.autograd.grad_mode import no_grad
from reference.autograd.tensor import Tensor, _make, float64, int64
from reference.backend import to_numpy
from reference.ops import api
from reference.ops.functions import complex as F
from reference.ops.functions._low_precision import low_name, no_kernel, no_low_precision
from reference.ops.rules.registry import RULES
from reference.scalar_types import scalar_type_name

__all__ = ["svd", "qr", "pinverse"]

_eigh_t = namedtuple("linalg_eigh", ("eigenvalues", "eigenvectors"))
_qr_t = namedtuple("linalg_qr", ("Q", "R"))
_torch_qr_t = namedtuple("qr", ("Q", "R"))
_svd_t = namedtuple("linalg_svd", ("U", "S", "Vh"))
_torch_svd_t = namedtuple("svd", ("U", "S", "V"))
_lstsq_t = namedtuple("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


def _tname(dt):
    return scalar_type_name(dt)


def _mT(x):
    return api.transpose(x, -2, -1)


def _mH(x):
    """The conjugate transpose (torch.svd's V = Vh.mH: a transpose, then conj, ConjBackward0)."""
    if x.dtype.kind != "c":
        return _mT(x)

    return F.conj(_mT(x))


def _at_least_2d(x, what, name="A"):
    if x.ndim < 2:
        raise RuntimeError(f"{what}: The input tensor {name} must have at least 2 dimensions.")


def _floating(x, what):
    if x.dtype.kind not in "fc" and low_name(x) is None:  # bfloat16 (ml_dtypes) has kind "V"
        raise RuntimeError(
            f"{what}: Expected a floating point or complex tensor as input. Got {_tname(x.dtype)}"
        )


def _square(x, what):
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(
            f"{what}: A must be batches of square matrices, but they are {x.shape[-2]} by {x.shape[-1]} matrices"
        )


# ---- eigh, eigvalsh --------------------------------------------------------------------------------------


def _eigh(A_, UPLO):
    _at_least_2d(A_, "linalg.eigh")
    _square(A_, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if A_.dtype.kind not in "fc":
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{_tname(A_.dtype)}'")
    no_kernel(A_, "linalg_eigh_cpu")
    return apply(RULES["linalg_eigh"], (A_,), {"UPLO": UPLO})


def eigh(A, UPLO="L"):
    return _eigh_t(*_eigh(A, UPLO))


def eigvalsh(A, UPLO="L"):
    return _eigh(A, UPLO)[0]


# ---- qr --------------------------------------------------------------------------------------------------


def _qr(A_, mode):
    _at_least_2d(A_, "linalg.qr")
    _floating(A_, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    no_kernel(A_, "geqrf_cpu")
    return apply(RULES["linalg_qr"], (A_,), {"mode": mode})


def linalg_qr(A, mode="reduced"):
    return _qr_t(*_qr(A, mode))


def qr(input, some=True):
    warnings.warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
        "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
        "Q, R = torch.qr(A, some)\nshould be replaced with\n"
        "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')",
        UserWarning,
        stacklevel=2,
    )
    return _torch_qr_t(*_qr(input, "reduced" if some else "complete"))


# ---- svd, svdvals, torch.svd ----------------------------------------------------------------------------


def _svd(A_, full_matrices, driver, what="linalg.svd"):
    _at_least_2d(A_, what)
    _floating(A_, what)
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend."
        )
    no_kernel(A_, "linalg_svd_cpu")
    return apply(RULES["linalg_svd"], (A_,), {"full_matrices": bool(full_matrices)})


def linalg_svd(A, full_matrices=True, *, driver=None):
    return _svd_t(*_svd(A, full_matrices, driver))


def svdvals(A, *, driver=None):
    """The singular values: svd's second output (PyTorch also runs the full svd when a gradient
    may be needed; the reference always does, so the values are those of gesdd with vectors)."""
    return _svd(A, False, driver)[1]


def svd(input, some=True, compute_uv=True):
    if input.ndim < 2:
        raise RuntimeError(
            f"linalg.svd: input should have at least 2 dimensions, but has {input.ndim} dimensions instead"
        )
    _floating(input, "linalg.svd")
    if not compute_uv:
        m, n = input.shape[-2:]
        s = svdvals(input)
        batch = tuple(input.shape[:-2])
        return _torch_svd_t(
            api.zeros(batch + (m, m), dtype=input.dtype, device=input.device),
            s,
            api.zeros(batch + (n, n), dtype=input.dtype, device=input.device),
        )
    U, S, Vh = _svd(input, not some, None)
    return _torch_svd_t(U, S, _mH(Vh))


# ---- pinv, pinverse -----------------------------------------------------------------------------------------


def _tol_value(t):
    if isinstance(t, Tensor):
        return np.asarray(to_numpy(t._data), dtype=np.float64)  # host-side tolerance
    return float(t)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    if A.ndim < 2 or A.dtype.kind not in "fc" or low_name(A) is not None:
        shape = ", ".join(str(s) for s in A.shape)
        raise RuntimeError(
            f"linalg.pinv({_tname(A.dtype)}{{[{shape}]}}): expected a tensor with 2 or more dimensions of float, "
            "double, cfloat or cdouble types"
        )
    if rcond is not None:  # the legacy positional overload: rcond is rtol
        rtol = rcond
    if hermitian:
        _square(A, "linalg.eigh")
    m, n = A.shape[-2:]
    atol_v = 0.0 if atol is None else _tol_value(atol)
    if rtol is None:
        eps = float(np.finfo(A._data.dtype).eps) * max(m, n)
        rtol_v = eps if atol is None else np.where(np.asarray(atol_v) > 0, 0.0, eps)
    else:
        rtol_v = _tol_value(rtol)
    rtol_v = float(rtol_v) if np.ndim(rtol_v) == 0 else rtol_v
    atol_v = float(atol_v) if np.ndim(atol_v) == 0 else atol_v
    return apply(RULES["linalg_pinv"], (A,), {"atol": atol_v, "rtol": rtol_v, "hermitian": bool(hermitian)})


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


# ---- lstsq ------------------------------------------------------------------------------------------------


def lstsq(A, B, rcond=None, *, driver=None):
    what = "torch.linalg.lstsq"
    if A.ndim < 2:
        raise RuntimeError(f"{what}: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError(f"{what}: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{what}: Expected input and other to have the same dtype, but got input's dtype "
            f"{_tname(A.dtype)} and other's dtype {_tname(B.dtype)}"
        )
    if not (A.ndim >= B.ndim and A.ndim - B.ndim <= 1):
        raise RuntimeError(
            f"{what}: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1"
        )
    vector = B.ndim == A.ndim - 1
    if vector and A.shape[-2] != B.shape[-1]:
        raise RuntimeError(f"{what}: input.size(-2) should match other.size(-1)")
    if not vector and A.shape[-2] != B.shape[-2]:
        raise RuntimeError(f"{what}: input.size(-2) should match other.size(-2)")
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{what}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    _floating(A, what)
    m, n = A.shape[-2:]
    if rcond is None and low_name(A) is not None:  # aten's _get_epsilon
        raise RuntimeError("This function doesn't handle types other than float and double")
    if rcond is None:
        rcond = float(np.finfo(A._data.dtype).eps) * max(m, n)
    batch_a, batch_b = tuple(A.shape[:-2]), tuple(B.shape[: -1 if vector else -2])
    try:
        np.broadcast_shapes(batch_a, batch_b)
    except ValueError:
        raise RuntimeError(_broadcast_message(batch_a, batch_b)) from None
    no_kernel(A, "linalg_lstsq_cpu")
    x, res, rank, sv = apply(RULES["linalg_lstsq"], (A, B), {"rcond": float(rcond), "driver": driver})
    return _lstsq_t(x, res, rank, sv.detach())  # the singular values are not differentiable (PyTorch)


def _broadcast_message(a, b):
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            return (
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension "
                f"{max(len(a), len(b)) - i}"
            )
    return "shapes cannot be broadcast"


# ---- matrix_rank ----------------------------------------------------------------------------------------------


_MATRIX_RANK_SIGNATURES = (
    " * (Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, Tensor out = None)\n"
    " * (Tensor input, *, float atol = None, float rtol = None, bool hermitian = False, Tensor out = None)\n"
    " * (Tensor input, Tensor tol, bool hermitian = False, *, Tensor out = None)\n"
    " * (Tensor input, float tol, bool hermitian = False, *, Tensor out = None)\n"
)


def _py_typename(x):
    return "Tensor" if isinstance(x, Tensor) else type(x).__name__


def _matrix_rank_args(args, kwargs):
    """PyTorch's overload resolution of ``linalg_matrix_rank`` (four overloads: keyword
    atol/rtol as tensors or floats, or the deprecated positional ``tol``); ``(input, tol, atol)``
    mixtures, ``None`` for ``tol``, a non-bool ``hermitian`` and unknown names raise its TypeError
    (keyword arguments listed in reverse order, as PyTorch's parser prints them)."""

    def bad():
        got = [_py_typename(a) for a in args] + [
            f"{k}={_py_typename(v)}" for k, v in reversed(kwargs.items())
        ]
        text = ", ".join(got) + (", " if not args else "")
        raise TypeError(
            f"linalg_matrix_rank() received an invalid combination of arguments - got ({text}), "
            f"but expected one of:\n{_MATRIX_RANK_SIGNATURES}"
        )

    def number_or_tensor(x, none_ok):
        return isinstance(x, (Tensor, bool, int, float)) or (none_ok and x is None)

    names = ("input", "tol", "hermitian")
    if len(args) > 3 or set(kwargs) - {"input", "tol", "hermitian", "atol", "rtol", "out"}:
        bad()
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in given:
            bad()
        given[k] = v
    A = given.get("input")
    if not isinstance(A, Tensor) or not isinstance(given.get("hermitian", False), bool):
        bad()
    out = given.get("out")
    if out is not None and not isinstance(out, Tensor):
        bad()
    if out is not None:  # PyTorch resizes ``out``; the reference Tensor has no resize_
        raise TypeError("linalg.matrix_rank: out= is not supported by the reference")
    if "tol" in given:
        if "atol" in given or "rtol" in given or not number_or_tensor(given["tol"], False):
            bad()
        return A, given["tol"], 0.0, given.get("hermitian", False)
    if "hermitian" in dict(zip(names, args)):  # positional hermitian needs tol
        bad()
    atol, rtol = given.get("atol"), given.get("rtol")
    if not (number_or_tensor(atol, True) and number_or_tensor(rtol, True)):
        bad()
    return A, atol, rtol, given.get("hermitian", False)


def _tolerance_tensor(x, what):
    """A tolerance as aten sees it: a tensor (a Python number becomes a 0-d float64 tensor);
    complex tolerances are rejected (checkNotComplexTolerance)."""
    t = x if isinstance(x, Tensor) else api.tensor(float(x), dtype=float64)
    if t.dtype.kind == "c":
        raise RuntimeError(
            f"torch.linalg.matrix_rank: {what} tensor of complex type is not supported. Got {scalar_type_name(t.dtype)}"
        )
    return t


def matrix_rank(*args, **kwargs):
    """torch.linalg.matrix_rank (aten's matrix_rank_impl): the number of singular values (or of
    |eigenvalues| when ``hermitian``) above ``max(atol, rtol * largest)``. ``rtol`` defaults to
    ``eps(dtype) * max(m, n)`` when no ``atol`` is given, else to 0 where ``atol > 0``; the
    deprecated ``tol`` is ``atol`` with ``rtol = 0``. No gradient: the result is int64."""
    A, atol, rtol, hermitian = _matrix_rank_args(args, kwargs)
    if A.ndim < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        )
    m, n = A.shape[-2:]
    atol_t = _tolerance_tensor(0.0 if atol is None else atol, "atol")
    if rtol is None:  # get_atol_rtol: the default needs the real dtype's epsilon
        if str(A.dtype) not in ("float32", "float64", "complex64", "complex128"):
            raise RuntimeError("This function doesn't handle types other than float and double")
        eps = 2.0**-23 if str(A.dtype) in ("float32", "complex64") else 2.0**-52
        default = api.tensor(eps * max(m, n), dtype=float64)
        rtol_t = default if atol is None else api.where(atol_t > 0, api.tensor(0.0, dtype=float64), default)
    else:
        rtol_t = _tolerance_tensor(rtol, "rtol")
    if A.numel() == 0:
        rank = api.zeros(tuple(A.shape[:-2]), dtype=int64)
    else:
        with no_grad():
            if hermitian:
                S = A_abs(eigvalsh(A))
                max_s = api.amax(S, -1, True)
            else:
                S = svdvals(A)
                max_s = api.narrow(S, -1, 0, 1)
            cut = api.maximum(api.unsqueeze(atol_t, -1), api.unsqueeze(rtol_t, -1) * max_s)
            rank = api.sum(S > cut, -1)
    return rank


def A_abs(x):
    return api.abs(x)


def A_tensor(arr):
    return _make(np.asarray(arr, dtype=np.int64))


# ---- matrix_norm, norm ----------------------------------------------------------------------------------------


def _vector_norm(*args, **kwargs):
    return reference.linalg.vector_norm(*args, **kwargs)


def _ord_name(ord):
    if isinstance(ord, str):
        return ord
    if isinstance(ord, float) and math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    return f"{ord:g}" if isinstance(ord, float) else str(ord)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    what = "linalg.matrix_norm"
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"{what}: Order {ord} not supported.")
    elif abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"{what}: Order {_ord_name(ord)} not supported.")
    _at_least_2d(A, what)
    if isinstance(dim, int) or len(dim) != 2:
        raise RuntimeError(
            f"{what}: dim must be a 2-tuple. Got {' '.join(str(d) for d in ([dim] if isinstance(dim, int) else dim))}"
        )
    d0, d1 = A_dim(dim[0], A.ndim), A_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"{what}: dims must be different. Got ({dim[0]}, {dim[1]})")
    _floating(A, what)
    if dtype is not None:
        A = A_to(A, dtype)
    if ord == "nuc" or (
        not isinstance(ord, str) and abs(ord) == 2
    ):  # svd: no low precision (fro and the 1/inf norms are sums)
        no_low_precision(A, what)
    if ord == "fro":
        return _vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or abs(ord) == 2:
        perm = [i for i in range(A.ndim) if i not in (d0, d1)] + [d0, d1]
        s = svdvals(A_permute(A, perm))
        if s.shape[-1] == 0 and ord == 2:  # PyTorch: 0 for an empty matrix
            shape = [
                1 if i in (d0, d1) else A.shape[i] for i in range(A.ndim) if keepdim or i not in (d0, d1)
            ]
            return api.zeros(tuple(shape), dtype=A.dtype, device=A.device)
        if s.shape[-1] == 0 and ord == -2:  # PyTorch's amin over the empty singular values raises
            raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
        if ord == "nuc":
            res = A_sum(s, -1, keepdim)
        else:
            res = A_amax(s, -1, keepdim) if ord > 0 else A_amin(s, -1, keepdim)
        if keepdim:  # as PyTorch: the kept dim, one more, and the inverse permutation
            inverse = [perm.index(i) for i in range(A.ndim)]
            res = A_permute(A_unsqueeze(res, -1), inverse)
        return res
    if math.isinf(ord):
        d0, d1 = d1, d0
    s = A_sum(A_abs(A), d0, keepdim)
    if not keepdim and d0 < d1:
        d1 -= 1
    return A_amax(s, d1, keepdim) if ord > 0 else A_amin(s, d1, keepdim)


def A_dim(d, n):
    return api._dim(d, n)


def A_to(x, dtype):
    return api.to(x, dtype)


def A_permute(x, perm):
    return api.permute(x, tuple(perm))


def A_sum(x, d, keepdim=False):
    return api.sum(x, d, keepdim)


def A_amax(x, d, keepdim=False):
    return reference.amax(x, d, keepdim)


def A_amin(x, d, keepdim=False):
    return reference.amin(x, d, keepdim)


def A_unsqueeze(x, d):
    return api.unsqueeze(x, d)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            if isinstance(ord, str):
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dims[0]}")
            return _vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is not None:
        if A.ndim not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.ndim}D."
            )
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if isinstance(ord, str):
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
        return _vector_norm(A, ord, None, keepdim, dtype=dtype)
    return _vector_norm(A, 2, dim, keepdim, dtype=dtype)


# ---- cond -------------------------------------------------------------------------------------------------


def cond(A, p=None):
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    valid = (None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)
    if p not in valid or isinstance(p, bool):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_ord_name(p)}")
    if A.dtype.kind not in "fc" and low_name(A) is None:
        raise RuntimeError(
            f"linalg.svd: Expected a floating point or complex tensor as input. Got {_tname(A.dtype)}"
        )
    if p is None or (not isinstance(p, str) and abs(p) == 2):
        if A.numel() == 0:
            return A_zeros(A)
        s = svdvals(A)
        smax, smin = api.narrow(s, -1, 0, 1), api.narrow(s, -1, s.shape[-1] - 1, 1)
        res = smin / smax if p == -2 else smax / smin
        return api.squeeze(res, -1)
    _square(A, f"linalg.cond(ord={_ord_name(p)})")
    if A.numel() == 0:
        return A_zeros(A)

    if p == "nuc":  # PyTorch: sum(s) * sum(1/s) of the singular values (inf/nan when singular)
        s = svdvals(A)
        return api.sum(s, -1) * api.sum(api.reciprocal(s), -1)
    inv_ex = getattr(reference.linalg, "inv_ex", None)
    if inv_ex is None:
        raise NotImplementedError(
            f"linalg.cond(ord={_ord_name(p)}) needs linalg.inv_ex, which the linear-solve family provides"
        )
    inverse, info = inv_ex(A)
    singular = api.unsqueeze(api.unsqueeze(info > 0, -1), -1)
    api.masked_fill_(inverse, singular, math.inf)  # in place, as PyTorch (its backward then fails)
    return reference.nan_to_num(matrix_norm(A, p) * matrix_norm(inverse, p), nan=math.inf, posinf=math.inf)


def A_zeros(A_):
    return api.zeros(tuple(A_.shape[:-2]), dtype=A_.dtype, device=A_.device)


METHODS = {"svd": svd, "qr": qr, "pinverse": pinverse}
NAMESPACES = {
    "linalg": {
        "eigh": eigh,
        "eigvalsh": eigvalsh,
        "qr": linalg_qr,
        "svd": linalg_svd,
        "svdvals": svdvals,
        "pinv": pinv,
        "lstsq": lstsq,
        "matrix_rank": matrix_rank,
        "matrix_norm": matrix_norm,
        "norm": norm,
        "cond": cond,
    }
}
