"""Distance primitives: the p-norm along dims behind ``pairwise_distance`` and ``normalize``
(PyTorch's ``norm(input, p, dim, keepdim)``, gradient ``norm_backward``), and ``cdist``'s direct
path (``_cdist_forward`` with ``_cdist_backward``'s conventions at zero distance).

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry. ``pdist`` is a composite of ``cdist`` (:mod:`reference.ops.functions.attention`).
"""

from __future__ import annotations

import math

import numpy as np

from reference import errors
from reference.autograd.dispatch import apply
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops.rule import BATCH_REDUCE
from reference.ops.rules._helpers import _unreduce
from reference.ops.rules.losses import _fronted
from reference.ops.rules.reductions import _norm_steps, _re_conj_mul, _sgn
from reference.ops.rules.registry import RULES, rule

# ---- rounding-error declarations (reference.errors) ----------------------------------------------


def _pnorm_steps(x, p, dim, keepdim):
    return _norm_steps(x, p, dim, keepdim)


def _cdist_steps(x1, x2, p):
    """The direct form: differences, then their p-norm (PyTorch's mm form for p = 2 past 25 rows is
    composed of other primitives in reference.ops.functions.attention, each with its own bound)."""

    diff = A.unsqueeze(x1, -2) - A.unsqueeze(x2, -3)
    if diff.shape[-1] == 0:
        return A.sum(diff, -1)
    return _norm_steps(diff, p, (diff.ndim - 1,), False)


_PNORM_ERROR = errors.composite(_pnorm_steps, "|x|, then max, count, sum, sqrt of a sum of squares or pow")
_CDIST_ERROR = errors.composite(_cdist_steps, "differences, then their p-norm")

# ---- the p-norm along dims -----------------------------------------------------------------------


def _pnorm_forward(x, p, dim, keepdim):
    """PyTorch's ``norm`` (linalg_vector_norm's kernel): the norm of |x|, real for complex x."""
    xp = namespace_of(x)
    a = xp.abs(x)
    if x.dtype.kind == "c":
        x = a  # the moduli; the result is real (complex128 -> float64)
    if p == 0:
        out = (x != 0).sum(axis=dim, keepdims=keepdim).astype(x.dtype)
    elif p == math.inf:
        out = a.max(axis=dim, keepdims=keepdim) if x.size else a.sum(axis=dim, keepdims=keepdim)
    elif p == -math.inf:
        out = a.min(axis=dim, keepdims=keepdim)
    elif p == 1:
        out = a.sum(axis=dim, keepdims=keepdim)
    elif p == 2:
        out = xp.sqrt((x * x).sum(axis=dim, keepdims=keepdim))
    else:
        with np.errstate(divide="ignore", over="ignore"):  # (NumPy's flags; CuPy raises none)
            out = (a**p).sum(axis=dim, keepdims=keepdim) ** (1.0 / p)
    return xp.asarray(out, dtype=x.dtype)


def pnorm(input, p, dim, keepdim=False):
    return apply(RULES["pnorm"], (input,), {"p": p, "dim": tuple(dim), "keepdim": keepdim})


def norm_backward(g, x, norm, p, dim, keepdim):
    """PyTorch's ``norm_backward`` in Tensor ops (so it differentiates again); its formulas read
    ``sgn`` (``sign`` for real x), so they hold for complex x as they are."""

    sign = _sgn if x.dtype.kind == "c" else A.sign
    shape = tuple(x.shape)
    g = _unreduce(g, shape, dim, keepdim)
    norm = _unreduce(norm, shape, dim, keepdim)
    zero = A.zeros_like(x)
    if p == 0:
        return zero * g
    if p == 1:
        return sign(x) * g
    if p == 2:
        return x * A.masked_fill(g / norm, norm == 0, 0.0)
    if math.isinf(p):
        ax = A.abs(x)
        mask = A.to(ax == norm, ax.dtype)
        count = _unreduce(A.sum(mask, dim, keepdim=keepdim), shape, dim, keepdim)
        return sign(x) * ((g / count) * mask)
    if p < 1:
        scaled = sign(x) * A.masked_fill(A.pow(A.abs(x), p - 1), x == 0, 0.0)
        return scaled * g * A.pow(norm, 1 - p)
    if p < 2:
        scaled = sign(x) * A.pow(A.abs(x), p - 1)
    else:
        scaled = x * A.pow(A.abs(x), p - 2)
    return scaled * A.masked_fill(g / A.pow(norm, p - 1), norm == 0, 0.0)


def _pnorm_jvp(c, t):
    """PyTorch's norm_jvp: Re(conj(t) * partial) summed (t * partial for real input)."""

    ones = A.ones_like(c.result)
    row = norm_backward(ones, c.self, c.result, c.p, c.dim, c.keepdim)
    return A.sum(_re_conj_mul(t, row), c.dim, keepdim=c.keepdim)


rule(
    "pnorm",
    "NormBackward1",
    ("self",),
    forward=_pnorm_forward,
    grads=(lambda c, g: norm_backward(g, c.self, c.result, c.p, c.dim, c.keepdim),),
    saves={"self": (0,), "result": (0,)},
    jvp=(_pnorm_jvp,),
    batch=BATCH_REDUCE,
    error=_PNORM_ERROR,
    complex_grads="explicit",  # norm_backward's formulas, valid for complex input (real output)
    complex_inputs=True,
)

# ---- cdist (the direct path) ---------------------------------------------------------------------


def _cdist_forward(x1, x2, p):
    xp = namespace_of(x1)
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    if diff.shape[-1] == 0:
        return xp.zeros(diff.shape[:-1], dtype=x1.dtype)
    return _pnorm_forward(diff, p, (diff.ndim - 1,), False)


def _cdist_pair_grad(diff, dist, p):
    """d dist / d diff per pair, with ``_cdist_backward``'s conventions: 0 where dist == 0 (and,
    for p < 1, where diff == 0); for p = inf the sign at every coordinate attaining the max."""
    zero = A.zeros_like(diff)
    if p == 0:
        return zero
    if p == 1:
        return A.sign(diff)
    if math.isinf(p):
        return A.sign(diff) * A.to(A.abs(diff) == dist, diff.dtype)
    dead = dist == 0
    if p < 1:
        dead = dead | (diff == 0)
    if p == 2:
        return A.where(dead, zero, diff / A.where(dist == 0, A.ones_like(dist), dist))
    safe_dist = A.where(dist == 0, A.ones_like(dist), dist)
    if p < 2:
        safe_diff = A.where(diff == 0, A.ones_like(diff), A.abs(diff)) if p < 1 else A.abs(diff)
        val = A.sign(diff) * A.pow(safe_diff, p - 1) / A.pow(safe_dist, p - 1)
    else:
        val = diff * A.pow(A.abs(diff), p - 2) / A.pow(safe_dist, p - 1)
    return A.where(dead, zero, val)


def _cdist_grad(c, g, first):
    x1, x2 = c.x1, c.x2
    diff = A.unsqueeze(x1, -2) - A.unsqueeze(x2, -3)  # (..., P, R, M)
    dist = A.unsqueeze(c.result, -1)
    J = _cdist_pair_grad(diff, dist, c.p) * A.unsqueeze(g, -1)
    return A.sum(J, -2) if first else -A.sum(J, -3)


def cdist_direct(x1, x2, p):
    return apply(RULES["cdist"], (x1, x2), {"p": p})


def _cdist_jvp(c, t1, t2):
    diff = A.unsqueeze(c.x1, -2) - A.unsqueeze(c.x2, -3)
    J = _cdist_pair_grad(diff, A.unsqueeze(c.result, -1), c.p)
    td = None
    if t1 is not None:
        td = A.unsqueeze(t1, -2)
    if t2 is not None:
        td = -A.unsqueeze(t2, -3) if td is None else td - A.unsqueeze(t2, -3)
    return A.sum(J * td, -1)


def _cdist_batch(b, params):
    return apply(b.rule, (_fronted(b, 0), _fronted(b, 1)), params), 0


rule(
    "cdist",
    "CdistBackward0",
    ("x1", "x2"),
    forward=_cdist_forward,
    grads=(lambda c, g: _cdist_grad(c, g, True), lambda c, g: _cdist_grad(c, g, False)),
    saves={"x1": (0, 1), "x2": (0, 1), "result": (0, 1)},
    jvp=lambda c, ts: _cdist_jvp(c, ts[0], ts[1]),
    batch=_cdist_batch,
    error=_CDIST_ERROR,
)
