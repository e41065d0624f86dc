"""``torch.linalg.eig`` and ``torch.linalg.eigvals``: PyTorch's names, signatures, checks and errors;
and the Vandermonde matrices ``torch.linalg.vander`` / ``torch.vander``, compositions as in aten
(``linalg_vander``: ones and the cumprod of the expanded x, concatenated, grad_fn ``CatBackward0``;
``vander``: ones written in place, x copied into the columns after the first, their cumprod
copied back, flipped unless ``increasing``, grad_fn ``FlipBackward0`` or ``CopySlices``).

One primitive (:mod:`reference.ops.rules.linalg_eig`): linalg_eig. ``eigvals`` is, as in PyTorch,
the first output of ``linalg_eig`` (grad_fn ``LinalgEigBackward0``) when a gradient may be needed;
PyTorch otherwise calls ``_linalg_eigvals`` (geev without vectors), which does not check for
non-finite input (its result there depends on the LAPACK build: MKL returns values for some
inputs with NaN and crashes on others). The reference always runs the checked decomposition, so
``eigvals`` of a matrix with inf/NaN raises PyTorch's ``linalg.eig`` error even without a
gradient (docs/complex.md, "What differs from PyTorch").
"""

from __future__ import annotations

from collections import namedtuple

import reference as T
from reference.autograd.dispatch import apply
from reference.autograd.grad_mode import is_grad_enabled
from reference.ops.rules.registry import RULES
from reference.scalar_types import scalar_type_name

__all__ = ["vander"]

_eig_t = namedtuple("linalg_eig", ("eigenvalues", "eigenvectors"))

_NO_KERNEL = ("float16", "bfloat16")  # dtypes linalg_eig has no CPU kernel for


def _may_require_grad(x):
    """aten's _may_require_fw_or_bw_grad: grad mode on and ``x`` requires grad, or a forward-mode
    tangent."""
    return (is_grad_enabled() and x.requires_grad) or bool(getattr(x, "_tangents", None))


def _eig(A, what):
    kind = A.dtype.kind
    if (
        kind not in "fc" and str(A.dtype) not in _NO_KERNEL
    ):  # bfloat16 (ml_dtypes) has kind "V"  # PyTorch asks for the complex counterpart of the dtype first
        raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(A.dtype)}")
    if A.ndim < 2:
        raise RuntimeError(f"{what}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{what}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices"
        )
    if str(A.dtype) in _NO_KERNEL:
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for '{scalar_type_name(A.dtype)}'")
    return apply(RULES["linalg_eig"], (A,), {})


def eig(A, *, out=None):
    L, V = _eig(A, "linalg.eig")
    if out is not None:
        out[0].resize_(L.shape).copy_(L)
        out[1].resize_(V.shape).copy_(V)
        return _eig_t(out[0], out[1])
    return _eig_t(L, V)


def eigvals(A, *, out=None):
    what = "linalg.eig" if _may_require_grad(A) else "linalg.eigvals"
    L = _eig(A, what)[0]
    if out is not None:
        return out.resize_(L.shape).copy_(L)
    return L


# ---- Vandermonde matrices -------------------------------------------------------------------------


def linalg_vander(x, *, N=None):
    """aten's linalg_vander: [1, x, x^2, ..., x^(N-1)] along a new last dim (cumprod promotes
    integers to int64)."""

    name = str(x.dtype)
    if not (name in ("float32", "float64", "complex64", "complex128") or x.dtype.kind in "iu"):
        raise RuntimeError(
            f"linalg.vander supports floating point, complex, and integer tensors, but got {scalar_type_name(x.dtype)}"
        )
    x_ = x.unsqueeze(-1) if x.ndim == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    result = T.cumprod(x_.unsqueeze(-1).expand(shape + [n - 1]), -1)
    ones = result.new_ones(shape + [1])
    return T.cat([ones, result], -1)


def vander(x, N=None, increasing=False):
    """aten's vander: the powers in a (len(x), N) matrix of dtype promote_types(x, int64)."""

    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0]
    if N is not None:
        n = int(N)
        if n < 0:
            raise RuntimeError("N must be non-negative.")
    result = T.empty((x.shape[0], n), dtype=T.promote_types(x.dtype, T.int64))
    if n > 0:
        result.fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(T.cumprod(result[:, 1:], 1))
    if not increasing:
        return T.flip(result, [1])
    return result


NAMESPACES = {"linalg": {"eig": eig, "eigvals": eigvals, "vander": linalg_vander}}
