"""Discrete Fourier transforms: aten's three primitives, ``_fft_c2c`` (complex to complex, either
direction), ``_fft_r2c`` (real to the one-sided half spectrum) and ``_fft_c2r`` (a Hermitian half
spectrum to real); ``torch.fft``'s functions are compositions over them
(reference.ops.functions.fft).

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry. ``norm`` is NumPy's and ``torch.fft``'s name for the scaling of the transform computed
(``"backward"``: none on the forward transform, 1/N on the inverse; ``"ortho"``: 1/sqrt(N) both
ways; ``"forward"``: 1/N on the forward transform).

Gradients. The scaled DFT matrix ``s F`` is symmetric, so the plain transpose of c2c is c2c itself
(same direction, same norm), and of r2c the c2c of the half spectrum padded with zeros to the full
length; PyTorch's convention follows by conjugation (``Rule.complex_grads``, docs/complex.md). c2r
is not holomorphic (it reads the conjugates of the half spectrum it mirrors, and drops the
imaginary parts of the self-mirrored bins): its VJP is PyTorch's ``fft_c2r_backward``, the r2c of
the gradient with the same scale, the mirrored bins doubled.
"""

from __future__ import annotations

import math

import numpy as np

from reference import errors
from reference.autograd.dispatch import apply
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops.rule import AUTO_LINEAR
from reference.ops.rules.registry import RULES, rule


def _n_points(shape, dims):
    return math.prod(shape[d] for d in dims)


def _transform_scale(norm, n, forward):
    """The factor NumPy's ``norm`` puts on a transform of ``n`` points in the direction computed."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") == forward else 1.0


def _fft_bound(arrays, errs, params, outs, u):
    """Each output of a DFT over N points is ``s·sum_k w_jk x_k`` with twiddles of modulus 1, so
    ``|dy_j| <= s·sum_k m_k |dx_k|`` (``m_k`` = 2 for a bin c2r mirrors, else 1), and the own error of
    a direct sum of N complex products is ``sqrt(2)·gamma(N + 2)·s·sum_k m_k |x_k|`` (Higham 2002,
    Lemma 3.5 and §3.1; a Cooley-Tukey FFT's O(log N) u is within it; the tracker adds ``u|y|``
    for the scaling). The magnitude is the sum of the moduli, the same for every output of a
    transformed slice: the op on ``|x|`` (the products declaration) cancels wherever the twiddles
    do (an FFT of a constant is 0 off the zero bin), which made those bounds 0."""
    (x,), (e,), (y,) = arrays, errs, outs
    dims = tuple(d % x.ndim for d in params["dims"])
    n = params.get("last_dim_size")
    shape = list(x.shape)
    if n is not None:  # c2r: the full length of the real output
        shape[dims[-1]] = n
    points = _n_points(shape, dims)
    s = _transform_scale(params["norm"], points, params.get("forward", n is None))
    weight = np.ones(x.shape[dims[-1]]) if x.ndim else np.ones(())
    if n is not None:  # c2r: the bins 1 .. n - (n//2 + 1) are read twice (mirrored)
        weight[1 : 1 + n - x.shape[dims[-1]]] = 2.0
    weight = weight.reshape([-1 if d == dims[-1] else 1 for d in range(x.ndim)])

    def total(a):
        with np.errstate(all="ignore"):
            return np.sum(np.abs(a) * weight, axis=dims, keepdims=True) * s

    k = points + 2
    own = math.sqrt(2.0) * k * u / max(1.0 - k * u, 0.5) * total(x)
    prop = total(e) if e is not None else 0.0
    return [np.broadcast_to(own + prop, np.shape(y)).copy()]


_ERROR = errors.bound(
    _fft_bound,
    "a DFT output is s·sum_k w_jk x_k, |w| = 1: sqrt(2) gamma(N + 2) s sum |x_k| (Higham 2002, Lemma 3.5)",
)


def _c2c_kernel(a, dims, norm, forward):
    xp = namespace_of(a)
    fn = xp.fft.fftn if forward else xp.fft.ifftn
    return fn(a, axes=dims, norm=norm).astype(a.dtype, copy=False)


def _r2c_kernel(a, dims, norm):
    xp = namespace_of(a)
    out = xp.fft.rfftn(a, axes=dims, norm=norm)
    return out.astype(A.to_complex(a.dtype), copy=False)


def _c2r_kernel(a, dims, norm, last_dim_size):
    xp = namespace_of(a)
    s = [a.shape[d] for d in dims[:-1]] + [last_dim_size]
    return xp.fft.irfftn(a, s=s, axes=dims, norm=norm).astype(A.to_real(a.dtype), copy=False)


def _batch(shift_param):
    """The transform of the physical value with the batch dim first: every transformed dim + 1."""

    def batch(b, params):
        x = b.front(0)
        new = dict(params)
        new["dims"] = tuple(d + 1 for d in params["dims"])
        return apply(b.rule, (x,), new), 0

    return batch


def c2c(x, dims, norm, forward):
    return apply(RULES["fft_c2c"], (x,), {"dims": tuple(dims), "norm": norm, "forward": forward})


def r2c(x, dims, norm):
    return apply(RULES["fft_r2c"], (x,), {"dims": tuple(dims), "norm": norm})


def c2r(x, dims, norm, last_dim_size):
    return apply(
        RULES["fft_c2r"], (x,), {"dims": tuple(dims), "norm": norm, "last_dim_size": int(last_dim_size)}
    )


def _r2c_vjp(c, g):
    """The transpose of the half spectrum: zeros up to the full length, then c2c of the same scale."""
    dims, last = c.dims, c.dims[-1]
    n = c.shapes[0][last]
    m = g.shape[last]
    if n > m:
        shape = list(g.shape)
        shape[last] = n - m
        g = A.cat([g, A.zeros(tuple(shape), dtype=g.dtype, device=g.device)], last)
    return c2c(g, dims, c.norm, True)


def _scale(norm, n):
    return {"backward": 1.0 / n, "ortho": 1.0 / math.sqrt(n), "forward": 1.0}[norm]


def _c2r_vjp(c, g):
    """PyTorch's fft_c2r_backward: r2c of the gradient (unscaled) times the inverse's scale, the bins
    1 .. n - (n//2 + 1) (mirrored into the other half by the forward) doubled."""
    dims, last = c.dims, c.dims[-1]
    n_total = _n_points(g.shape, dims)
    gi = r2c(g, dims, "backward") * _scale(c.norm, n_total)
    double = g.shape[last] - gi.shape[last]
    if double > 0:
        m = gi.shape[last]
        shape = [1] * gi.ndim
        shape[last] = m
        mask = A.ones(tuple(shape), dtype=A.to_real(gi.dtype), device=gi.device)
        mask._data.reshape(-1)[1 : 1 + double] = 2.0
        gi = gi * mask
    return gi


rule(
    "fft_c2c",
    "FftC2CBackward0",
    ("self",),
    forward=_c2c_kernel,
    grads=(lambda c, g: c2c(g, c.dims, c.norm, c.forward),),
    jvp=AUTO_LINEAR,
    batch=_batch("dims"),
    error=_ERROR,
)
rule(
    "fft_r2c",
    "FftR2CBackward0",
    ("self",),
    forward=_r2c_kernel,
    grads=(_r2c_vjp,),
    jvp=AUTO_LINEAR,
    batch=_batch("dims"),
    error=_ERROR,
)
rule(
    "fft_c2r",
    "FftC2RBackward0",
    ("self",),
    forward=_c2r_kernel,
    grads=(_c2r_vjp,),
    complex_grads="explicit",
    jvp=AUTO_LINEAR,
    batch=_batch("dims"),
    error=_ERROR,
)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: every primitive of this family accepts complex tensors (PyTorch defines them on complex numbers)
COMPLEX_INPUTS = True
