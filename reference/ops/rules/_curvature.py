"""Exact float64 Hessian-vector products of std and the p-norms (issue 38): their second derivatives.

The double backward of std (or of a p-norm) sums two graph paths, one through x and one through
the saved result, and they cancel where the Hessian entry is small: std's
δ_kl/(dof·σ) - 1/(n·dof·σ) - c_k·c_l/(dof²·σ³) at [1, 1 + 2^-52, 1] gave 0.25 where it is 0;
the 2-norm's δ_kl/N - x_k·x_l/N³ gave 0 at [1, 1e-20, -1e-10] where it is 1e-20. Here the
product H·t is one primitive, evaluated from x and t at once:

* in float64 first, from x scaled by 2^-e (no overflow of the squares or the powers), with the
  size of its terms (Σ|terms|, each bounded by its absolute value: the cotangent's or tangent's
  own sums included);
* the rows where the terms cancel by more than :data:`CANCEL` (the float64 answer may then be far
  off in ulps of the exact one) again in mpmath at 2400 bits, where every sum of float64 products
  is exact, and rounded once.

Only float64 host arrays of finite elements (the callers gate on ``kernels.on_host_float64``);
rows of a zero norm (or zero spread) answer 0: the callers keep PyTorch's formula there.
Measured by tests/autograd/test_reduction_accuracy.py (docs/accuracy.md).
"""

from __future__ import annotations

import numpy as np

from reference.ops.rules._sums import CANCEL, _last, _row_exponent, centred, repair_sum

_PREC = 2400  # bits: every sum of float64 products is exact


def _rows_to_redo(w, size, *arrays):
    """The rows (reduced axis last) where some |w| is below size / CANCEL and every element of
    ``arrays`` is finite: the float64 answer may be far off, the exact one is finite."""
    with np.errstate(invalid="ignore"):
        cancelled = (np.abs(w) * CANCEL < size).any(axis=-1)
        finite = np.ones(cancelled.shape, dtype=bool)
        for a in arrays:
            finite &= np.isfinite(a).all(axis=-1)
    return np.flatnonzero((cancelled & finite).reshape(-1))


def _redo_in_mpmath(out, xl, tl, rows, exact_row):
    """``out`` with the rows ``rows`` (of the arrays flattened to rows, the reduced axis last)
    replaced by ``exact_row(xs, ts)``: the row's x and t as mpf at 2400 bits in, mpf out, each
    rounded once."""
    if not rows.size:
        return out
    import mpmath

    n = xl.shape[-1]
    flat_out, flat_x, flat_t = out.reshape(-1, n).copy(), xl.reshape(-1, n), tl.reshape(-1, n)
    with mpmath.workprec(_PREC):
        for i in rows:
            xs, ts = ([mpmath.mpf(float(v)) for v in a[i]] for a in (flat_x, flat_t))
            flat_out[i] = [float(v) for v in exact_row(xs, ts)]
    return flat_out.reshape(xl.shape)


def _sum_last(a):
    """Σ over the last axis (kept), exactly rounded where it cancels (repair_sum)."""
    return repair_sum(a, (a.ndim - 1,), a.sum(axis=-1, keepdims=True))


def std_direction(x, dims, correction):
    """std's gradient c/(dof·σ) over ``dims`` (kept shape), c = x - mean(x) (kernels exact: centred),
    as c·2^-e / sqrt(dof·Σ(c·2^-e)²): no overflow or underflow of the squares; 0 where σ = 0."""
    xl, back = _last(x, dims)
    dof = max(xl.shape[-1] - correction, 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        c = centred(xl, (xl.ndim - 1,))
        cs = np.ldexp(c, -_row_exponent(c, -1))
        squares = np.sum(cs * cs, axis=-1, keepdims=True)
        out = np.where(squares == 0, 0.0, cs / np.sqrt(dof * squares))
    return back(out)


def std_curvature(x, t, dims, correction):
    """H·t, H the Hessian of std over ``dims`` (kept shape): with c = x - mean(x), S = Σc_i² and
    dof = n - correction, H·t = (t - mean(t) - c·(c·t)/S) / sqrt(dof·S), the projection of t
    off the constants and off c, divided by dof·σ."""
    xl, back = _last(x, dims)
    tl, _ = _last(t, dims)
    n = xl.shape[-1]
    dof = max(n - correction, 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        c = centred(xl, (xl.ndim - 1,))
        e = _row_exponent(c, -1)
        cs = np.ldexp(c, -e)
        rho = np.sqrt(np.sum(cs * cs, axis=-1, keepdims=True))
        u = cs / rho  # c/|c|
        mean_t = _sum_last(tl) / n
        along = _sum_last(u * tl)
        w = (tl - mean_t) - u * along
        out = np.ldexp(w / (np.sqrt(dof) * rho), -e)
        size = (
            np.abs(tl)
            + np.abs(tl).sum(axis=-1, keepdims=True) / n
            + np.abs(u) * np.abs(u * tl).sum(axis=-1, keepdims=True)
        )
        out = np.where(rho == 0, 0.0, out)
    redo = _rows_to_redo(np.where(rho == 0, 1.0, w), size, xl, tl)
    return back(_redo_in_mpmath(out, xl, tl, redo, lambda xr, tr: _mp_std_curvature(xr, tr, dof)))


def _mp_std_curvature(xs, ts, dof):
    import mpmath

    n = len(xs)
    mu = mpmath.fsum(xs) / n
    c = [v - mu for v in xs]
    s = mpmath.fsum(v * v for v in c)
    if s == 0:
        return [mpmath.mpf(0)] * n
    mean_t = mpmath.fsum(ts) / n
    along = mpmath.fsum(a * b for a, b in zip(c, ts)) / s
    scale = 1 / mpmath.sqrt(dof * s)
    return [(b - mean_t - a * along) * scale for a, b in zip(c, ts)]


def norm_curvature(x, t, ord, dims):
    """H·t, H the Hessian of the ``ord``-norm N over ``dims`` (1 < ord < inf, kept shape): with
    r = |x|/N and u = sign(x)·r^(p - 1) (the gradient), H·t = (p - 1)/N·(r^(p - 2)·t - u·(u·t)).
    A zero tangent element meets r^(p - 2) as 0; at x_k = 0 (p < 2) PyTorch's nan (below)."""
    p = float(ord)
    xl, back = _last(x, dims)
    tl, _ = _last(t, dims)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        e = _row_exponent(xl, -1)
        s = np.ldexp(xl, -e)
        a = np.abs(s)
        norm = (
            np.sqrt(np.sum(s * s, axis=-1, keepdims=True))
            if p == 2
            else np.sum(a**p, axis=-1, keepdims=True) ** (1 / p)
        )
        r = a / norm
        u = np.sign(s) * (r if p == 2 else r ** (p - 1))
        own = tl if p == 2 else np.where(tl == 0, 0.0, r ** (p - 2) * tl)
        along = _sum_last(u * tl)
        w = own - u * along
        out = np.ldexp((p - 1) * w / norm, -e)
        size = np.abs(own) + np.abs(u) * np.abs(u * tl).sum(axis=-1, keepdims=True)
        out = np.where(norm == 0, 0.0, out)
    redo = _rows_to_redo(np.where(norm == 0, 1.0, w), size, xl, tl)
    out = _redo_in_mpmath(out, xl, tl, redo, lambda xr, tr: _mp_norm_curvature(xr, tr, p))
    if p < 2:
        # no second derivative at x_k = 0 (r^(p - 2) is infinite there): nan in that element, as
        # PyTorch's (the other entries H_kl = -(p - 1)·u_k·u_l/N, u_k = 0, are exact: 0)
        out = np.where(xl == 0, np.nan, out)
    return back(out)


def _mp_norm_curvature(xs, ts, p):
    import mpmath

    q = mpmath.mpf(p)
    norm = mpmath.fsum(abs(v) ** q for v in xs) ** (1 / q)
    r = [abs(v) / norm for v in xs]
    u = [mpmath.sign(v) * ri ** (q - 1) for v, ri in zip(xs, r)]
    along = mpmath.fsum(a * b for a, b in zip(u, ts))
    own = [0 if b == 0 else ri ** (q - 2) * b for ri, b in zip(r, ts)]
    return [(q - 1) * (o - a * along) / norm for o, a in zip(own, u)]


# ---- prod: the partials Π_{i≠k} x_i and their derivatives Π_{i≠k,l} x_i ------------------------------


def _two_product_error(a, b):
    """a·b - fl(a·b) exactly (Dekker's split, |a|, |b| < 1: no overflow in the split)."""

    def split(v):
        c = 134217729.0 * v  # 2^27 + 1
        hi = c - (c - v)
        return hi, v - hi

    (ah, al), (bh, bl) = split(a), split(b)
    return ((ah * bh - a * b) + ah * bl + al * bh) + al * bl


def _exclusive_products(m, e):
    """Π_{i<k} (m_i·2^e_i) along the last axis as a double-double mantissa (hi in [1/2, 1) or 0, lo)
    and an exponent: the running product carried with its rounding errors (TwoProduct), renormalised
    after every factor (no intermediate overflow or underflow); about one rounding in all."""
    hi_out, lo_out, pe = np.empty_like(m), np.empty_like(m), np.empty(m.shape, dtype=np.int64)
    hi, lo = np.ones(m.shape[:-1]), np.zeros(m.shape[:-1])
    acc_e = np.zeros(m.shape[:-1], dtype=np.int64)
    for k in range(m.shape[-1]):
        hi_out[..., k], lo_out[..., k], pe[..., k] = hi, lo, acc_e
        p = hi * m[..., k]
        lo = lo * m[..., k] + _two_product_error(hi, m[..., k])
        hi = p + lo  # Fast2Sum (|p| >= |lo|)
        lo = lo - (hi - p)
        hi, shift = np.frexp(hi)
        lo = np.ldexp(lo, -shift)
        acc_e = acc_e + e[..., k] + shift
    return hi_out, lo_out, pe


def leave_one_out_products(x):
    """Π_{i≠k} x_i along the last axis (finite x): the double-double products from the left and from
    the right of each element, multiplied and rounded once (within about an ulp)."""
    m, e = np.frexp(x)
    lh, ll, le = _exclusive_products(m, e)
    rh, rl, re = (a[..., ::-1] for a in _exclusive_products(m[..., ::-1], e[..., ::-1]))
    with np.errstate(over="ignore", under="ignore"):
        mant = lh * rh + (_two_product_error(lh, rh) + lh * rl + ll * rh)
        return np.ldexp(mant, le + re)


def prod_partials(x, dims):
    """prod's gradient over ``dims`` (kept shape): Π_{i≠k} x_i for each element k."""
    xl, back = _last(x, dims)
    return back(leave_one_out_products(xl))


def prod_curvature(x, t, dims):
    """H·t, H the Hessian of prod over ``dims`` (kept shape): H_kl = Π_{i≠k,l} x_i (0 at k = l),
    the leave-one-out products of x with x_k replaced by 1 (an n × n table per row); a zero
    tangent element contributes 0 (finite factors: every entry is a finite real, 0·1e400 is 0)."""
    xl, back = _last(x, dims)
    tl, _ = _last(t, dims)
    n = xl.shape[-1]
    eye = np.eye(n, dtype=bool)
    table = leave_one_out_products(np.where(eye, 1.0, xl[..., None, :]))
    with np.errstate(invalid="ignore", over="ignore"):
        terms = np.where(eye | (tl[..., None, :] == 0), 0.0, table * tl[..., None, :])
        out = repair_sum(terms, (terms.ndim - 1,), terms.sum(axis=-1, keepdims=True))[..., 0]
    return back(out)
