"""``torch.ormqr``: the product of the full orthogonal (unitary) ``Q`` of a QR factorization in
LAPACK's Householder form (``geqrf``'s reflectors and ``tau``) with a matrix.

PyTorch has its own node (OrmqrBackward0, FunctionsManual ``ormqr_backward``); here it is the
composite ``Q @ other`` (or ``Q^H @ other``, ``other @ Q``, ``other @ Q^H``) with the full m-by-m
``Q = linalg.householder_product`` of the k reflector columns padded with zero columns and zero
``tau`` (``H_i = I`` for ``tau_i = 0``), so the values and gradients are those of the same product
of reflectors; only the ``grad_fn`` differs.
"""

from __future__ import annotations

import reference as T
from reference.ops import api as A
from reference.scalar_types import scalar_type_name

__all__ = ["ormqr"]
METHODS = ["ormqr"]


def ormqr(input, tau, other, left=True, transpose=False):
    if input.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    if tau.ndim != input.ndim - 1:
        raise RuntimeError(
            "torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal to "
            f"{tau.ndim} and input.ndim is equal to {input.ndim}"
        )
    if other.ndim != input.ndim:
        raise RuntimeError(
            "torch.ormqr: Expected other to have the same number of dimensions as input, but got "
            f"other.ndim equal to {other.ndim} and input.ndim is equal to {input.ndim}"
        )
    m = input.shape[-2]
    left_dim = -2 if left else -1
    if other.shape[left_dim] != m:
        raise RuntimeError(f"torch.ormqr: other.shape[{left_dim}] must be equal to input.shape[-2]")
    k = tau.shape[-1]
    if k > min(other.shape[left_dim], input.shape[-1]):
        raise RuntimeError(
            f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{left_dim}], input.shape[-1])"
        )
    if input.dtype != other.dtype:
        raise RuntimeError(
            "torch.ormqr: Expected input and other to have the same dtype, but input has dtype"
            f"{scalar_type_name(input.dtype)} and other has dtype {scalar_type_name(other.dtype)}"
        )
    if input.dtype != tau.dtype:
        raise RuntimeError(
            "torch.ormqr: Expected input and tau to have the same dtype, but input has dtype"
            f"{scalar_type_name(input.dtype)} and tau has dtype {scalar_type_name(tau.dtype)}"
        )
    batch = tuple(input.shape[:-2])
    refl = input[..., :, :k]
    if m > k:
        refl = A.cat([refl, A.zeros(batch + (m, m - k), dtype=input.dtype)], -1)
        tau = A.cat([tau, A.zeros(tuple(tau.shape[:-1]) + (m - k,), dtype=tau.dtype)], -1)
    q = T.linalg.householder_product(refl, tau)
    if transpose:
        q = A.transpose(q, -2, -1).conj() if q.dtype.kind == "c" else A.transpose(q, -2, -1)
    return A.matmul(q, other) if left else A.matmul(other, q)
