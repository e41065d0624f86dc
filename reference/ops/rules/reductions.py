"""Reductions: sum, mean, amax/amin over dims or whole tensors.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

import math

import numpy as np

from reference import errors
from reference.autograd.dispatch import apply
from reference.autograd.tensor import _make
from reference.backend import namespace_of, running_extreme
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.functions import pointwise as P
from reference.ops.functions.complex import conj_physical, real
from reference.ops.rule import (
    AUTO_LINEAR,
    BATCH_REDUCE,
)
from reference.ops.rules._curvature import (
    norm_curvature,
    prod_curvature,
    prod_partials,
    std_curvature,
    std_direction,
)
from reference.ops.rules._helpers import _count, _unreduce
from reference.ops.rules._sums import (
    centred,
    norm_ratio_power,
    on_host_float64,
    repair_prod,
    repair_sum,
    scaled_norm,
    scaled_std,
    scaled_var,
    softmax_over,
)
from reference.ops.rules._times import rounded
from reference.ops.rules.registry import from_rule, rule

# ---- rounding-error declarations (reference.errors) ----------------------------------------------


def _dims_of(dim, ndim):
    if dim is None or dim == ():
        return tuple(range(ndim))
    return tuple(d % ndim for d in (dim if isinstance(dim, (tuple, list)) else (dim,)))


def _largest_error_over_dim(e_in, params, outs):
    """The error of a selection along ``dim`` (max, median, kthvalue, sort, topk, cummax's prefix
    aside): order statistics are 1-Lipschitz in the max norm, so an output's error is at most the
    largest error among the values it was selected from (applying the op itself to the errors is
    wrong for a min or a median: the min of the errors is no bound)."""
    e = np.abs(np.asarray(e_in[0], dtype=np.float64))
    if e.ndim:
        e = np.max(e, axis=_dims_of(params.get("dim"), e.ndim), keepdims=True, initial=0.0)
    tracker = errors.active()
    if tracker is not None and tracker.p.flush:
        # a framework that reads subnormal inputs as zero (DAZ) may or may not flush a value it
        # only moves: either is right, within the smallest normal (eta under flush-to-zero)
        e = e + tracker.p.eta
    res = []
    for o in outs:
        shape = np.shape(o)
        res.append(
            np.broadcast_to(e.reshape(shape) if e.size == math.prod(shape) else np.max(e, initial=0.0), shape)
        )
    return res


#: a selection along ``dim`` (no arithmetic): the largest error among the candidates.
SELECTION_ERROR = errors.ErrorSpec(
    "gather",
    0.0,
    "values are selected, not computed; an order statistic moves by at most the largest input error",
    extra={"window": _largest_error_over_dim},
)
#: integer or boolean results (argmax, all, count_nonzero): nothing is rounded.
INTEGER_RESULT = errors.EXACT


def _reduce_dims(x, dim):
    return None if dim is None or dim == () else dim


def _prod_steps(x, dim=None, keepdim=False):
    """prod as a chain of products (any order has the same first-order bound: (n-1)·u·|y| plus the
    inputs' errors times the product of the others)."""
    if isinstance(dim, (tuple, list)) and len(dim) > 1:  # several dims (a batch rule's): one at a time
        dims = sorted((d % x.ndim for d in dim), reverse=True)
        out_shape = _reduced_shape(tuple(x.shape), tuple(dims), keepdim)
        for d in dims:
            x = _prod_steps(x, d)
        return A.reshape(x, out_shape)
    if isinstance(dim, (tuple, list)):
        dim = dim[0]
    if dim is None or dim == ():
        x, d = A.reshape(x, (-1,)), 0
    else:
        d = dim % max(x.ndim, 1)
    if x.ndim == 0:
        return x * 1.0
    n = x.shape[d]
    if n == 0:
        return A.sum(x, d, keepdim=keepdim) + 1.0
    acc = A.select(x, d, 0)
    for i in range(1, n):
        acc = acc * A.select(x, d, i)
    if keepdim and dim is not None and dim != ():
        acc = A.unsqueeze(acc, d)
    elif keepdim:
        acc = A.reshape(acc, (1,) * len(x.shape))
    return acc


def _var_steps(x, dim, correction, keepdim):
    """The two-pass variance: mean, centred squares, their sum, one division (Welford's update,
    PyTorch's CPU kernel, is bounded by the same first-order terms)."""
    dims = _reduce_dims(x, dim)
    n = _count(tuple(x.shape), None if dims is None else _dims_of(dims, x.ndim))
    xc = x - A.mean(x, dims, keepdim=True)
    return A.sum(xc * xc, dims, keepdim=keepdim) / max(n - correction, 0)


def _std_steps(x, dim, correction, keepdim):
    return A.sqrt(_var_steps(x, dim, correction, keepdim))


def _var_mean_steps(x, dim, correction, keepdim):
    return _var_steps(x, dim, correction, keepdim), A.mean(x, _reduce_dims(x, dim), keepdim=keepdim)


def _std_mean_steps(x, dim, correction, keepdim):
    return _std_steps(x, dim, correction, keepdim), A.mean(x, _reduce_dims(x, dim), keepdim=keepdim)


def _norm_steps(x, ord, dim, keepdim):
    """The p-norm as written: max/min of |x|, count, sum of |x|, sqrt of the sum of squares, or
    (sum |x|^p)^(1/p)."""
    dims = _reduce_dims(x, dim)
    a = A.abs(x)
    if ord == 0:
        return A.sum(A.to(a != 0, x.dtype), dims, keepdim=keepdim)
    if ord == math.inf:
        return A.amax(a, () if dims is None else dims, keepdim=keepdim)
    if ord == -math.inf:
        return A.amin(a, () if dims is None else dims, keepdim=keepdim)
    if ord == 1:
        return A.sum(a, dims, keepdim=keepdim)
    if ord == 2:
        return A.sqrt(A.sum(x * x, dims, keepdim=keepdim))
    return A.pow(A.sum(A.pow(a, ord), dims, keepdim=keepdim), 1.0 / ord)


def _logsumexp_steps(x, dim, keepdim):
    """max-shifted: m + log(sum(exp(x - m))), m the (finite) max, as every framework computes it."""
    dims = _reduce_dims(x, dim)
    m = A.amax(x, () if dims is None else dims, keepdim=True).detach()
    m = A.where(A.abs(m) < math.inf, m, A.zeros_like(m))
    out = A.log(A.sum(A.exp(x - m), dims, keepdim=True)) + m
    if keepdim:
        return out
    return A.reshape(out, _shape_without(tuple(x.shape), dims))


def _shape_without(shape, dims):
    keep = set(_dims_of(dims, len(shape))) if shape else set()
    return tuple(s for i, s in enumerate(shape) if i not in keep)


PROD_ERROR = errors.composite(_prod_steps, "a chain of products, 0.5 ulp each (IEEE)")
# PyTorch's CPU variance (std_var_kernel: Welford's update in at::opmath_type, float32 for half types)
# computes in the accumulator and rounds each result once: ``opmath`` (the centred squares of a float16
# input of magnitude 300 overflow float16, not float32; without it their bound was inf, and nan past
# the derivative's 0·inf)
_VAR_KERNEL = "PyTorch std_var_kernel (Welford in at::opmath_type)"
VAR_ERROR = errors.composite(
    _var_steps, f"two-pass variance: mean, centred squares, sum, division; {_VAR_KERNEL}", opmath=True
)
STD_ERROR = errors.composite(
    _std_steps, f"the variance's steps, then a correctly rounded sqrt; {_VAR_KERNEL}", opmath=True
)
VAR_MEAN_ERROR = errors.composite(
    _var_mean_steps, f"the variance's steps and the mean; {_VAR_KERNEL}", opmath=True
)
STD_MEAN_ERROR = errors.composite(
    _std_mean_steps, f"the standard deviation's steps and the mean; {_VAR_KERNEL}", opmath=True
)
NORM_ERROR = errors.composite(_norm_steps, "|x|, then max, count, sum, sqrt of a sum of squares or pow")
LOGSUMEXP_ERROR = errors.composite(_logsumexp_steps, "max-shifted exp, sum, log, add back the max")

# ---- reductions ----------------------------------------------------------------------------------

# aten's overloads: the full reduction (sum(x)) and the reduction over dims (sum(x, dim)).
for _suffix, _number in (("", "0"), ("_dim", "1")):
    rule(
        "sum" + _suffix,
        "SumBackward" + _number,
        ("self",),
        forward=lambda x, dim, keepdim: repair_sum(x, dim, K.sum_(x, dim, keepdim)),
        error=errors.products(),
        grads=(lambda c, g: _unreduce(g, c.shapes[0], c.dim, c.keepdim),),
        jvp=AUTO_LINEAR,
        batch=BATCH_REDUCE,
    )
    rule(
        "mean" + _suffix,
        "MeanBackward" + _number,
        ("self",),
        forward=lambda x, dim, keepdim: repair_sum(x, dim, K.mean(x, dim, keepdim), mean=True),
        error=errors.products(lambda arrays, p: _count(arrays[0].shape, p["dim"]) + 1),  # + the division
        grads=(lambda c, g: _unreduce(g, c.shapes[0], c.dim, c.keepdim) / _count(c.shapes[0], c.dim),),
        jvp=AUTO_LINEAR,
        batch=BATCH_REDUCE,
    )


def _extreme_jvp(c, ts):
    """amax/amin: the mean of the tangent over the elements that attain the extreme. The tangent is
    selected (PyTorch's amaxamin_jvp: where(mask, t, 0)), not multiplied by the mask: where a NaN
    attains the extreme no element equals it, the count is 0 and the JVP nan, while its derivative
    in the tangent is 0 (a product with the mask would give 0 * (g / 0) = nan)."""
    attains = _unreduce(c.result, c.shapes[0], c.dim, c.keepdim) == c.self
    picked = A.where(attains, ts[0], A.zeros_like(ts[0]))
    count = A.sum(A.to(attains, ts[0].dtype), c.dim, keepdim=c.keepdim)
    return A.sum(picked, c.dim, keepdim=c.keepdim) / count


for _name, _kernel, _node in (("amax", K.amax, "AmaxBackward0"), ("amin", K.amin, "AminBackward0")):
    rule(
        _name,
        _node,
        ("self",),
        forward=_kernel,
        error=SELECTION_ERROR,  # selects an element: at most the largest error among the candidates
        grads=(
            lambda c, g: A.scale_grad_by_count(
                _unreduce(g, c.shapes[0], c.dim, c.keepdim),
                _unreduce(c.result, c.shapes[0], c.dim, c.keepdim) == c.self,
                c.dim,
            ),
        ),
        saves={"self": (0,), "result": (0,)},
        jvp=_extreme_jvp,
        batch=BATCH_REDUCE,
    )


# ---- helpers shared by the reduction, scan and sorting families ------------------------------------


def _isnan(t):
    return t != t


def _as_tuple(dim, ndim):
    return tuple(range(ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)


def _over(x, dim):
    """``x`` with the dims ``dim`` (None: all) moved last and flattened into one (array level)."""
    dims = _as_tuple(dim, x.ndim)
    keep = [d for d in range(x.ndim) if d not in dims]
    y = x.transpose(keep + list(dims)) if x.ndim else x.reshape(1)
    return y.reshape(tuple(x.shape[d] for d in keep) + (-1,)), dims


def _reduced_shape(shape, dim, keepdim):
    dims = _as_tuple(dim, len(shape))
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


def _unreduce_any(g, shape, dim, keepdim):
    """_unreduce for dim None, an int or a tuple."""
    if dim is None:
        return _unreduce(g, shape, None, keepdim)
    return _unreduce(g, shape, _as_tuple(dim, len(shape)), keepdim)


def _sum_back(t, dim, keepdim):
    return A.sum(t, dim if dim is None else _as_tuple(dim, t.ndim), keepdim=keepdim)


def _batch_multi(b, params, key="dim"):
    """Batch rule of ops along ``params[key]`` (an int, a tuple or None for all dims) with one or
    several outputs: the batch dim first, the dims shifted by one."""
    nd = len(b.inputs[0].shape)
    if nd == 0 and isinstance(params[key], int):
        return _batch_scalar_samples(b, params, key)
    x = b.expanded(0)
    dim = params[key]
    if dim is None:
        dim = tuple(range(1, nd + 1)) if params.get("_all_ok", True) else None
    elif isinstance(dim, int):
        dim = dim + 1 if nd else 1
    else:
        dim = tuple(d + 1 for d in dim)
    args = (x,) + tuple(b.expanded(i) for i in range(1, len(b.inputs)) if b.inputs[i] is not None)
    out = apply(b.rule, args, {**params, key: dim}, cast=b.cast)
    return tuple((o, 0) for o in out) if isinstance(out, tuple) else (out, 0)


def _batch_scalar_samples(b, params, key="dim"):
    """A 0-d logical input along ``dim`` (0 or -1, PyTorch's one allowed dim of a scalar): every
    0-d logical input becomes ``(B, 1)``, the op runs along dim 1 with ``keepdim=True`` (where it
    has one), and every output drops that unit dim again: each sample is a one-element slice, as
    functorch's batch rules handle logical rank 0."""
    args = tuple(
        None if t is None else (A.unsqueeze(b.expanded(i), -1) if len(t.shape) == 0 else b.expanded(i))
        for i, t in enumerate(b.inputs)
    )
    new = {**params, key: 1}
    if "keepdim" in new:
        new["keepdim"] = True
    out = apply(b.rule, args, new, cast=b.cast)
    if isinstance(out, tuple):
        return tuple((A.squeeze(o, -1), 0) for o in out)
    return A.squeeze(out, -1), 0


# ---- nansum, prod ------------------------------------------------------------------------------------


def nansum_kernel(x, dim, keepdim):
    xp = namespace_of(x)
    return xp.nansum(x, axis=dim, keepdims=keepdim).astype(x.dtype, copy=False)


rule(
    "nansum",
    "NansumBackward0",
    ("self",),
    forward=nansum_kernel,
    grads=(lambda c, g: A.masked_fill(_unreduce_any(g, c.shapes[0], c.dim, c.keepdim), _isnan(c.self), 0.0),),
    saves={"self": (0,)},
    jvp=(lambda c, t: _sum_back(A.masked_fill(t, _isnan(c.self), 0.0), c.dim, c.keepdim),),
    batch=BATCH_REDUCE,
    error=errors.products(),
)


def prod_kernel(x, dim, keepdim):
    xp = namespace_of(x)
    if on_host_float64(x) and x.ndim and (dim is None or isinstance(dim, int)):
        # no intermediate overflow or underflow (issue 38: reference/ops/rules/_sums.py)
        flat = x.reshape(-1) if dim is None else x
        axis = 0 if dim is None else dim
        out = repair_prod(flat, axis, np.prod(flat, axis=axis, keepdims=True))
        return out.reshape((1,) * x.ndim if keepdim else ()) if dim is None else (out if keepdim else np.squeeze(out, axis))
    return xp.prod(x, axis=dim, keepdims=keepdim)


def _flip(t, dim):
    """``t`` reversed along ``dim`` (a differentiable index_select)."""
    n = t.shape[dim]
    return from_rule(
        "index_select", t, _make(namespace_of(t._data).arange(n - 1, -1, -1, dtype=np.int64)), dim=dim
    )


def _exclusive_cumprod(t, dim):
    """prod_{i<k} t_i along ``dim`` (1 at k = 0), differentiable."""
    n = t.shape[dim]
    ones = A.ones(tuple(1 if d == dim else s for d, s in enumerate(t.shape)), dtype=t.dtype, device=t.device)
    if n <= 1:
        return A.expand(ones, t.shape)
    return from_rule("cumprod", A.cat([ones, A.narrow(t, dim, 0, n - 1)], dim), dim=dim)


def _prod_of_others(t, dim):
    """prod_{i != k} t_i along ``dim``: PyTorch's prod_safe_zeros_backward (exclusive products from
    both ends), correct with zeros and differentiable to any order."""
    if t.numel() == 0:
        return A.ones_like(t)
    return _exclusive_cumprod(t, dim) * _flip(_exclusive_cumprod(_flip(t, dim), dim), dim)


def _no_zero_and_finite(t) -> bool:
    """Every element of ``t`` (of a whole batch under vmap) non-zero and finite."""
    xp = namespace_of(t._data)
    return bool(xp.all(t._data != 0)) and bool(xp.all(xp.isfinite(t._data)))


def _finite_on_host(x):
    """float64 on the host with finite factors (issue 38): prod's partials are the products of the
    others (no result / x: inf / 1e300 at [1e300, 1e10], exact 1e10), without intermediate overflow."""
    return x.ndim > 0 and x.dtype.kind == "f" and on_host_float64(x._data) and bool(np.isfinite(x._data).all())


def _prod_grad(c, g):
    x = c.self
    shape = c.shapes[0]
    if len(shape) == 0:
        return g
    result = getattr(c, "result", None)
    exact = _finite_on_host(x)
    if not exact and result is not None and x.numel() and _no_zero_and_finite(x):
        # PyTorch's prod_backward without zeros: grad * (result / input), whose roundings (and the
        # rounding residue of its double backward, where the exact second derivative may be 0)
        # the error tracker then sees; with a zero (or, the reference's exact choice, an inf or
        # nan: torch-prod-gradient-at-an-infinite-element-is-nan) the products of the others
        return _unreduce_any(g, shape, c.dim, c.keepdim) * (
            _unreduce_any(result, shape, c.dim, c.keepdim) / x
        )
    dims = _as_tuple(c.dim, len(shape))
    keep = [d for d in range(len(shape)) if d not in dims]
    perm = keep + list(dims)
    # the reduced dims flattened into one (their size spelled out: -1 is ambiguous when a kept dim is 0)
    reduced = math.prod(shape[d] for d in dims)
    flat = A.reshape(A.permute(x, perm), tuple(shape[d] for d in keep) + (reduced,))
    # float64 on the host, finite factors (issue 38): the primitive prod_partials, whose derivative is
    # the Hessian, one primitive (PyTorch's (result / x_k) / x_l overflowed at [1e200, 1e200, 1e-200]
    # where it is 1e200, and d(result / x_k)/dx_k kept a rounding residue where it is 0)
    if exact:
        others = from_rule("prod_partials", flat, dim=(flat.ndim - 1,))
    else:
        others = _prod_of_others(flat, flat.ndim - 1)
    others = A.reshape(others, tuple(shape[d] for d in perm))
    inv = [perm.index(d) for d in range(len(shape))]
    others = A.permute(others, inv)
    return _unreduce_any(g, shape, c.dim, c.keepdim) * others


def _prod_jvp(c, t):
    class _C:
        pass

    ctx = _C()
    ctx.self, ctx.shapes, ctx.dim, ctx.keepdim = c.self, c.shapes, c.dim, True
    partial = _prod_grad(
        ctx, A.ones(_reduced_shape(c.shapes[0], c.dim, True), dtype=c.self.dtype, device=c.self.device)
    )
    x = c.self
    if x.ndim and on_host_float64(x._data) and bool(np.isfinite(x._data).all()):
        # float64 on the host, finite factors (issue 38): every partial is a finite real, and a zero
        # tangent contributes 0 (not 0·inf = nan where the partial overflows: prod([1e200, 1e200,
        # 1e-200])'s third partial is 1e400). Only there: elsewhere partial * t stays, so the JVP's
        # derivative in a zero tangent is still the partial (reverse over forward)
        lost = A.logical_and(t == 0, A.logical_not(A.abs(partial) < math.inf))
        return _sum_back(A.where(lost, A.zeros_like(partial), partial * t), c.dim, c.keepdim)
    return _sum_back(partial * t, c.dim, c.keepdim)


def _hessian_product_rule(name, forward, third, product, pytorch, what, alternatives=()):
    """A Hessian-times-tangent primitive (self, tangent): linear and symmetric in the tangent (its
    VJP and JVP there are itself), ``third`` the third derivative contracted with the tangent;
    ``alternatives``: other formulas frameworks evaluate, whose roundings the bound covers too."""
    rule(
        name,
        "DivBackward0",  # the outermost op of PyTorch's double backward
        ("self", "tangent"),
        forward=forward,
        grads=(third, product),
        saves={"self": (0, 1), "tangent": (0,), "result": (0,)},
        jvp=(third, product),
        batch=_batch_multi,
        error=errors.composite(pytorch, what, alternatives=alternatives),
    )


def _prod_third(c, G):
    """prod's third derivative contracted with G and the tangent t: at m, Σ G_k·t_l·Π_{i≠k,l,m} x_i
    over k ≠ l (both ≠ m): the Hessian product of x with x_m replaced by 1 and G_m, t_m by 0,
    for every m at once (an n × n batch of rows; third order is not measured)."""
    x, t, dim = c.self, c.tangent, c.dim[0]
    n = x.shape[dim]
    eye = _make(namespace_of(x._data).eye(n, dtype=bool))
    rows = [_movedim_last(a, dim) for a in (x, G, t)]
    full = tuple(rows[0].shape) + (n,)
    one, zero = A.ones((), dtype=x.dtype, device=x.device), A.zeros((), dtype=x.dtype, device=x.device)
    y, gm, tm = (A.where(eye, v, A.expand(A.unsqueeze(r, -2), full)) for r, v in zip(rows, (one, zero, zero)))
    third = A.sum(gm * from_rule("prod_curvature", y, tm, dim=(y.ndim - 1,)), -1)
    return _movedim_last(third, dim, back=True)


def _movedim_last(t, dim, back=False):
    order = list(range(t.ndim))
    if back:
        order.insert(dim, order.pop())
    else:
        order.append(order.pop(dim))
    return A.permute(t, tuple(order))


def _prod_curvature_pytorch(x, t, dim):
    """The same along PyTorch's formulas: the products of the others of x with x_k replaced by 1."""
    n = x.shape[dim[0]]
    xl = _movedim_last(x, dim[0])
    eye = _make(namespace_of(x._data).eye(n, dtype=bool))
    y = A.where(eye, A.ones((), dtype=x.dtype), A.expand(A.unsqueeze(xl, -2), tuple(xl.shape) + (n,)))
    table = A.where(eye, A.zeros((), dtype=x.dtype), _prod_of_others(y, y.ndim - 1))
    return _movedim_last(A.sum(table * A.unsqueeze(_movedim_last(t, dim[0]), -2), -1), dim[0], back=True)


def _product_in_range(x, dim):
    """prod(x) along dim (keepdim) where every factor is finite and non-zero and the float64 products
    are normal numbers (the division formulas below are defined there), else None."""
    if not _no_zero_and_finite(x):
        return None
    result = from_rule("prod_dim", x, dim=dim, keepdim=True)
    with np.errstate(invalid="ignore"):
        normal = np.isfinite(result._data) & (np.abs(result._data) >= 2.2250738585072014e-308)
    return result if bool(normal.all()) else None


def _prod_partials_by_division(x, dim):
    """PyTorch's prod_backward without zeros, result / x (TensorFlow's and cumprod's gradients
    divide too: their roundings are covered, docs/conformance.md "Cancellation in a formula the
    reference short-cuts"); elsewhere the products of the others."""
    result = _product_in_range(x, dim[0])
    return _prod_of_others(x, dim[0]) if result is None else result / x


def _prod_curvature_by_division(x, t, dim):
    """The derivative of result / x in the direction t: (Σ_l t_l·result/x_l)/x_k - result·t_k/x_k²,
    whose two terms in t_k cancel only up to rounding where the exact diagonal is 0 (TensorFlow's
    cumprod, float16 [0.21, 0.92] along dim 0: 2.4e-4 where it is 2.1e-6); elsewhere the products
    of the others."""
    result = _product_in_range(x, dim[0])
    if result is None:
        return _prod_curvature_pytorch(x, t, dim)
    along = A.sum(t * (result / x), dim[0], keepdim=True)
    return along / x - (result * t) / (x * x)


rule(
    "prod_partials",
    "MulBackward0",  # the outermost op of PyTorch's prod_safe_zeros_backward
    ("self",),
    forward=lambda x, dim: prod_partials(x, dim),
    grads=(lambda c, gg: from_rule("prod_curvature", c.self, gg, dim=c.dim),),
    saves={"self": (0,)},
    jvp=(lambda c, t: from_rule("prod_curvature", c.self, t, dim=c.dim),),  # the Hessian is symmetric
    batch=_batch_multi,
    error=errors.composite(
        lambda x, dim: _prod_of_others(x, dim[0]),
        "PyTorch's products of the others",
        alternatives=(_prod_partials_by_division,),
    ),
)
_hessian_product_rule(
    "prod_curvature",
    lambda x, t, dim: prod_curvature(x, t, dim),
    _prod_third,
    lambda c, gg: from_rule("prod_curvature", c.self, gg, dim=c.dim),
    _prod_curvature_pytorch,
    "PyTorch's double backward of prod",
    alternatives=(_prod_curvature_by_division,),
)


for _name, _node in (("prod", "ProdBackward0"), ("prod_dim", "ProdBackward1")):
    rule(
        _name,
        _node,
        ("self",),
        forward=prod_kernel,
        grads=(_prod_grad,),
        saves={"self": (0,), "result": (0,)},
        jvp=(_prod_jvp,),
        batch=BATCH_REDUCE if _name == "prod" else _batch_multi,
        error=PROD_ERROR,
    )

# ---- var, std, var_mean, std_mean ----------------------------------------------------------------------


def var_kernel(x, dim, correction, keepdim):
    """mean(|x - mean|^2) with N - correction degrees of freedom; real for a complex x (PyTorch)."""
    xp = namespace_of(x)
    if on_host_float64(x):  # scaled by 2^-e: no overflow (issue 38)
        return scaled_var(x, dim, correction, keepdim)
    return xp.var(x, axis=dim, ddof=correction, keepdims=keepdim).astype(A.to_real(x.dtype), copy=False)


def std_kernel(x, dim, correction, keepdim):
    xp = namespace_of(x)
    if on_host_float64(x):
        return scaled_std(x, dim, correction, keepdim)
    return xp.sqrt(var_kernel(x, dim, correction, keepdim))


def _two_over_dof(n, correction):
    """2 / (N - correction); inf (not a ZeroDivisionError) when no degrees of freedom are left."""
    dof = max(n - correction, 0)
    return 2.0 / dof if dof else math.inf


def _centred(x, dim):
    """x - mean(x) over ``dim`` (kept): in float64 on the host the primitive ``centred`` (exact:
    _sums.centred), elsewhere PyTorch's Tensor formula."""
    if x.ndim and x.dtype.kind == "f" and on_host_float64(x._data):
        return from_rule("centred", x, dim=_dims_of(dim, x.ndim))
    return x - A.mean(x, dim, keepdim=True)


def _var_back(g, c):
    n = _count(c.shapes[0], None if c.dim is None else _as_tuple(c.dim, len(c.shapes[0])))
    g = _unreduce_any(g, c.shapes[0], c.dim, c.keepdim)
    return _two_over_dof(n, c.correction) * g * _centred(c.self, c.dim)


def _exact_std(c):
    return c.self.ndim and c.self.dtype.kind == "f" and on_host_float64(c.self._data)


def _std_back(g, c, std):
    if not _exact_std(c):
        return _var_back(A.masked_fill(g / (std * 2), std == 0, 0.0), c)
    # float64 on the host (issue 38): g times std's gradient c/(dof·σ), the primitive std_direction
    # (whose derivative is the whole Hessian, one primitive: PyTorch's (g/2σ)·(x - mean) sums a path
    # through x and one through the saved σ, which cancel, and (g/2σ)/2σ overflowed at σ = 1e-200);
    # where σ = 0 PyTorch's form itself, for its values (0, and nan in the derivative in g). Each
    # branch divides by 1 in the other's rows. Where σ is nan (no degrees of freedom left: 0/0) PyTorch's
    # form too: its nan (std_direction's 0 there hid it behind a nan bound: a torch nan failed once the
    # judge read nan bounds strictly).
    zero = std == 0
    theirs = _pytorch_rows(std)
    pytorch = _var_back(A.masked_fill(g / (A.where(theirs, std, A.ones_like(std)) * 2), zero, 0.0), c)
    exact = _unreduce_any(g, c.shapes[0], c.dim, c.keepdim) * _std_direction(c.self, c.dim, c.correction)
    return A.where(_unreduce_any(theirs, c.shapes[0], c.dim, c.keepdim), pytorch, exact)


def _pytorch_rows(std):
    """The rows where std's derivatives take PyTorch's formula itself: σ = 0 (its masked 0) or σ nan."""
    return (std == 0) | (std != std)


def _std_direction(x, dim, correction):
    return from_rule("std_direction", x, dim=_dims_of(dim, x.ndim), correction=correction)


def _std_curvature(x, t, dim, correction):
    return from_rule("std_curvature", x, t, dim=dim, correction=correction)


def _var_jvp(c, t):
    """sum(Re(conj(t) (x - mean))) · 2/(N - correction) (PyTorch's var_jvp; t (x - mean) when real)."""
    n = _count(c.shapes[0], None if c.dim is None else _as_tuple(c.dim, len(c.shapes[0])))
    return _sum_back(_re_conj_mul(t, _centred(c.self, c.dim)), c.dim, c.keepdim) * (
        _two_over_dof(n, c.correction)
    )


def _re_conj_mul(t, x):
    """Re(conj(t) x): the real pairing of a complex tangent with a complex partial (t x when real)."""
    if t.dtype.kind != "c" and x.dtype.kind != "c":
        return x * t

    return real(conj_physical(t) * x)


def _std_jvp(c, t):
    if not _exact_std(c):
        return A.masked_fill(_var_jvp(c, t) / (c.result * 2), c.result == 0, 0.0)
    zero, theirs = c.result == 0, _pytorch_rows(c.result)  # as _std_back
    pytorch = A.masked_fill(_var_jvp(c, t) / (A.where(theirs, c.result, A.ones_like(c.result)) * 2), zero, 0.0)
    exact = _sum_back(t * _std_direction(c.self, c.dim, c.correction), c.dim, c.keepdim)
    return A.where(theirs, pytorch, exact)


rule(
    "var",
    "VarBackward0",
    ("self",),
    forward=var_kernel,
    grads=(lambda c, g: _var_back(g, c),),
    complex_grads="explicit",  # PyTorch's formulas, valid for complex input (real output)
    saves={"self": (0,)},
    jvp=(_var_jvp,),
    batch=BATCH_REDUCE,
    error=VAR_ERROR,
)
rule(
    "std",
    "StdBackward0",
    ("self",),
    forward=std_kernel,
    grads=(lambda c, g: _std_back(g, c, c.result),),
    complex_grads="explicit",  # PyTorch's formulas, valid for complex input (real output)
    saves={"self": (0,), "result": (0,)},
    jvp=(_std_jvp,),
    batch=BATCH_REDUCE,
    error=STD_ERROR,
)


# x - mean(x): linear, its own transpose (the VJP and the JVP centre the cotangent or tangent)
rule(
    "centred",
    "SubBackward0",  # the outermost op of PyTorch's x - mean(x)
    ("self",),
    forward=lambda x, dim: centred(x, dim),
    grads=(lambda c, gg: _centred(gg, c.dim),),
    jvp=AUTO_LINEAR,
    batch=_batch_multi,
    error=errors.composite(lambda x, dim: x - A.mean(x, dim, keepdim=True), "PyTorch's x - mean(x)"),
)


def _dof(x, dim, correction):
    return max(_count(tuple(x.shape), dim) - correction, 0)


def _saved_std(x, dim, correction):
    """σ as PyTorch's backward formulas read it: the forward's saved result, computed by std's own
    kernel (in the accumulator for half types: STD_ERROR's ``opmath``), not re-derived from Σ(x - mean)²
    in the dtype (a float16 sum of squares of 128 inputs near 100 overflows, σ = 54 does not)."""
    return from_rule("std", x, dim=_dims_of(dim, x.ndim), correction=correction, keepdim=True)


def _two_over_dof_of(x, dim, correction):
    """2 / dof of x's reduction over ``dim``; inf where no degrees of freedom are left."""
    dof = _dof(x, dim, correction)
    return 2.0 / dof if dof else math.inf


def _std_direction_pytorch(x, dim, correction):
    """PyTorch's factor of std's VJP, in its order: var_backward(1 / (σ·2)) = ((2/dof)·(1/(σ·2)))·(x -
    mean), σ the saved result (no product dof·σ, which leaves a half dtype's range long before σ
    does: σ = 1202 over 93 inputs)."""
    two = _two_over_dof_of(x, dim, correction)
    return (two * (1.0 / (_saved_std(x, dim, correction) * 2))) * (x - A.mean(x, dim, keepdim=True))


def _std_curvature_pytorch(x, t, dim, correction):
    """The same Hessian product along PyTorch's formulas, op by op: the forward-mode derivative of
    var_backward(g / r2), r2 = σ·2 the saved result doubled, for g = 1 along t: dσ = std_jvp(t) =
    (Σ t·c · 2/dof) / r2 (c = x - mean), the quotient's tangent -(2·dσ)·((1/r2)/r2) (PyTorch's div
    JVP), then (2/dof)·(that·c + (1/r2)·(t - mean(t))). No Σc² = dof·σ² (a half dtype cannot hold it
    where σ > 256, PyTorch never forms it)."""
    two = _two_over_dof_of(x, dim, correction)
    c = x - A.mean(x, dim, keepdim=True)
    r2 = _saved_std(x, dim, correction) * 2
    gp = 1.0 / r2
    dsigma = (A.sum(t * c, dim, keepdim=True) * two) / r2
    return two * (-((dsigma * 2) * (gp / r2)) * c + gp * (t - A.mean(t, dim, keepdim=True)))


def _std_curvature_products(x, t, dim, correction):
    """The same with PyTorch's product rule for (2/dof)·g·(x - mean): the factor (2/dof)·(g/r2) and its
    tangent formed first, then each times its partner ((a·c)' = a'·c + a·c'), the order the mul JVP
    takes; both orders' roundings are covered (a float16 vmap_jvp_vjp of torch rounded 1.11 times past
    the first order's bound alone)."""
    two = _two_over_dof_of(x, dim, correction)
    c = x - A.mean(x, dim, keepdim=True)
    r2 = _saved_std(x, dim, correction) * 2
    gp = 1.0 / r2
    dsigma = (A.sum(t * c, dim, keepdim=True) * two) / r2
    return (two * -((dsigma * 2) * (gp / r2))) * c + (two * gp) * (t - A.mean(t, dim, keepdim=True))


def _std_third(c, G):
    """The third derivative of std contracted with G and the tangent (symmetric in all three: the
    x-derivative of G·(H·t), and of H·t along G): with v = x - mean, R = Σv², a = 1/sqrt(dof·R),
    h = H·t, centred(a·(2v(G·v)(v·t)/R - G(v·t) - t(G·v))/R - v(G·h)/R). PyTorch's formulas
    (third order is not measured)."""
    dim, t, h = c.dim, c.tangent, c.result
    v = _centred(c.self, dim)
    r = A.sum(v * v, dim, keepdim=True)
    zero = r == 0
    r = A.where(zero, A.ones_like(r), r)
    a = A.where(zero, A.zeros_like(r), 1 / A.sqrt(r * _dof(c.self, dim, c.correction)))
    vt, gv, gh = (A.sum(p * q, dim, keepdim=True) for p, q in ((v, t), (G, v), (G, h)))
    return _centred(a * (2 * v * gv * vt / r - G * vt - t * gv) / r - v * gh / r, dim)


rule(
    "std_direction",
    "DivBackward0",  # the outermost op of PyTorch's (x - mean)/(dof·std)
    ("self",),
    forward=lambda x, dim, correction: std_direction(x, dim, correction),
    grads=(lambda c, gg: _std_curvature(c.self, gg, c.dim, c.correction),),
    saves={"self": (0,)},
    jvp=(lambda c, t: _std_curvature(c.self, t, c.dim, c.correction),),  # the Hessian is symmetric
    batch=_batch_multi,
    error=errors.composite(_std_direction_pytorch, "PyTorch's (x - mean)/(dof·std)"),
)


_hessian_product_rule(
    "std_curvature",
    lambda x, t, dim, correction: std_curvature(x, t, dim, correction),
    _std_third,
    lambda c, gg: _std_curvature(c.self, gg, c.dim, c.correction),
    _std_curvature_pytorch,
    "PyTorch's double backward of std",
    alternatives=(_std_curvature_products,),
)


def _mean_back(g, c):
    return _unreduce_any(g, c.shapes[0], c.dim, c.keepdim) / _count(
        c.shapes[0], None if c.dim is None else _as_tuple(c.dim, len(c.shapes[0]))
    )


rule(
    "var_mean",
    "VarMeanBackward0",
    ("self",),
    forward=lambda x, dim, correction, keepdim: (
        var_kernel(x, dim, correction, keepdim),
        namespace_of(x).mean(x, axis=dim, keepdims=keepdim),
    ),
    outputs=2,
    grads=(lambda c, g: _var_back(g[0], c) + _mean_back(g[1], c),),
    complex_grads="explicit",  # PyTorch's formulas, valid for complex input (real output)
    saves={"self": (0,)},
    jvp=lambda c, ts: (_var_jvp(c, ts[0]), _sum_back(ts[0], c.dim, c.keepdim) / _count_c(c)),
    batch=_batch_multi,
    error=VAR_MEAN_ERROR,
)
rule(
    "std_mean",
    "StdMeanBackward0",
    ("self",),
    forward=lambda x, dim, correction, keepdim: (
        std_kernel(x, dim, correction, keepdim),
        namespace_of(x).mean(x, axis=dim, keepdims=keepdim),
    ),
    outputs=2,
    grads=(lambda c, g: _std_back(g[0], c, c.result) + _mean_back(g[1], c),),
    complex_grads="explicit",  # PyTorch's formulas, valid for complex input (real output)
    saves={"self": (0,), "result": (0,)},
    jvp=lambda c, ts: (
        A.masked_fill(_var_jvp(c, ts[0]) / (c.result[0] * 2), c.result[0] == 0, 0.0),
        _sum_back(ts[0], c.dim, c.keepdim) / _count_c(c),
    ),
    batch=_batch_multi,
    error=STD_MEAN_ERROR,
)


def _count_c(c):
    return _count(c.shapes[0], None if c.dim is None else _as_tuple(c.dim, len(c.shapes[0])))


# ---- linalg.vector_norm ---------------------------------------------------------------------------------


def vector_norm_kernel(x, ord, dim, keepdim):
    xp = namespace_of(x)
    a = xp.abs(x)
    if ord == 0:
        return xp.sum(a != 0, axis=dim, keepdims=keepdim).astype(a.dtype)
    if ord == math.inf:
        return xp.amax(a, axis=dim, keepdims=keepdim)
    if ord == -math.inf:
        return xp.amin(a, axis=dim, keepdims=keepdim)
    if ord == 1:
        return xp.sum(a, axis=dim, keepdims=keepdim)
    if on_host_float64(a) and a.ndim:  # scaled by 2^-e (issue 38)
        return scaled_norm(a, ord, dim, keepdim)
    if ord == 2:
        return xp.sqrt(xp.sum(a * a, axis=dim, keepdims=keepdim))
    with np.errstate(divide="ignore"):
        return (xp.sum(a**ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)).astype(a.dtype, copy=False)


def _norm_grad(c, g):
    """PyTorch's linalg_vector_norm_backward: each ord's formula, 0 where PyTorch masks it."""
    x, p = c.self, c.ord
    sign = _sgn if x.dtype.kind == "c" else A.sign  # PyTorch's formula reads sgn (sign for real x)
    norm = _unreduce_any(c.result, c.shapes[0], c.dim, c.keepdim)
    g = _unreduce_any(g, c.shapes[0], c.dim, c.keepdim)
    if p == 0:
        return A.zeros_like(x)
    if p == 1:
        return sign(x) * g
    if p > 1 and not math.isinf(p) and x.ndim and x.dtype.kind == "f" and on_host_float64(x._data):
        return _exact_norm_grad(x, norm, g, p, _dims_of(c.dim, x.ndim))
    if math.isinf(p):
        ax = A.abs(x)
        mask = A.to(A.logical_or(ax == norm, _isnan(ax)), x.dtype)
        return sign(x) * ((g / _unreduce_any(_sum_back(mask, c.dim, True), c.shapes[0], c.dim, True)) * mask)
    if p < 1:
        scaled = A.masked_fill(sign(x) * A.pow(A.abs(x), p - 1), x == 0, 0.0)
        return scaled * g * A.pow(norm, 1 - p)
    return _pytorch_norm_grad(x, norm, g, p, sign)


def _pytorch_norm_grad(x, norm, g, p, sign):
    """PyTorch's formulas for 1 < p < inf."""
    if p == 2:
        return g * A.masked_fill(x / norm, norm == 0, 0.0)  # PyTorch: grad * (self / norm).masked_fill_(...)
    if p < 2:
        scaled = sign(x) * A.pow(A.abs(x), p - 1)
        return scaled * A.masked_fill(g / A.pow(norm, p - 1), norm == 0, 0.0)
    scaled = x * A.pow(A.abs(x), p - 2)
    return scaled * A.masked_fill(g / A.pow(norm, p - 1), norm == 0, 0.0)


def _exact_norm_grad(x, norm, g, p, dims):
    """float64 on the host (issue 38): g·sign(x)·(|x|/norm)^(p - 1), the factor the primitive
    norm_ratio_power (scaled: no overflow at 1e200s, no division by a norm rounded in the subnormal
    range); where the norm is 0, PyTorch's formula, for its values there (its 0 and the nan or 0
    of its derivatives). Each branch reads 1 for x and the norm in the other's rows, so neither
    forms 0·inf in them."""
    zero = norm == 0
    one = A.ones_like(norm)
    pytorch = _pytorch_norm_grad(A.where(zero, x, A.ones_like(x)), A.where(zero, norm, one), g, p, A.sign)
    unit = _norm_ratio_power(x, A.where(zero, one, norm), p, dims, p - 1, True)
    return A.where(zero, pytorch, g * unit)


def _norm_ratio_power(x, norm, ord, dims, power, signed):
    return from_rule("norm_ratio_power", x, norm, ord=ord, dim=dims, power=power, signed=signed)


def _norm_curvature(x, t, ord, dim):
    return from_rule("norm_curvature", x, t, ord=ord, dim=dim)


def _norm_third(c, G):
    """The third derivative of the p-norm N contracted with G and the tangent t (symmetric: the
    x-derivative of G·(H·t), and of H·t along G): with r = |x|/N, u = sign(x)·r^(p - 1), h = H·t,
    -u(G·h)/N + (p - 1)/N·((p - 2)/N·(G·t·sign(x)·r^(p - 3) - u·Σ G·t·r^(p - 2)) - (H·G)(u·t) - (u·G)h).
    PyTorch's formulas (third order is not measured)."""
    x, t, h, p, dim = c.self, c.tangent, c.result, c.ord, c.dim
    norm = from_rule("linalg_vector_norm", x, ord=p, dim=dim, keepdim=True)
    zero = norm == 0
    norm = A.where(zero, A.ones_like(norm), norm)
    r = A.abs(x) / norm
    u = A.sign(x) * A.pow(r, p - 1)
    ut, ug, gh = (A.sum(a * b, dim, keepdim=True) for a, b in ((u, t), (u, G), (G, h)))
    out = -u * gh / norm - (p - 1) * (_norm_curvature(x, G, p, dim) * ut + ug * h) / norm
    if p != 2:
        gt = G * t
        own = A.sign(x) * gt * A.pow(r, p - 3) - u * A.sum(gt * A.pow(r, p - 2), dim, keepdim=True)
        out = out + (p - 1) * (p - 2) * own / (norm * norm)
    return A.where(zero, A.zeros_like(out), out)


def _norm_ratio_power_pytorch(x, n, ord, dim, power, signed):
    """PyTorch's formula for the same factor: x / norm (p = 2), x·|x|^(p - 2) / norm^(p - 1)."""
    if power == 1 and signed:
        return x / n
    mag = A.pow(A.abs(x), power) / A.pow(n, power)
    return A.sign(x) * mag if signed else mag


def _norm_jvp(c, t):
    if c.ord == 0:
        return A.zeros_like(c.result)
    partial = _norm_grad(c, A.ones_like(c.result))
    x = c.self
    if 1 < c.ord < math.inf and x.ndim and x.dtype.kind == "f" and on_host_float64(x._data) and bool(np.isfinite(x._data).all()):
        # float64 on the host, finite x (issue 38): every partial, and every second partial, is a finite
        # real, so a zero tangent contributes 0 (not 0·inf = nan where a second partial overflows:
        # the 2-norm's at [5e-324, 1e-320] is -4.9e316 off the diagonal). The partial is held
        # constant there, not zeroed: the JVP is linear in t, so its derivative in a zero tangent is
        # still the partial (reverse over forward; seed-3 seeded reductions, vjp_jvp: -0.0 where all
        # three frameworks give the 2-norm's sign(x) * c, -0.556)
        return _sum_back(A.where(t == 0, partial.detach(), partial) * t, c.dim, c.keepdim)
    return _sum_back(_re_conj_mul(t, partial), c.dim, c.keepdim)


def _sgn(x):
    return P.sgn(x)  # (generated from rules.pointwise's EXPORTS)


rule(
    "linalg_vector_norm",
    "LinalgVectorNormBackward0",
    ("self",),
    forward=vector_norm_kernel,
    grads=(_norm_grad,),
    complex_grads="explicit",  # PyTorch's formulas, valid for complex input (real output)
    saves={"self": (0,), "result": (0,)},
    jvp=(_norm_jvp,),
    batch=BATCH_REDUCE,
    error=NORM_ERROR,
)

rule(
    "norm_ratio_power",
    "DivBackward0",  # the outermost op of PyTorch's formula
    ("self", "norm"),
    forward=lambda x, n, ord, dim, power, signed: norm_ratio_power(x, ord, dim, power, signed),
    # the p-norm's gradient (power p - 1, signed: its one use): the whole Hessian to x, the primitive
    # norm_curvature; the norm (the saved result, read for PyTorch's node) gets none, its dependence
    # on x is in the Hessian (PyTorch's double backward sums the paths through x and the norm, which
    # cancel where |x_k| is the norm: [1, 1e-20, -1e-10] gave 0, exact 1e-20)
    grads=(lambda c, gg: _norm_curvature(c.self, gg, c.ord, c.dim), None),
    jvp=(lambda c, t: _norm_curvature(c.self, t, c.ord, c.dim), None),  # the Hessian is symmetric
    saves={"self": (0,)},
    batch=_batch_multi,
    error=errors.composite(_norm_ratio_power_pytorch, "PyTorch's x·|x|^(p - 2) / norm^(p - 1)"),
)


def _norm_curvature_pytorch(x, t, ord, dim):
    """The same Hessian product along PyTorch's formulas: (p - 1)/N·(|x/N|^(p - 2)·t - u·(u·t))."""
    norm = A.sum(A.pow(A.abs(x), ord), dim, keepdim=True) ** (1.0 / ord)
    r = A.abs(x) / norm
    u = A.sign(x) * A.pow(r, ord - 1)
    return (ord - 1) * (A.pow(r, ord - 2) * t - u * A.sum(u * t, dim, keepdim=True)) / norm


_hessian_product_rule(
    "norm_curvature",
    lambda x, t, ord, dim: norm_curvature(x, t, ord, dim),
    _norm_third,
    lambda c, gg: _norm_curvature(c.self, gg, c.ord, c.dim),
    _norm_curvature_pytorch,
    "PyTorch's double backward of the p-norm",
)

# ---- logsumexp ------------------------------------------------------------------------------------------


def logsumexp_kernel(x, dim, keepdim):
    xp = namespace_of(x)
    if x.size == 0:
        return xp.log(xp.sum(xp.exp(x), axis=dim, keepdims=keepdim))
    # complex input: the shift is the largest real part (aten's logsumexp_out_impl: amax(real(self)))
    m = xp.amax(x.real if x.dtype.kind == "c" else x, axis=dim, keepdims=True)
    m = xp.where(xp.isinf(m), xp.zeros((), dtype=m.dtype), m)
    if on_host_float64(x):
        out = _exact_logsumexp(x, m, dim)
    else:
        out = xp.log(xp.sum(xp.exp(x - m), axis=dim, keepdims=True)) + m
    return out if keepdim else xp.squeeze(out, axis=dim)


def _exact_logsumexp(x, m, dim):
    """m + log(sum(exp(x - m))) with the log as :func:`reference.ops.kernels.log_sum_shifted`
    (log1p of the others' sum: logsumexp([0, -40]) was 0, exact 4.2e-18); the rows where m and the
    log cancel (|result| < |m|/2: logsumexp([-log 2, -log 2]) ~ 1e-17) in mpmath (2400 bits)."""
    axes = _dims_of(dim, x.ndim)
    out = K.log_sum_shifted(np.exp(x - m), axes) + m
    bad = np.isfinite(out) & (np.abs(out) < 0.5 * np.abs(m))
    if bad.any():
        rows = np.moveaxis(x, axes, tuple(range(-len(axes), 0))).reshape(-1, math.prod(x.shape[d] for d in axes))
        fixed = out.reshape(-1)
        for i in np.flatnonzero(bad.reshape(-1)):
            fixed[i] = _mp_logsumexp(rows[i])
        out = fixed.reshape(m.shape)
    return out


def _mp_logsumexp(row):
    import mpmath

    with mpmath.workprec(2400):
        return rounded(mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(float(v))) for v in row)))


def _logsumexp_weight(c):
    """exp(self - result), PyTorch's VJP weight; in float64 on the host (issue 38) the primitive
    logsumexp_weight: the same formula's bound, its value softmax(self) (exp of self minus the
    rounded result is off by u·|result| relatively: 1, exact 1/2, at [1e308, 1e308]) and its
    derivative softmax's own, all to self (PyTorch's chain rule through self and the saved
    result sums s - s·s, in which 1 - s cancels where s rounds to 1)."""
    result = _unreduce_any(c.result, c.shapes[0], c.dim, c.keepdim)
    x = c.self
    if x.ndim and x.dtype.kind == "f" and on_host_float64(x._data):
        return from_rule("logsumexp_weight", x, result, dim=_dims_of(c.dim, x.ndim))
    return A.exp(x - result)


rule(
    "logsumexp",
    "LogsumexpBackward0",
    ("self",),
    forward=logsumexp_kernel,
    grads=(lambda c, g: _unreduce_any(g, c.shapes[0], c.dim, c.keepdim) * _logsumexp_weight(c),),
    saves={"self": (0,), "result": (0,)},
    jvp=(lambda c, t: _sum_back(t * _logsumexp_weight(c), c.dim, c.keepdim),),
    batch=BATCH_REDUCE,
    error=LOGSUMEXP_ERROR,
    complex_inputs=True,  # holomorphic: grad * conj(exp(self - result)) by conjugation
)


def _logsumexp_weight_kernel(x, result, dim):
    if on_host_float64(x):
        return softmax_over(x, dim)
    return namespace_of(x).exp(x - result)


rule(
    "logsumexp_weight",
    "ExpBackward0",
    ("self", "result"),
    forward=_logsumexp_weight_kernel,
    # softmax's VJP and JVP (the weight is softmax(self)); the result gets no gradient: its
    # dependence on self is the -s·s term softmax's formula holds
    grads=(lambda c, gg: c.result * from_rule("softmax_centred", gg, c.result, dim=c.dim), None),
    saves={"result": (0,)},
    jvp=(lambda c, t: c.result * from_rule("softmax_centred", t, c.result, dim=c.dim), None),
    batch=_batch_multi,
    error=errors.composite(lambda x, r, dim: A.exp(x - r), "PyTorch's exp(self - result)"),
)

# ---- max/min/median over all elements: the gradient shared evenly among the ties --------------------------


def _evenly_mask(c):
    res = _unreduce_any(c.result, c.shapes[0], c.dim, True if c.dim is None else c.keepdim)
    return A.to(A.logical_or(c.self == res, A.logical_and(_isnan(c.self), _isnan(res))), c.self.dtype)


def _evenly_grad(c, g):
    mask = _evenly_mask(c)
    count = _sum_back(mask, c.dim, True)
    return _unreduce_any(g, c.shapes[0], c.dim, c.keepdim) / count * mask


def _evenly_jvp(c, t):
    mask = _evenly_mask(c)
    return _sum_back(t * mask, c.dim, c.keepdim) / _sum_back(mask, c.dim, c.keepdim)


def max_all_kernel(x, dim, keepdim):
    return namespace_of(x).amax(x, axis=dim, keepdims=keepdim)


def min_all_kernel(x, dim, keepdim):
    return namespace_of(x).amin(x, axis=dim, keepdims=keepdim)


def _order_stat(x, dim, keepdim, which):
    """median/nanmedian over the dims ``dim`` (None: all): values and indices into the flattened
    dims, from a stable sort (NaN last)."""
    xp = namespace_of(x)
    y, dims = _over(x, dim)
    perm = xp.argsort(y, axis=-1, kind="stable")
    s = xp.take_along_axis(y, perm, axis=-1)
    n = y.shape[-1]
    nan_count = xp.isnan(y).sum(axis=-1, keepdims=True)
    valid = n - nan_count
    if which == "median":
        k = xp.where(nan_count > 0, valid, (n - 1) // 2)
    else:  # nanmedian
        k = xp.where(valid > 0, (valid - 1) // 2, 0)
    values = xp.take_along_axis(s, k, axis=-1)
    idx = xp.take_along_axis(perm, k, axis=-1)
    shape = _reduced_shape(x.shape, dim, keepdim)
    return values.reshape(shape), idx.reshape(shape)


rule(
    "max",
    "MaxBackward1",
    ("self",),
    forward=max_all_kernel,
    grads=(_evenly_grad,),
    saves={"self": (0,), "result": (0,)},
    jvp=(_evenly_jvp,),
    batch=BATCH_REDUCE,
    error=SELECTION_ERROR,
)
rule(
    "min",
    "MinBackward1",
    ("self",),
    forward=min_all_kernel,
    grads=(_evenly_grad,),
    saves={"self": (0,), "result": (0,)},
    jvp=(_evenly_jvp,),
    batch=BATCH_REDUCE,
    error=SELECTION_ERROR,
)
rule(
    "median",
    "MedianBackward0",
    ("self",),
    forward=lambda x, dim, keepdim: _order_stat(x, dim, keepdim, "median")[0],
    grads=(_evenly_grad,),
    saves={"self": (0,), "result": (0,)},
    jvp=(_evenly_jvp,),
    batch=BATCH_REDUCE,
    error=SELECTION_ERROR,
)
rule(
    "nanmedian",
    "NanmedianBackward0",
    ("self",),
    forward=lambda x, dim, keepdim: _order_stat(x, dim, keepdim, "nanmedian")[0],
    grads=(_evenly_grad,),
    saves={"self": (0,), "result": (0,)},
    jvp=(_evenly_jvp,),
    batch=BATCH_REDUCE,
    error=SELECTION_ERROR,
)

# ---- value-selecting reductions along one dim: (indices, values), the gradient to the index ----------------
# Outputs are ordered (indices, values) so that the saved "result" is the indices, as PyTorch saves
# them (the Tensor-level functions return (values, indices)).


def select_backward(g, dim, indices, shape, keepdim):
    """PyTorch's value_selecting_reduction_backward: ``g`` scattered to ``indices`` along ``dim``."""
    if len(shape) == 0:
        return g
    if not keepdim:
        g, indices = A.unsqueeze(g, dim), A.unsqueeze(indices, dim)
    return from_rule("scatter", A.zeros(shape, dtype=g.dtype, device=g.device), indices, g, dim=dim)


def select_jvp(t, dim, indices, keepdim):
    if t.ndim == 0:
        return t
    idx = indices if keepdim else A.unsqueeze(indices, dim)
    out = from_rule("gather", t, idx, dim=dim)
    return out if keepdim else A.squeeze(out, dim)


def _selecting_rule(name, node, kernel, keepdim_param=True):
    rule(
        name,
        node,
        ("self",),
        forward=kernel,
        outputs=2,
        error=SELECTION_ERROR,
        grads=(
            lambda c, g: select_backward(
                g[1], c.dim, c.result, c.shapes[0], c.keepdim if keepdim_param else True
            ),
        ),
        saves={"result": (0,)},
        jvp=lambda c, ts: (
            None,
            select_jvp(ts[0], c.dim, c.result[0], c.keepdim if keepdim_param else True),
        ),
        batch=_batch_multi,
    )


def _arg_extreme(x, dim, keepdim, largest):
    xp = namespace_of(x)
    if x.ndim == 0:
        return xp.zeros((), dtype=np.int64), x.copy()
    idx = (xp.argmax if largest else xp.argmin)(x, axis=dim, keepdims=True)
    values = xp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        idx, values = xp.squeeze(idx, axis=dim), xp.squeeze(values, axis=dim)
    return idx.astype(np.int64), values


def _kth(x, dim, keepdim, k):
    xp = namespace_of(x)
    if x.ndim == 0:
        return xp.zeros((), dtype=np.int64), x.copy()
    perm = xp.argsort(x, axis=dim, kind="stable")
    idx = xp.take(perm, [k - 1], axis=dim)
    values = xp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        idx, values = xp.squeeze(idx, axis=dim), xp.squeeze(values, axis=dim)
    return idx.astype(np.int64), values


def _median_dim(x, dim, keepdim, which):
    xp = namespace_of(x)
    if x.ndim == 0:
        return xp.zeros((), dtype=np.int64), x.copy()
    values, idx = _order_stat(x, (dim,), keepdim, which)
    return idx.astype(np.int64), values


def _mode(x, dim, keepdim):
    """The most frequent value (the smallest among equally frequent ones) and the index of its last
    occurrence, as PyTorch's CPU mode returns them."""
    xp = namespace_of(x)
    if x.ndim == 0:
        return xp.zeros((), dtype=np.int64), x.copy()
    y = xp.moveaxis(x, dim, -1)
    perm = xp.argsort(y, axis=-1, kind="stable")
    s = xp.take_along_axis(y, perm, axis=-1)
    n = s.shape[-1]
    pos = xp.arange(n)
    start = xp.ones(s.shape, dtype=bool)
    start[..., 1:] = s[..., 1:] != s[..., :-1]
    end = xp.ones(s.shape, dtype=bool)
    end[..., :-1] = start[..., 1:]
    first = running_extreme(xp.where(start, pos, 0), -1, largest=True)
    last = xp.flip(running_extreme(xp.flip(xp.where(end, pos, n), axis=-1), -1, largest=False), axis=-1)
    best = xp.argmax(last - first, axis=-1)[..., None]
    at = xp.take_along_axis(last, best, axis=-1)
    values = xp.take_along_axis(s, at, axis=-1)
    idx = xp.take_along_axis(perm, at, axis=-1)
    values, idx = xp.moveaxis(values, -1, dim), xp.moveaxis(idx, -1, dim)
    if not keepdim:
        idx, values = xp.squeeze(idx, axis=dim), xp.squeeze(values, axis=dim)
    return idx.astype(np.int64), values


_selecting_rule("max_dim", "MaxBackward0", lambda x, dim, keepdim: _arg_extreme(x, dim, keepdim, True))
_selecting_rule("min_dim", "MinBackward0", lambda x, dim, keepdim: _arg_extreme(x, dim, keepdim, False))
_selecting_rule(
    "median_dim", "MedianBackward1", lambda x, dim, keepdim: _median_dim(x, dim, keepdim, "median")
)
_selecting_rule(
    "nanmedian_dim", "NanmedianBackward1", lambda x, dim, keepdim: _median_dim(x, dim, keepdim, "nanmedian")
)
_selecting_rule("kthvalue", "KthvalueBackward0", _kth)
_selecting_rule("mode", "ModeBackward0", _mode)


# ---- aminmax -------------------------------------------------------------------------------------------------


def _aminmax_grad(c, g):
    outs = []
    params = {"dim": c.dim, "keepdim": c.keepdim}
    results = (c.result, apply(A.R.amax, (c.self,), params))
    for res, gi in zip(results, g):
        mask = _unreduce_any(res, c.shapes[0], c.dim, c.keepdim) == c.self
        outs.append(A.scale_grad_by_count(_unreduce_any(gi, c.shapes[0], c.dim, c.keepdim), mask, c.dim))
    return outs[0] + outs[1]


rule(
    "aminmax",
    "AminmaxBackward0",
    ("self",),
    forward=lambda x, dim, keepdim: (
        namespace_of(x).amin(x, axis=dim, keepdims=keepdim),
        namespace_of(x).amax(x, axis=dim, keepdims=keepdim),
    ),
    outputs=2,
    vjp=lambda c, g: (_aminmax_grad(c, g),),
    saves={"self": (0,), "result": (0,)},
    jvp=lambda c, ts: tuple(
        _sum_back(ts[0] * m, c.dim, c.keepdim) / _sum_back(m, c.dim, c.keepdim)
        for m in (
            A.to(_unreduce_any(r, c.shapes[0], c.dim, c.keepdim) == c.self, c.self.dtype) for r in c.result
        )
    ),
    batch=_batch_multi,
    error=SELECTION_ERROR,
)

# ---- results without a gradient: argmax/argmin, all/any, count_nonzero --------------------------------------


def _no_grad_rule(name, kernel, batch=BATCH_REDUCE):
    rule(name, name, ("self",), forward=kernel, grads=(None,), jvp=(None,), batch=batch, error=INTEGER_RESULT)


def _argmax_kernel(largest):
    def kernel(x, dim, keepdim):
        xp = namespace_of(x)
        if dim is None:
            idx = (xp.argmax if largest else xp.argmin)(x.reshape(-1))
            out = xp.asarray(idx, dtype=np.int64)
            return out.reshape((1,) * x.ndim) if keepdim else out
        return _arg_extreme(x, dim, keepdim, largest)[0]

    return kernel


def _batch_arg_all(b, params):
    """argmax over all elements of each sample: flatten the sample, then along dim 1."""
    x = A.reshape(b.expanded(0), (b.size, -1))
    out = apply(b.rule, (x,), {**params, "dim": 1, "keepdim": False})
    if params["keepdim"]:
        out = A.reshape(out, (b.size,) + (1,) * len(b.inputs[0].shape))
    return out, 0


def _batch_argmax(b, params):
    if params["dim"] is None:
        return _batch_arg_all(b, params)
    return _batch_multi(b, params)


_no_grad_rule("argmax", _argmax_kernel(True), _batch_argmax)
_no_grad_rule("argmin", _argmax_kernel(False), _batch_argmax)
_no_grad_rule("all", lambda x, dim, keepdim: namespace_of(x).all(x, axis=dim, keepdims=keepdim))
_no_grad_rule("any", lambda x, dim, keepdim: namespace_of(x).any(x, axis=dim, keepdims=keepdim))
_no_grad_rule(
    "count_nonzero",
    lambda x, dim, keepdim: namespace_of(x).asarray(
        namespace_of(x).count_nonzero(x, axis=dim), dtype=np.int64
    ),
)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: the primitives of this family that accept complex tensors (each checked against torch in
#: tests/autograd/test_torch_complex.py); the others refuse them with PyTorch's error
COMPLEX_INPUTS = """
    all any count_nonzero linalg_vector_norm mean mean_dim prod prod_dim std std_mean sum sum_dim
    var var_mean
"""
