"""Scans along a dim: cumsum, cumprod (with zeros), cummax/cummin, logcumsumexp.

VJPs are PyTorch's (FunctionsManual.cpp): cumsum's is the reversed cumsum; cumprod's divides the
reversed cumsum of ``result * grad`` by the input when no element is zero, and otherwise sums the
products with each element left out (the exact gradient, differentiable again; float64 on the host
with finite factors always, as prod's partials of each prefix, issue 38); cummax/cummin
scatter-add the gradient to the running arg-extreme; logcumsumexp's splits the gradient into
its positive and negative parts in log space.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

import math

import numpy as np

from reference import errors
from reference.autograd.dispatch import apply
from reference.autograd.tensor import _make
from reference.backend import is_inexact, namespace_of, running_extreme
from reference.ops import api as A
from reference.ops.functions.complex import real
from reference.ops.rule import AUTO_LINEAR, BATCH_DIM
from reference.ops.rules._sums import accurate_cumsum, on_host_float64, repair_prod
from reference.ops.rules.pointwise import complex_logaddexp
from reference.ops.rules.reductions import _batch_multi, _flip
from reference.ops.rules.registry import RULES, from_rule, rule

# ---- rounding-error declarations (reference.errors) ----------------------------------------------


def _cumprod_steps(x, dim):
    """Running products, one correctly rounded product per step (the prefix of length i carries
    (i-1)·u·|y| in any order)."""
    if x.ndim == 0 or x.shape[dim] == 0:
        return x * 1.0
    acc = A.select(x, dim, 0)
    outs = [acc]
    for i in range(1, x.shape[dim]):
        acc = acc * A.select(x, dim, i)
        outs.append(acc)
    return A.stack(outs, dim)


def _logcumsumexp_steps(x, dim):
    """PyTorch's scan: acc = max(acc, x_i) + log(1 + exp(-|acc - x_i|)) (its log1p is at least as
    accurate as log(1 + .), whose bound is taken)."""
    if x.ndim == 0 or x.shape[dim] == 0:
        return x * 1.0
    acc = A.select(x, dim, 0)
    outs = [acc]
    for i in range(1, x.shape[dim]):
        xi = A.select(x, dim, i)
        acc = A.maximum(acc, xi) + A.log(1.0 + A.exp(-A.abs(acc - xi)))
        outs.append(acc)
    return A.stack(outs, dim)


def _running_largest_error(e_in, params, outs):
    """cummax/cummin select from the prefix: the largest error in the prefix bounds the selected
    value's (the running min of the errors would not)."""
    e = np.abs(np.asarray(e_in[0], dtype=np.float64))
    if e.ndim and e.size:
        e = np.maximum.accumulate(e, axis=params["dim"])
    return [np.broadcast_to(e, np.shape(o)) for o in outs]


_CUMPROD_ERROR = errors.composite(_cumprod_steps, "a running product, 0.5 ulp per product (IEEE)")
_LOGCUMSUMEXP_ERROR = errors.composite(_logcumsumexp_steps, "a log-add-exp scan (max, exp, log, adds)")
_CUM_EXTREME_ERROR = errors.ErrorSpec(
    "gather",
    0.0,
    "values are selected from the prefix, not computed",
    extra={"window": _running_largest_error},
)


def cumsum_kernel(x, dim):
    xp = namespace_of(x)
    if x.ndim == 0:
        return x.copy()
    out = accurate_cumsum(x, dim) if xp is np else xp.cumsum(x, axis=dim)
    return out if is_inexact(x.dtype) else out.astype(np.int64)


def cumprod_kernel(x, dim):
    xp = namespace_of(x)
    if x.ndim == 0:
        return x.copy()
    out = xp.cumprod(x, axis=dim)
    out = repair_prod(x, dim, out, cumulative=True)
    return out if is_inexact(x.dtype) else out.astype(np.int64)


def cumsum_tensor(t, dim):
    return apply(RULES["cumsum"], (t,), {"dim": dim})


def cumprod_tensor(t, dim):
    return apply(RULES["cumprod"], (t,), {"dim": dim})


def reversed_cumsum(t, dim):
    return _flip(cumsum_tensor(_flip(t, dim), dim), dim)


def _is_batched(t):
    return t._batched is not None


def _zero_or_infinite(x):
    """Whether x has a 0 or an infinity, where dividing by x (PyTorch's formula) gives nan: the
    derivative of y_j in x_k is then the product of the others, C[k, j] below (PyTorch divides by
    an infinite x too: its cumprod gradient at x = [2, inf, 3, 0.5] is [inf, nan, inf, inf], where
    the derivative is [inf, 11, inf, inf], JAX's answer)."""
    xp = namespace_of(x._data)
    return bool(((x._data == 0) | xp.isinf(x._data)).any())


def _finite_host_float64(x):
    """float64 on the host with finite elements (issue 38): cumprod's derivatives there are the
    products of the other factors of each prefix (:func:`_prefix_partials`), never y_j / x_k."""
    return on_host_float64(x._data) and bool(np.isfinite(x._data).all())


def _leave_one_out(x, dim):
    """C[..., k, j] = prod_{i <= j, i != k} x_i along ``dim`` (moved last): the (n, n) table of
    cumulative products with element k left out, built from cumprod itself (so it differentiates)."""
    y = _movedim(x, dim, -1)
    n = y.shape[-1]

    eye = _make(namespace_of(x._data).eye(n, dtype=bool))
    rows = A.expand(A.unsqueeze(y, -2), tuple(y.shape[:-1]) + (n, n))
    return cumprod_tensor(A.where(eye, A.ones((), dtype=x.dtype, device=x.device), rows), rows.ndim - 1), n


def _prefix_partials(x, dim):
    """(P, lower): P[..., j, k] = prod_{i <= j, i != k} x_i along ``dim`` (moved last), the derivative
    of y_j in x_k where ``lower`` (k <= j), y_j itself above it. Prod's partials (the primitive
    prod_partials, no y_j / x_k) of the prefixes: row j is x with the factors after j replaced by 1.
    Their derivative is prod_curvature, the products leaving out two factors, exactly 0 on the
    diagonal (PyTorch's (y_j / x_k) / x_l overflows where y_j / (x_k·x_l) does not, and d(y_j / x_k)/dx_k
    keeps a rounding residue where it is 0)."""
    y = _movedim(x, dim, -1)
    n = y.shape[-1]
    xp = namespace_of(x._data)
    lower = _make(xp.tril(xp.ones((n, n), dtype=bool)))  # [j, i]: i <= j
    rows = A.where(lower, A.expand(A.unsqueeze(y, -2), tuple(y.shape[:-1]) + (n, n)), A.ones((), dtype=x.dtype))
    return from_rule("prod_partials", rows, dim=(rows.ndim - 1,)), lower


def _finite_terms(mask, partials, v):
    """partials·v where ``mask``, 0 elsewhere; a zero v against an overflowing partial (finite factors:
    every partial is a finite real) contributes 0, not 0·inf = nan. Only there: elsewhere partials·v
    stays, so the derivative in a zero v is still the partial (as prod's JVP)."""
    lost = A.logical_and(v == 0, A.logical_not(A.abs(partials) < math.inf))
    keep = A.logical_and(mask, A.logical_not(lost))
    return A.where(keep, partials * v, A.zeros((), dtype=partials.dtype, device=partials.device))


def _movedim(t, src, dst):
    nd = t.ndim
    src, dst = src % nd, dst % nd
    order = [d for d in range(nd) if d != src]
    order.insert(dst, src)
    return A.permute(t, tuple(order))


def _cumprod_grad(c, g):
    x, dim = c.self, c.dim
    if x.ndim == 0 or x.numel() <= 1 or x.shape[dim] == 1:
        # PyTorch returns ``grad`` itself when the scanned dim has one element (cumprod_backward:
        # numel <= 1 or dim_size == 1). Where x is finite and non-zero the reference evaluates the
        # general formula ``(y·g)/x`` (y = x here) instead: the same value up to two roundings, and
        # what TensorFlow computes for every size (PyTorch for longer dims). Its second derivative
        # ``gg·g/x − gg·(x·g)/x²`` is zero in real arithmetic but cancels in floating point, and the
        # error bound is composed along the formula the reference evaluates: with ``return grad``
        # it was 0 there (docs/conformance.md, "Cancellation in a formula the reference
        # short-cuts"). Elsewhere (0, inf, nan) the value is PyTorch's ``grad`` exactly.
        if _is_batched(x) or not is_inexact(x._data.dtype):
            return g

        ok = np.isfinite(x._data) & (x._data != 0)
        if not ok.any():
            return g
        xs = x if ok.all() else A.where(_make(ok), x, A.ones((), dtype=x.dtype))
        return (xs * g) / xs
    if _finite_host_float64(x):  # dx_k = sum over j >= k of g_j·P[j, k]
        partials, lower = _prefix_partials(x, dim)
        gj = A.unsqueeze(_movedim(g, dim, -1), -1)  # (..., j, 1)
        return _movedim(A.sum(_finite_terms(lower, partials, gj), -2), -1, dim)
    if not _is_batched(x) and not _zero_or_infinite(x):
        return reversed_cumsum(c.result * g, dim) / x

    table, n = _leave_one_out(x, dim)  # (..., k, j)
    upper = _make(namespace_of(g._data).triu(namespace_of(g._data).ones((n, n), dtype=bool)))  # j >= k
    gj = A.unsqueeze(_movedim(g, dim, -1), -2)  # (..., 1, j)
    # the table masked before the product: an infinite prefix product above the diagonal (j < k) is
    # no term, and must not reach g's derivative either (where's gradient 0 times inf is nan there)
    out = A.sum(A.where(upper, table, A.zeros((), dtype=g.dtype, device=g.device)) * gj, -1)  # (..., k)
    return _movedim(out, -1, dim)


def _cumprod_jvp(c, t):
    x, dim = c.self, c.dim
    if x.ndim == 0:
        return t
    # one element along dim: (t / x)·y, as the VJP's (x·g) / x above (its second derivative, 0, cancels
    # in floating point, and the error bound is composed along the formula evaluated)
    if _finite_host_float64(x) and x.numel() and x.shape[dim] > 1:  # dy_j = sum over k <= j of P[j, k]·t_k
        partials, lower = _prefix_partials(x, dim)
        tk = A.unsqueeze(_movedim(t, dim, -1), -2)  # (..., 1, k)
        return _movedim(A.sum(_finite_terms(lower, partials, tk), -1), -1, dim)
    if not _is_batched(x) and not bool((x._data == 0).any()):
        # an infinite x gives 0·inf = nan here as in the table below: a zero tangent times an
        # infinite partial derivative (IEEE), not a cancellation the table would avoid
        return cumsum_tensor(t / x, dim) * c.result

    y, ty = _movedim(x, dim, -1), _movedim(t, dim, -1)
    n = y.shape[-1]
    eye = _make(namespace_of(x._data).eye(n, dtype=bool))
    full = tuple(y.shape[:-1]) + (n, n)
    rows = A.where(eye, A.expand(A.unsqueeze(ty, -2), full), A.expand(A.unsqueeze(y, -2), full))
    upper = _make(
        namespace_of(x._data).triu(namespace_of(x._data).ones((n, n), dtype=bool))
    )  # row k contributes to j >= k only
    terms = A.where(upper, cumprod_tensor(rows, rows.ndim - 1), A.zeros((), dtype=x.dtype, device=x.device))
    return _movedim(A.sum(terms, -2), -1, dim)


rule(
    "cumsum",
    "CumsumBackward0",
    ("self",),
    forward=cumsum_kernel,
    grads=(lambda c, g: g if len(c.shapes[0]) == 0 else reversed_cumsum(g, c.dim),),
    jvp=AUTO_LINEAR,
    batch=BATCH_DIM,
    error=errors.products(),
)
rule(
    "cumprod",
    "CumprodBackward0",
    ("self",),
    forward=cumprod_kernel,
    grads=(_cumprod_grad,),
    saves={"self": (0,), "result": (0,)},
    jvp=(_cumprod_jvp,),
    batch=BATCH_DIM,
    error=_CUMPROD_ERROR,
)


def _cum_extreme(x, dim, largest):
    """Running max/min and the index of its last occurrence (NaN propagates and counts as a new
    extreme), as PyTorch's cummax/cummin."""
    xp = namespace_of(x)
    if x.ndim == 0:
        return xp.zeros((), dtype=np.int64), x.copy()
    if x.shape[dim] == 0:
        return xp.zeros(x.shape, dtype=np.int64), x.copy()
    values = running_extreme(x, dim, largest)
    pos = xp.arange(x.shape[dim]).reshape((-1,) + (1,) * (x.ndim - dim - 1))
    update = (x == values) | xp.isnan(x)
    idx = running_extreme(xp.where(update, pos, 0), dim, largest=True)
    return idx.astype(np.int64), values


def _cum_extreme_grad(c, g):
    if len(c.shapes[0]) == 0:
        return g[1]
    return from_rule(
        "scatter_add_dim",
        A.zeros(c.shapes[0], dtype=g[1].dtype, device=g[1].device),
        c.result,
        g[1],
        dim=c.dim,
    )


def _cum_extreme_jvp(c, ts):
    if ts[0].ndim == 0:
        return (None, ts[0])
    return (None, from_rule("gather", ts[0], c.result[0], dim=c.dim))


for _name, _node, _largest in (("cummax", "CummaxBackward0", True), ("cummin", "CumminBackward0", False)):
    rule(
        _name,
        _node,
        ("self",),
        forward=(lambda largest: lambda x, dim: _cum_extreme(x, dim, largest))(_largest),
        outputs=2,  # (indices, values): the saved result is the indices, as PyTorch saves them
        grads=(_cum_extreme_grad,),
        saves={"result": (0,)},
        jvp=_cum_extreme_jvp,
        batch=_batch_multi,
        error=_CUM_EXTREME_ERROR,
    )


def logcumsumexp_kernel(x, dim):
    xp = namespace_of(x)
    if x.ndim == 0:
        return x.copy()
    if x.shape[dim] == 0:
        return x.copy()
    if x.dtype.kind == "c":
        # ATen's cumulative kernel: acc = _log_add_exp_helper(x_i, acc) along dim, from acc = -inf+0j
        # (so a first element with real part -inf gives -inf+0j, as in PyTorch)
        y = xp.moveaxis(x, dim, 0)
        out = xp.empty_like(y)
        acc = xp.full(y.shape[1:], complex(-np.inf, 0.0), dtype=x.dtype)
        for i in range(y.shape[0]):
            acc = out[i] = complex_logaddexp(y[i], acc)
        return xp.moveaxis(out, 0, dim)
    # logaddexp.accumulate one step at a time (CuPy's ufuncs accumulate only add and multiply):
    # out[i] = logaddexp(out[i - 1], x[i]), NumPy's accumulation, bit for bit
    y = xp.moveaxis(x, dim, 0)
    out = y.copy()
    for i in range(1, y.shape[0]):
        out[i] = xp.logaddexp(out[i - 1], y[i])
    return xp.ascontiguousarray(xp.moveaxis(out, 0, dim))


def _logcumsumexp(t, dim):
    return apply(RULES["logcumsumexp"], (t,), {"dim": dim})


def _logcumsumexp_grad(c, g):
    """``grad_k = sum_{j >= k} g_j exp(self_k - result_j)``: linear in the cotangent, every exponent
    <= 0 (``result_j`` is the log-sum-exp of a prefix holding ``self_k``), as a (k, j) table.

    PyTorch's logcumsumexp_backward (after TensorFlow's) accumulates the positive and negative parts
    of ``g`` in log space, ``exp(reverse_lcse(log|g| - result) + self)``: the same value, but its
    derivative in ``g`` is ``t / g``, which overflows at a subnormal cotangent and gives nan in
    forward-over-reverse and double backward where the exact value is finite (the seeded campaign's
    'ties' draws: PyTorch, JAX and TensorFlow agree on 5.33e75 there). The table is the
    mathematics at every order; its cost is n² along ``dim``."""
    x, result, dim = c.self, c.result, c.dim
    if g.ndim == 0 or g.numel() == 0:
        return g
    if g.dtype.kind == "c":
        # PyTorch's complex branch, exp(reverse_lcse(log(conj g) - result) + self).conj(), is this
        # plain derivative sum_{j >= k} g_j exp(self_k - result_j) under complex_grads' conjugation

        def reverse_lcse(t):
            return _flip(_logcumsumexp(_flip(t, dim), dim), dim)

        return A.exp(reverse_lcse(A.log(g) - result) + x)
    y, r, gj = _movedim(x, dim, -1), _movedim(result, dim, -1), _movedim(g, dim, -1)
    n = y.shape[-1]
    xp = namespace_of(g._data)
    upper = _make(xp.triu(xp.ones((n, n), dtype=bool)))  # (k, j): j >= k
    # masked before exp: the entries j < k would be exp of a positive number (overflow), and their
    # derivative inf * 0
    exponent = A.where(upper, A.unsqueeze(y, -1) - A.unsqueeze(r, -2), A.full((), -np.inf, dtype=g.dtype))
    out = A.sum(A.exp(exponent) * A.unsqueeze(gj, -2), -1)  # (..., k)
    return _movedim(out, -1, dim)


def _logcumsumexp_jvp(c, t):
    x, dim = c.self, c.dim
    if x.ndim == 0 or x.numel() == 0:
        # an empty scanned dim has an empty tangent, as its forward and backward are empty (the shift
        # below is a max over that dim, which has no element: PyTorch's JVP raises there,
        # torch-logcumsumexp-jvp-empty-dim; JAX and TensorFlow return the empty tangent)
        return t
    # complex input: shifted by the largest real part (the shift cancels in the quotient)
    if x.dtype.kind == "c":
        x_re = real(x)
    else:
        x_re = x
    shift = A.amax(x_re, dim, keepdim=True)
    e = A.exp(x - shift)
    return cumsum_tensor(e * t, dim) / cumsum_tensor(e, dim)


rule(
    "logcumsumexp",
    "LogcumsumexpBackward0",
    ("self",),
    forward=logcumsumexp_kernel,
    grads=(_logcumsumexp_grad,),
    saves={"self": (0,), "result": (0,)},
    jvp=(_logcumsumexp_jvp,),
    batch=BATCH_DIM,
    error=_LOGCUMSUMEXP_ERROR,
    complex_inputs=True,  # ATen's complex kernel and logcumsumexp_backward's complex branch
)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: the primitives of this family that accept complex tensors (each checked against torch in
#: tests/autograd/test_torch_complex.py); the others refuse them with PyTorch's error
COMPLEX_INPUTS = """
    cumprod cumsum
"""
