"""Correctly rounded float64 sums where NumPy's pairwise sum cancels or overflows (issue 38).

NumPy's (and PyTorch's) float64 sum is within about log2(n)·u·Σ|x_i| of the exact sum: a few ulps
of the result where the terms have one sign, nothing where they cancel (1e16 + 1 - 1e16 = 0,
exact 1) or where a partial sum overflows while the sum does not (1e308 + 1e308 - 1e308 = inf).
The kernels here keep NumPy's sum where Σ|x_i| <= 2·|sum| (at most one bit cancelled: the pairwise
error stays a few ulps of the result) and recompute the other rows (a row: the elements summed
into one output) exactly rounded: math.fsum (Shewchuk's exact partials), mpmath at 2400 bits where
fsum's partials overflow. Only float64 arrays of finite elements on the host are touched: other
dtypes, rows holding an inf or nan, and arrays of other backends keep the plain sum.

Measured by tests/autograd/test_reduction_accuracy.py (docs/accuracy.md, "Reductions and
normalizations").
"""

from __future__ import annotations

import math

import numpy as np

from reference.ops.kernels import _two_sum_residual, on_host_float64
from reference.ops.kernels import softmax as _softmax_kernel
from reference.ops.rules._times import rounded

#: a row whose terms cancel by more than this factor is summed exactly
CANCEL = 2.0
_PREC = 2400  # bits: every sum of float64 terms is exact


def _exact_row(row, divisor=1):
    """sum(row) / divisor: the correctly rounded sum (divided once)."""
    try:
        return math.fsum(row) / divisor  # one more rounding for a mean: within 1 ulp
    except OverflowError:
        pass
    import mpmath

    with mpmath.workprec(_PREC):
        return rounded(mpmath.fsum(mpmath.mpf(float(v)) for v in row) / divisor)


def _rows(x, axes):
    """``x`` with ``axes`` moved last and flattened: an array of rows, one per output."""
    keep = [d for d in range(x.ndim) if d not in axes]
    y = np.transpose(x, keep + list(axes))
    return y.reshape((-1, math.prod(x.shape[d] for d in axes)))


def _axes(dim, ndim):
    if dim is None or dim == ():
        return tuple(range(ndim))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(sorted({d % ndim for d in dims}))


def _repairable(x):
    return on_host_float64(x) and x.ndim > 0 and x.size > 1


def repair_sum(x, dim, out, mean=False):
    """``out``, the plain sum (or mean, ``mean``) of ``x`` over ``dim``, with the rows whose terms
    cancel or whose partial sums overflow replaced by the exactly rounded sum (divided by the count
    once for a mean)."""
    axes = _axes(dim, max(getattr(x, "ndim", 0), 1))
    if not _repairable(x):
        return out
    rows = _rows(x, axes)
    if rows.shape[1] < (2 if mean else 3):  # one addition: rounded once (a mean's may overflow)
        return out
    n = rows.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):
        naive = rows.sum(axis=1)
        size = np.abs(rows).sum(axis=1)
        finite = np.isfinite(rows).all(axis=1)
        bad = finite & ~((size <= CANCEL * np.abs(naive)) & np.isfinite(naive))
    if not bad.any():
        return out
    flat = np.array(out, dtype=np.float64).reshape(-1)
    for i in np.flatnonzero(bad):
        flat[i] = _exact_row(rows[i], n if mean else 1)
    return flat.reshape(np.shape(out))


def accurate_cumsum(x, axis):
    """``np.cumsum(x, axis)`` with the rows whose prefix sums cancel (|prefix| < Σ|x_i| / CANCEL) or
    overflow recomputed by a compensated scan (Neumaier's: the rounding error of every addition,
    by TwoSum, carried in a second running sum and added back once per prefix)."""
    out = np.cumsum(x, axis=axis)
    if not _repairable(x) or x.shape[axis] < 3:
        return out
    y = np.moveaxis(x, axis, -1)
    rows = y.reshape(-1, y.shape[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.cumsum(rows, axis=1)
        size = np.cumsum(np.abs(rows), axis=1)
        finite = np.isfinite(rows).all(axis=1)
        bad = finite & ~((size <= CANCEL * np.abs(naive)) & np.isfinite(naive)).all(axis=1)
    if not bad.any():
        return out
    sub = rows[bad]
    s = np.zeros(len(sub))
    c = np.zeros(len(sub))
    fixed = np.empty_like(sub)
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(sub.shape[1]):
            a = sub[:, k]
            t = s + a
            bp = t - s
            c += (s - (t - bp)) + (a - bp)  # TwoSum: s + a = t + err exactly
            s = t
            fixed[:, k] = s + c
    overflowed = ~np.isfinite(fixed).all(axis=1)
    for r in np.flatnonzero(overflowed):  # a partial sum past the float64 range: exact prefixes
        fixed[r] = _exact_prefixes(sub[r])
    naive[bad] = fixed
    return np.moveaxis(naive.reshape(y.shape), -1, axis)


def _exact_prefixes(row):
    import mpmath

    out, acc = [], None
    with mpmath.workprec(_PREC):
        acc = mpmath.mpf(0)
        for v in row:
            acc += mpmath.mpf(float(v))
            out.append(float(acc))
    return out



# ---- scaling by a power of two: products, norms and variances past the float64 range ------------------


def _host_float64(x):
    return on_host_float64(x)


def _row_exponent(a, axis):
    """2^e per row with |a| < 2^e (e of the largest |a|; 0 for a zero, infinite or nan row):
    a·2^-e is exact, and its squares and powers neither overflow nor underflow."""
    with np.errstate(invalid="ignore"):
        big = np.amax(np.abs(a), axis=axis, keepdims=True) if a.size else np.zeros((1,) * a.ndim)
    _, e = np.frexp(np.where(np.isfinite(big), big, 0.0))
    return e


def scaled_norm(a, ord, dim, keepdim):
    """(sum |a|^ord)^(1/ord) (sqrt of the sum of squares for ord 2) of |a| scaled by 2^-e per row:
    the squares of 1e200 (or 1e-200) overflow (underflow) where the norm does not."""
    axis = dim if dim is not None else None
    e = _row_exponent(a, axis)
    s = np.ldexp(a, -e)
    with np.errstate(divide="ignore", over="ignore"):
        if ord == 2:
            out = np.sqrt(np.sum(s * s, axis=axis, keepdims=True))
        else:
            out = np.sum(s**ord, axis=axis, keepdims=True) ** (1.0 / ord)
    with np.errstate(over="ignore"):
        out = np.ldexp(out, e)
    if not keepdim:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out


def _centred_sum_of_squares(x, dim, correction):
    """The corrected two-pass variance (Chan, Golub and LeVeque) of x·2^-e, with keepdims: d = x - mean,
    (sum d² - (sum d)²/n) / (n - correction). The second term takes out the mean's own rounding,
    which np.var's plain two-pass sum keeps (var([1, 1 + 2^-52, 1]) 2.25e15 ulps off); 2^-e keeps
    the squares of 1e±200 in range."""
    e = _row_exponent(x, dim)
    s = np.ldexp(x, -e)
    n = s.size // max(np.mean(s, axis=dim, keepdims=True).size, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = s - np.mean(s, axis=dim, keepdims=True)
        total = np.sum(d, axis=dim, keepdims=True)
        v = (np.sum(d * d, axis=dim, keepdims=True) - total * total / n) / max(n - correction, 0)
    return v, e


def _drop(out, dim, keepdim):
    if keepdim:
        return out
    return np.squeeze(out, axis=dim) if dim is not None else out.reshape(())


def scaled_var(x, dim, correction, keepdim):
    """np.var's value, as :func:`_centred_sum_of_squares` times 2^(2e) (the centred squares of
    1e-200s underflow in np.var, those of 1e200s overflow where the std does not)."""
    v, e = _centred_sum_of_squares(x, dim, correction)
    with np.errstate(over="ignore"):
        return _drop(np.ldexp(v, 2 * e), dim, keepdim)


def scaled_std(x, dim, correction, keepdim):
    """sqrt of :func:`_centred_sum_of_squares`, times 2^e."""
    v, e = _centred_sum_of_squares(x, dim, correction)
    with np.errstate(over="ignore", invalid="ignore"):
        return _drop(np.ldexp(np.sqrt(v), e), dim, keepdim)


def _mantissa_product(x, axis, cumulative):
    """prod (or cumprod) of x along ``axis`` as p·2^e, p the running product of the mantissas (in
    [1/2, 1)) renormalised after every 512 factors (it stays above 2^-512) and e the running sum
    of the exponents: no intermediate overflow or underflow, the same roundings as the running
    product otherwise (one more per element past the first 512 of a cumprod)."""
    y = np.moveaxis(x, axis, -1)
    mant, ex = np.frexp(y)
    out = np.empty_like(y)
    p = np.ones(y.shape[:-1])
    e = np.zeros(y.shape[:-1], dtype=np.int64)
    with np.errstate(over="ignore", under="ignore"):
        for start in range(0, y.shape[-1], 512):
            block, bex = mant[..., start : start + 512], ex[..., start : start + 512]
            if cumulative:
                run = np.cumprod(block, axis=-1) * p[..., None]
                out[..., start : start + 512] = np.ldexp(run, e[..., None] + np.cumsum(bex, axis=-1))
                p = run[..., -1]
            else:
                p = p * np.prod(block, axis=-1)
            p, shift = np.frexp(p)
            e = e + bex.sum(axis=-1) + shift
        return np.moveaxis(out, -1, axis) if cumulative else np.ldexp(p, e)


def repair_prod(x, axis, out, cumulative=False):
    """``out``, the running product of x along one ``axis`` (prod with keepdims, or cumprod), with
    the rows of finite non-zero factors whose result (a prefix, for cumprod) is 0, infinite or
    below the normal range recomputed by :func:`_mantissa_product` (prod([1e200, 1e200, 1e-200])
    was inf, exact 1e200)."""
    if not _host_float64(x) or x.ndim == 0 or x.shape[axis] < 2:
        return out
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(x).all(axis=axis, keepdims=True)
        ok = finite & (x != 0).all(axis=axis, keepdims=True)
        odd = (~np.isfinite(out)) | (np.abs(out) < 2.2250738585072014e-308)
        bad = ok & odd.any(axis=axis, keepdims=True)
        # finite factors with a zero, whose running product overflowed before it: inf·0 = nan
        # (cumprod([1e200, 1e200, 0])[2]), exact ±0
        zeroed = finite & ~ok & np.isnan(out).any(axis=axis, keepdims=True)
    if not bad.any() and not zeroed.any():
        return out
    fixed = _mantissa_product(np.where(x == 0, 1.0, x), axis, cumulative)
    fixed = fixed if cumulative else np.expand_dims(fixed, axis)
    if zeroed.any():
        seen = (np.cumsum(x == 0, axis=axis) > 0) if cumulative else (x == 0).any(axis=axis, keepdims=True)
        signs = np.where(np.signbit(x), -1.0, 1.0)
        sign = np.cumprod(signs, axis=axis) if cumulative else np.prod(signs, axis=axis, keepdims=True)
        fixed = np.where(seen, np.copysign(0.0, sign), fixed)
    return np.where(bad | zeroed, fixed, out)


# ---- softmax's Jacobian products: 1 - s as the sum of the other s_i ---------------------------------


def _last(a, axes):
    """``a`` with ``axes`` moved last and flattened into one; and the function putting a result of
    that layout back."""
    moved = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    shape = moved.shape
    flat = moved.reshape(shape[: moved.ndim - len(axes)] + (math.prod(shape[moved.ndim - len(axes) :]),))

    def back(r):
        return np.moveaxis(r.reshape(shape), tuple(range(-len(axes), 0)), axes)

    return flat, back


def _dominant(yl):
    """Per row of ``yl`` (a softmax, the reduced axis last): the index j of its largest element
    (kept as a size-1 axis), whether y_j > 1/2 (at most one element of a softmax is: then 1 - y_j
    cancels, and is the sum of the others instead), that complement c, and the mask of the others."""
    j = np.argmax(yl, axis=-1)[..., None]
    yj = np.take_along_axis(yl, j, axis=-1)
    others = np.ones(yl.shape, dtype=bool)
    np.put_along_axis(others, j, False, axis=-1)
    c = np.where(others, yl, 0.0).sum(axis=-1, keepdims=True)
    return j, yj, yj > 0.5, c, others


def _exact_rows(g, y, dims):
    """Whether :func:`softmax_centred` and :func:`softmax_centred_t` take the exact path: float64
    host arrays of one shape, reduced along at least one axis."""
    return on_host_float64(g) and on_host_float64(y) and g.shape == y.shape and g.ndim > 0 and g.size > 0


def softmax_centred(g, y, dims):
    """g - sum(g·y) over ``dims`` (kept) for y = softmax(x): softmax's VJP is y times it (and its
    JVP, the Jacobian being symmetric). PyTorch's g - sum(g·y) loses 1 - y_j where y_j rounds to 1
    (softmax([0, -40])'s Jacobian diagonal: 0, exact 4.2e-18). In float64 (issue 38) the row's
    dominant element j (y_j > 1/2) gets g_j·c - Σ_{i≠j} g_i·y_i, c = Σ_{i≠j} y_i, and the others
    (g_i - g_j) + that: no 1 - y_j formed; rows without a dominant element keep the formula."""
    with np.errstate(invalid="ignore", over="ignore"):
        plain = g - repair_sum(g * y, dims, (g * y).sum(axis=dims, keepdims=True))
        if not _exact_rows(g, y, dims):
            return plain
        gl, back = _last(g, dims)
        yl, _ = _last(y, dims)
        j, yj, dom, c, others = _dominant(yl)
        gj = np.take_along_axis(gl, j, axis=-1)
        vj = gj * c - np.where(others, gl * yl, 0.0).sum(axis=-1, keepdims=True)
        v = (gl - gj) + vj
        np.put_along_axis(v, j, vj, axis=-1)
        use = dom & np.isfinite(v).all(axis=-1, keepdims=True)
    if not use.any():
        return plain
    return np.where(back(np.broadcast_to(use, v.shape)), back(v), plain)


def softmax_centred_t(g, y, dims):
    """g - y·sum(g) over ``dims`` (kept) for y = softmax(x): the transpose of
    :func:`softmax_centred`, log_softmax's VJP. The dominant element j's g_j·c - y_j·Σ_{i≠j} g_i
    (c = Σ_{i≠j} y_i) in float64, as there."""
    with np.errstate(invalid="ignore", over="ignore"):
        plain = g - y * repair_sum(g, dims, g.sum(axis=dims, keepdims=True))
        if not _exact_rows(g, y, dims):
            return plain
        gl, back = _last(g, dims)
        yl, _ = _last(y, dims)
        plain_l, _ = _last(plain, dims)
        j, yj, dom, c, others = _dominant(yl)
        gj = np.take_along_axis(gl, j, axis=-1)
        uj = gj * c - yj * np.where(others, gl, 0.0).sum(axis=-1, keepdims=True)
        u = plain_l.copy()
        np.put_along_axis(u, j, uj, axis=-1)
        use = dom & np.isfinite(u).all(axis=-1, keepdims=True)
    if not use.any():
        return plain
    return np.where(back(np.broadcast_to(use, u.shape)), back(u), plain)


def softmax_over(x, dims):
    """softmax of x over ``dims`` (a tuple, flattened into one axis): logsumexp's VJP weight
    exp(x - logsumexp(x)) without the result's rounding (kernels.softmax: exact x - max)."""
    if x.size == 0:
        return x.copy()
    xl, back = _last(x, dims)
    return back(_softmax_kernel(xl, -1))


def centred(x, dims):
    """x - mean(x) over ``dims`` (a tuple, the mean kept): var's and std's VJP factor. PyTorch's
    x - mean of the rounded mean is off by the mean's rounding, all of it where x is within an ulp
    of the mean (x = 0.2 of [0.1, 0.2, 0.3]: 2.8e-17, exact 0 + 9.3e-18). In float64 (issue 38):
    d = x - m exactly as d + e (TwoSum, m the rounded mean), the mean's own error
    δ = Σ(d + e)/n (the corrected two-pass correction), and (d - δ) + e."""
    m = x.mean(axis=dims, keepdims=True)
    plain = x - m
    if not on_host_float64(x) or x.ndim == 0 or x.size == 0:
        return plain
    with np.errstate(invalid="ignore", over="ignore"):
        e = _two_sum_residual(x, -m, plain)
        n = x.size // max(m.size, 1)
        terms = np.concatenate([plain, e], axis=dims[0])  # Σ(d + e) exactly rounded where it cancels
        total = repair_sum(terms, dims, terms.sum(axis=dims, keepdims=True))
        out = (plain - total / n) + e
    return np.where(np.isfinite(out), out, plain)


def norm_ratio_power(x, ord, dims, power, signed):
    """(|x|/‖x‖_ord)^power over ``dims`` (times sign(x) when ``signed``): the p-norm's gradient for
    power = p - 1, signed, and its derivatives (power - 1, ...). PyTorch's x·|x|^(p-2)/norm^(p-1)
    overflows at 1e200s (inf/inf) and divides by the saved norm, rounded in the subnormal range
    ([5e-324, 1e-320]: 2.5e-4 relative); here |x| and the norm are both scaled by 2^-e (e of the
    row's largest |x|) and the norm recomputed from the scaled x, so the ratio is rounded once."""
    e = _row_exponent(x, dims)
    s = np.ldexp(x, -e)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if ord == 2:
            n = np.sqrt(np.sum(s * s, axis=dims, keepdims=True))
        else:
            n = np.sum(np.abs(s) ** ord, axis=dims, keepdims=True) ** (1.0 / ord)
        r = np.where(n == 0, 0.0, np.abs(s) / n)  # (a zero row: the caller's branch of PyTorch's formula)
        out = r if power == 1 else r**power
    return np.sign(s) * out if signed else out
