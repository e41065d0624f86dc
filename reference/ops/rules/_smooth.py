"""Exact kernels of the smooth activations and their first two derivatives (float64).

The reference answers with the mathematics (issue 38): each kernel returns the float64 value of
the function, or of its first or second derivative, within a few ulps of the exact value at the
float64 input, over the whole domain (the measured worst ulps are in docs/accuracy.md, asserted by
tests/autograd/test_activation_accuracy.py). The float64 formulas are the stable forms below;
where a formula cancels (near a zero of the derivative) or where the rounding of an intermediate
argument is amplified (gelu's tanh form for very negative x), the element is recomputed with
mpmath at 40 digits: the fallback touches only those elements.

Notation: s = sigmoid(x), s̄ = sigmoid(-x) = 1 - s, both computed directly (no 1 - s).
"""

from __future__ import annotations

import math

import numpy as np

from reference.backend import namespace_of, special_of
from reference.ops.rules._times import rounded

# ---- helpers ----------------------------------------------------------------------------------

_DPS = 40
#: a result whose terms cancel by more than one bit (|sum| < CANCEL·sum of |terms|) is recomputed
#: in mpmath: the float64 sum's relative error is at most (terms' error)·(1 / CANCEL) elsewhere
CANCEL = 0.5


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def mp_where(mask, out, x, mp_fn, **params):
    """``out`` with the elements under ``mask`` replaced by ``mp_fn(mpf(x), **params)`` rounded to
    float64 (mpmath, 40 digits). mpmath is imported only when an element needs it."""
    mask = np.asarray(mask) & np.isfinite(x)
    if not mask.any():
        return out
    import mpmath

    out = np.array(out, dtype=np.float64, copy=True)
    with mpmath.workdps(_DPS):
        out[mask] = [rounded(mp_fn(mpmath.mpf(float(v)), **params)) for v in x[mask]]
    return out


def cancels(total, *terms):
    """Where ``sum(terms)`` = ``total`` loses more than a bit to cancellation."""
    with np.errstate(invalid="ignore"):
        mag = sum(np.abs(t) for t in terms)
        return np.abs(total) < CANCEL * mag


def sigmoid(x):
    """1 / (1 + e^-x), from e = exp(-|x|) so that no exp overflows and no 1 - s is formed."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def sigmoid_d1(x):
    """s·s̄ = e / (1 + e)², e = exp(-|x|) (symmetric in x; exact tails, no 1 - s)."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-np.abs(x))
        return e / (1 + e) / (1 + e)


def tanh_d1(x):
    """sech² x = 4e / (1 + e)², e = exp(-2|x|): no 1 - tanh² x (0 where tanh rounds to ±1), no
    cosh² overflow; e is one exp of an exact argument (few ulps, subnormal tails included)."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-2 * np.abs(x))
        return 4 * e / (1 + e) / (1 + e)


def sigmoid_d2(x):
    """(s s̄)' = s s̄ (s̄ - s) = -s s̄ tanh(x / 2)."""
    x = _f64(x)
    return -sigmoid_d1(x) * np.tanh(x / 2)


# ---- softplus(x) = log(1 + e^x) ---------------------------------------------------------------


def softplus(x):
    """max(x, 0) + log1p(e^-|x|): two terms of one sign, no overflow."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def log_sigmoid(x):
    """log s(x) = -softplus(-x) = min(x, 0) - log1p(e^-|x|)."""
    return -softplus(-_f64(x))


# ---- silu(x) = x s ----------------------------------------------------------------------------


def silu(x):
    x = _f64(x)
    return x * sigmoid(x)


def _mp_sig(x):
    import mpmath

    return 1 / (1 + mpmath.exp(-x))


def _mp_silu_d1(x):
    s = _mp_sig(x)
    return s * (1 + x * (1 - s))


def _mp_silu_d2(x):
    s = _mp_sig(x)
    return s * (1 - s) * (2 + x * (1 - 2 * s))


def silu_d1(x):
    """s (1 + x s̄); zero at x = -1.2785: mpmath where 1 + x s̄ cancels."""
    x = _f64(x)
    with np.errstate(invalid="ignore", over="ignore"):
        tail = x * sigmoid(-x)
        inner = 1 + tail
        out = sigmoid(x) * inner
        return mp_where(cancels(inner, 1.0, tail), out, x, _mp_silu_d1)


def silu_d2(x):
    """s s̄ (2 - x tanh(x / 2)) (s̄ - s = -tanh(x/2)); zero at |x| = 2.3994: mpmath where it cancels."""
    x = _f64(x)
    with np.errstate(invalid="ignore", over="ignore"):
        xt = x * np.tanh(x / 2)
        inner = 2 - xt
        out = sigmoid_d1(x) * np.where(np.isinf(x), -np.inf, inner)
        out = np.where(np.isinf(x), 0.0, out)  # s s̄ decays like e^-|x|, the factor grows like |x|
        return mp_where(cancels(inner, 2.0, xt), out, x, _mp_silu_d2)


# ---- mish(x) = x tanh(softplus(x)) ------------------------------------------------------------
# With n = e^x (e^x + 2): tanh(log(1 + e^x)) = n / (n + 2) and 1 - tanh² = 4 (n + 1) / (n + 2)²,
# neither of which cancels; past x = 40 tanh(softplus(x)) is 1 - O(e^-2x), 1 to float64.


def _mish_parts(x):
    with np.errstate(over="ignore", invalid="ignore"):
        big = x > 40
        e = np.exp(np.where(big, 0.0, x))
        n = e * (e + 2)
        t = np.where(big, 1.0, n / (n + 2))
        q = np.where(big, 4 * np.exp(-2 * np.where(big, x, 0.0)), 4 * (n + 1) / (n + 2) / (n + 2))
    return t, q


def mish(x):
    x = _f64(x)
    t, _ = _mish_parts(x)
    return np.where(np.isnan(x), x, x * t)


def _mp_mish_t(x):
    import mpmath

    return mpmath.tanh(mpmath.log1p(mpmath.exp(x)))


def _mp_mish_d1(x):
    t = _mp_mish_t(x)
    return t + x * _mp_sig(x) * (1 - t * t)


def _mp_mish_d2(x):
    t = _mp_mish_t(x)
    s = _mp_sig(x)
    return s * (1 - t * t) * (2 + x * ((1 - s) - 2 * t * s))


def mish_d1(x):
    """t + x s (1 - t²), t = tanh(softplus(x)) (its derivative is s (1 - t²)); zero at x = -1.1924."""
    x = _f64(x)
    t, q = _mish_parts(x)
    with np.errstate(invalid="ignore", over="ignore"):
        tail = x * sigmoid(x) * q
        tail = np.where(np.isinf(x), 0.0, tail)
        out = t + tail
        return mp_where(cancels(out, t, tail), out, x, _mp_mish_d1)


def mish_d2(x):
    """s q (2 + x (s̄ - 2 t s)), q = 1 - t² (differentiating t + x s q with q' = -2 t s q)."""
    x = _f64(x)
    t, q = _mish_parts(x)
    with np.errstate(invalid="ignore", over="ignore"):
        s, sb = sigmoid(x), sigmoid(-x)
        a, b = x * sb, -2 * x * t * s
        inner = 2 + a + b
        out = np.where(np.isinf(x), 0.0, s * q * inner)
        return mp_where(cancels(inner, 2.0, a, b), out, x, _mp_mish_d2)


# ---- gelu, erf form: x Φ(x) -------------------------------------------------------------------

_INV_SQRT2_HI = 0.7071067811865476  # 1/√2 as a double-double
_INV_SQRT2_LO = -4.833646656726457e-17
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def two_square(x):
    """x·x = hi + lo exactly (Dekker's product with Veltkamp's split; no FMA needed)."""
    c = 134217729.0 * x  # 2^27 + 1
    high = c - (c - x)
    low = x - high
    hi = x * x
    return hi, ((high * high - hi) + 2 * high * low) + low * low


def two_product(a, b):
    """a·b = hi + lo exactly (Dekker's product with Veltkamp's split)."""

    def split(v):
        c = 134217729.0 * v
        high = c - (c - v)
        return high, v - high

    hi = a * b
    ah, al = split(a)
    bh, bl = split(b)
    return hi, ((ah * bh - hi) + ah * bl + al * bh) + al * bl


def erfc_kernel(a):
    """erfc. scipy.special.erfc (Cephes) evaluates exp(-x²) of a rounded x² and so loses up to 255
    ulps for x >= 0.5 in float64 (measured against mpmath on [0.5, 26.5]: median 14 ulps; PyTorch's
    Sleef kernel is within 1.5 ulps there, so the oracle flagged correct results). For x >= 0.5 the
    reference computes erfcx(x)·exp(-x²) with x² split exactly, x² = hi + lo, exp(-x²) =
    exp(-hi)·(1 - lo) (|lo| <= u·x², its square negligible): at most 3.2 ulps measured (erfcx is
    Faddeeva's, accurate to about an ulp); below 0.5 erfc >= 0.48 and Cephes' 1 - erf is exact enough."""
    xp = namespace_of(a)
    sp = special_of(xp)
    if a.dtype != xp.float64:
        return sp.erfc(a)
    hi, lo = two_square(a)
    with np.errstate(over="ignore", invalid="ignore"):
        tail = sp.erfcx(a) * xp.exp(-hi) * (1 - lo)
    return xp.where(a >= 0.5, xp.where(xp.isnan(tail), 0.0, tail), sp.erfc(a))


def gauss(x):
    """φ(x) = e^{-x²/2} / √(2π) with x² split exactly (the rounding of x² alone would move the
    result by x²u/2 relative: 20 ulps at x = 9)."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        hi, lo = two_square(x)
        lo = np.where(np.isfinite(lo), lo, 0.0)
        return np.exp(-hi / 2) * (1 - lo / 2) * _INV_SQRT_2PI


def ncdf(x):
    """Φ(x) = erfc(-x/√2) / 2 with x/√2 a double-double (the erfc kernel of the pointwise rules:
    3.2 ulps measured); erfc(h + l) = erfc(h) - (2/√π) e^{-h²} l to first order."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        h, l = two_product(-x, _INV_SQRT2_HI)
        l = l - x * _INV_SQRT2_LO
        l = np.where(np.isfinite(l), l, 0.0)
        return (erfc_kernel(h) - (2 / math.sqrt(math.pi)) * np.exp(-h * h) * l) / 2


def ndtr_d1(x):
    """Φ' = φ, e^{-x²/2}/√(2π) with x² split exactly (PyTorch's composite differentiates erf of a
    rounded t = x·√½ and squares t rounded again: 1.5·x²u relative)."""
    return gauss(x)


def ndtr_d2(x):
    """Φ'' = -x·φ."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return -x * gauss(x)


def ndtr_d3(x):
    """The third derivative (x² - 1)·φ, with x² - 1 as (x - 1)(x + 1): no cancellation at its zeros ±1."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return (x - 1) * (x + 1) * gauss(x)


# ---- inverse trigonometric and hyperbolic: 1 - x² as (1 - x)(1 + x), 1 + x² without overflow ---


def _one_minus_square(x):
    """1 - x² = (1 - x)(1 + x): 1 - x exact for x >= 1/2 (Sterbenz), no cancellation near ±1
    (PyTorch's 1 - x·x: 4.5e6 ulps at 1 - 1.3e-8)."""
    return (1 - x) * (1 + x)


def asin_d1(x):
    """(1 - x²)^(-1/2)."""
    return 1 / np.sqrt(_one_minus_square(_f64(x)))


def asin_d2(x):
    """x (1 - x²)^(-3/2)."""
    x = _f64(x)
    q = _one_minus_square(x)
    return x / (q * np.sqrt(q))


def asin_d3(x):
    """(1 + 2x²) (1 - x²)^(-5/2)."""
    x = _f64(x)
    q = _one_minus_square(x)
    return (1 + 2 * x * x) / (q * q * np.sqrt(q))


def atanh_d1(x):
    """1 / (1 - x²)."""
    return 1 / _one_minus_square(_f64(x))


def atanh_d2(x):
    """2x / (1 - x²)²."""
    x = _f64(x)
    r = 1 / _one_minus_square(x)
    return 2 * x * r * r


def atanh_d3(x):
    """(2 + 6x²) / (1 - x²)³."""
    x = _f64(x)
    r = 1 / _one_minus_square(x)
    return (2 + 6 * x * x) * r * r * r


_HUGE = 1e150  # past it x² + 1 is x² to the last bit, and x² overflows from 1.3e154 on


def _inv_one_plus_square(x):
    """w = 1 / (1 + x²), and x·w: past 1e150 from t = 1/x (w = t², x·w = t), so that no x² overflows
    (PyTorch's 1 / (x·x + 1) is 0 from 1.3e154 on, where the exact value is a normal number)."""
    x = _f64(x)
    big = np.abs(x) > _HUGE
    with np.errstate(over="ignore", invalid="ignore"):
        t = 1 / np.where(big, x, 1.0)
        w = np.where(big, t * t, 1 / (x * x + 1))
        return w, np.where(big, t, x * w)


def atan_d1(x):
    """1 / (1 + x²)."""
    return _inv_one_plus_square(x)[0]


def atan_d2(x):
    """-2x / (1 + x²)² = -2 (x w) w."""
    w, xw = _inv_one_plus_square(x)
    return -2 * xw * w


def atan_d3(x):
    """(6x² - 2) / (1 + x²)³ = (6 (x w)² - 2 w²) w."""
    w, xw = _inv_one_plus_square(x)
    return (6 * xw * xw - 2 * w * w) * w


def _inv_sqrt_one_plus_square(x):
    """s = (1 + x²)^(-1/2), and x·s: past 1e150 s = |1/x| (x² + 1 = x² there), x·s = sgn x."""
    x = _f64(x)
    big = np.abs(x) > _HUGE
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.where(big, np.abs(1 / np.where(big, x, 1.0)), 1 / np.sqrt(x * x + 1))
        return s, np.where(big, np.sign(x), x * s)


def asinh_d1(x):
    """(1 + x²)^(-1/2)."""
    return _inv_sqrt_one_plus_square(x)[0]


def asinh_d2(x):
    """-x (1 + x²)^(-3/2) = -(x s) s²."""
    s, xs = _inv_sqrt_one_plus_square(x)
    return -xs * s * s


def asinh_d3(x):
    """(2x² - 1) (1 + x²)^(-5/2) = (2 (x s)² - s²) s³."""
    s, xs = _inv_sqrt_one_plus_square(x)
    return (2 * xs * xs - s * s) * s * s * s


def ndtri_d1(p):
    """ndtri'(p) = √(2π) e^{y²/2}, y = ndtri(p). The rounding of y moves e^{y²/2} by the relative
    y²·u (1400 ulps at p = 1e-300), so y is carried to double-double by one Newton step on
    Φ(y) = p: δ = (p - Φ(y)) / φ(y) (for y > 0 from Φ(-y) - (1 - p), 1 - p exact), and
    e^{(y+δ)²/2} = e^{y²/2} e^{yδ} (δ² ~ u² y² negligible). Φ's 3.2 ulps (:func:`ncdf`) move δ by
    3.2u·p/φ(y) ~ 3.2u/|y|, so e^{yδ} by 3.2u; e^{y²/2} with y² split exactly (:func:`exp_square`)."""
    p = _f64(p)
    y = special_of(np).ndtri(p)
    with np.errstate(over="ignore", invalid="ignore"):
        inv_phi = exp_square(y, 0.5) * math.sqrt(2 * math.pi)
        residual = np.where(y < 0, p - ncdf(y), ncdf(-y) - (1 - p))
        out = inv_phi * np.exp(y * residual * inv_phi)
    return np.where(np.isfinite(inv_phi), out, inv_phi)  # (past the range: inf, as PyTorch)


def gelu(x):
    x = _f64(x)
    with np.errstate(invalid="ignore"):
        out = x * ncdf(x)
    return np.where(x == -np.inf, -0.0, out)


def _mp_gelu_d1(x):
    import mpmath

    return mpmath.ncdf(x) + x * mpmath.npdf(x)


def gelu_d1(x):
    """Φ(x) + x φ(x); zero at x = -0.7518: mpmath where the two cancel."""
    x = _f64(x)
    with np.errstate(invalid="ignore", over="ignore"):
        cdf, tail = ncdf(x), x * gauss(x)
        tail = np.where(np.isinf(x), 0.0, tail)
        out = cdf + tail
        return mp_where(cancels(out, cdf, tail), out, x, _mp_gelu_d1)


def gelu_d2(x):
    """φ(x) (2 - x²), with 2 - x² = (2 - hi) - lo exact to a rounding (x² = hi + lo)."""
    x = _f64(x)
    with np.errstate(invalid="ignore", over="ignore"):
        hi, lo = two_square(x)
        lo = np.where(np.isfinite(lo), lo, 0.0)
        out = gauss(x) * ((2 - hi) - lo)
        return np.where(np.isinf(x), 0.0, out)


# ---- gelu, tanh form: x/2 (1 + tanh z) = x s(2z), z = √(2/π) (x + κ x³) -----------------------
# The exact value uses the mathematical √(2/π) and κ = 0.044715. The float64 z carries a few
# roundings, which s(2z) amplifies by 2|z| s(-2z) (relative): where z < -1 (x < -1.2) the
# elements are recomputed in mpmath; elsewhere the amplification is below 2.

_BETA = math.sqrt(2 / math.pi)
_KAPPA = 0.044715


def _mp_tanh_parts(x):
    import mpmath

    beta = mpmath.sqrt(2 / mpmath.pi)
    kappa = mpmath.mpf("0.044715")
    z = beta * (x + kappa * x**3)
    dz = beta * (1 + 3 * kappa * x**2)
    ddz = 6 * beta * kappa * x
    return z, dz, ddz


def _mp_gelu_tanh(x):
    z, _, _ = _mp_tanh_parts(x)
    return x * _mp_sig(2 * z)  # x/2 (1 + tanh z) without the cancelling 1 + tanh z


def _mp_gelu_tanh_d1(x):
    z, dz, _ = _mp_tanh_parts(x)
    s, sb = _mp_sig(2 * z), _mp_sig(-2 * z)
    return s * (1 + 2 * x * dz * sb)


def _mp_gelu_tanh_d2(x):
    import mpmath

    z, dz, ddz = _mp_tanh_parts(x)
    s, sb = _mp_sig(2 * z), _mp_sig(-2 * z)
    return 2 * s * sb * (2 * dz + x * ddz - 2 * x * dz * dz * mpmath.tanh(z))


def _tanh_parts(x):
    z = _BETA * (x + _KAPPA * (x * x * x))
    dz = _BETA * (1 + 3 * _KAPPA * (x * x))
    return z, dz


def gelu_tanh(x):
    x = _f64(x)
    with np.errstate(invalid="ignore", over="ignore"):
        z, _ = _tanh_parts(x)
        out = np.where(np.isinf(x), np.where(x > 0, x, -0.0), x * sigmoid(2 * z))
        return mp_where(z < -1, out, x, _mp_gelu_tanh)


def gelu_tanh_d1(x):
    """s(2z) (1 + 2 x z' s(-2z)) (the derivative of x s(2z))."""
    x = _f64(x)
    with np.errstate(invalid="ignore", over="ignore"):
        z, dz = _tanh_parts(x)
        tail = 2 * x * dz * sigmoid(-2 * z)
        inner = 1 + tail
        out = np.where(np.isinf(x), np.where(x > 0, 1.0, 0.0), sigmoid(2 * z) * inner)
        return mp_where((z < -1) | cancels(inner, 1.0, tail), out, x, _mp_gelu_tanh_d1)


def gelu_tanh_d2(x):
    """2 s s̄ (2 z' + x z'' - 2 x z'² tanh z), s = s(2z), s̄ = s(-2z), z'' = 6 √(2/π) κ x. s s̄ is
    e^-2|z| in the tails, so z's rounding is amplified by 2|z| on both sides: mpmath past |z| = 1."""
    x = _f64(x)
    with np.errstate(invalid="ignore", over="ignore"):
        z, dz = _tanh_parts(x)
        a, b, c = 2 * dz, x * (6 * _BETA * _KAPPA * x), -2 * x * dz * dz * np.tanh(z)
        inner = a + b + c
        out = np.where(np.isinf(x), 0.0, 2 * sigmoid_d1(2 * z) * inner)
        return mp_where((np.abs(z) > 1) | cancels(inner, a, b, c), out, x, _mp_gelu_tanh_d2)


# ---- exp(c·x²) -------------------------------------------------------------------------------


def exp_square(x, c):
    """e^{c·x²} with x² = hi + lo split exactly: e^{c·hi}·(1 + c·lo) (|c·lo| <= |c|·u·x², its
    square negligible). The rounding of x² alone moves e^{c x²} by the relative |c|·x²·u: 340
    ulps for erf'(26) = (2/√π) e^{-x²}, 500 for ndtri'(1e-226) = √(2π) e^{y²/2}."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        hi, lo = two_square(x)
        lo = np.where(np.isfinite(lo), lo, 0.0)
        return np.exp(c * hi) * (1 + c * lo)


# ---- sinc(x) = sin(πx) / (πx) -------------------------------------------------------------------


def _reduce_half_turns(x):
    """r = x - 2·round(x/2) in [-1, 1], exact (x and 2·round(x/2) are within 1 of each other)."""
    return x - 2 * np.round(x / 2)


def sinpi(x):
    """sin(πx) with the argument reduced exactly and reflected into [-1/2, 1/2] (1 - r exact by
    Sterbenz): exact zeros at the integers, where sin of a rounded πx is off by u·π|x|."""
    x = _f64(x)
    with np.errstate(invalid="ignore"):
        r = _reduce_half_turns(x)
        r = np.where(r > 0.5, 1 - r, np.where(r < -0.5, -1 - r, r))
        return np.sin(np.pi * r)


def cospi(x):
    """cos(πx) = sin(π(1/2 - |r|)), r reduced as in :func:`sinpi` (1/2 - |r| exact for |r| >= 1/4,
    where cos has its zeros)."""
    x = _f64(x)
    with np.errstate(invalid="ignore"):
        return sinpi(0.5 - np.abs(_reduce_half_turns(x)))


# Taylor coefficients of sinc about 0: sinc(x) = Σ_j C_j x^(2j), C_j = (-1)^j π^(2j) / (2j+1)!
_SINC_TAYLOR = [(-1) ** j * math.pi ** (2 * j) / math.factorial(2 * j + 1) for j in range(16)]
_SINC_SERIES_BELOW = 0.25  # |x| < 1/4: π²x² < 0.62, sixteen terms reach far below u


def _sinc_series(x, order):
    """The ``order``-th derivative of sinc (0 to 3) near 0 from its Taylor series, Horner in x²:
    the closed forms cancel to every digit as x → 0 (sinc'(x) ≈ -π²x/3)."""
    y = x * x
    total = np.zeros_like(x)
    for j in range(len(_SINC_TAYLOR) - 1, (order + 1) // 2 - 1, -1):
        falling = math.prod(range(2 * j - order + 1, 2 * j + 1))  # (2j)! / (2j - order)!
        total = total * y + _SINC_TAYLOR[j] * falling
    return total * x if order % 2 else total


def _mp_sinc_parts(x):
    import mpmath

    s = mpmath.sinpi(x) / (mpmath.pi * x)
    d1 = (mpmath.cospi(x) - s) / x
    d2 = -(mpmath.pi**2) * s - 2 * d1 / x
    d3 = -(mpmath.pi**2) * d1 - 2 * d2 / x + 2 * d1 / (x * x)
    return s, d1, d2, d3


def sinc(x):
    """sin(πx)/(πx), 1 at 0: sinpi (exact at the integers) over π·x (a tiny x gives sin(t)/t = 1
    with the same rounded t)."""
    x = _f64(x)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        out = sinpi(x) / (np.pi * x)
    return np.where(x == 0, 1.0, out)


def _sinc_closed(x, order):
    """The derivatives of sinc away from 0: d1 = (cos πx - sinc)/x, d2 = -π² sinc - 2 d1/x,
    d3 = -π² d1 - 2 d2/x + 2 d1/x²; mpmath where a sum cancels (near the derivatives' zeros)."""
    s = sinc(x)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        c = cospi(x)
        d1 = (c - s) / x
        out, bad = d1, cancels(c - s, c, s)
        if order >= 2:
            a, b = -(np.pi**2) * s, -2 * d1 / x
            d2 = a + b
            out, bad = d2, bad | cancels(d2, a, b)
        if order == 3:
            a, b, e = -(np.pi**2) * d1, -2 * d2 / x, 2 * d1 / (x * x)
            out = a + b + e
            bad = bad | cancels(out, a, b, e)
    return mp_where(bad, out, x, lambda v: _mp_sinc_parts(v)[order])


def _sinc_derivative(order):
    def kernel(x):
        x = _f64(x)
        small = np.abs(x) < _SINC_SERIES_BELOW
        far = _sinc_closed(np.where(small, 1.0, x), order)
        out = np.where(small, _sinc_series(x, order), far)
        return np.where(x == 0, 0.0, out) if order % 2 else out  # +0 at 0, PyTorch's sinc'(0)

    kernel.__name__ = f"sinc_d{order}"
    kernel.__doc__ = (
        f"sinc's derivative of order {order}: its Taylor series below |x| = 1/4, the closed form above."
    )
    return kernel


sinc_d1, sinc_d2, sinc_d3 = (_sinc_derivative(k) for k in (1, 2, 3))


# ---- logit(x) = log(x / (1 - x)) --------------------------------------------------------------


def logit_d1(x):
    """1 / (x (1 - x)), divided in two steps (x (1 - x) of a tiny x stays representable)."""
    x = _f64(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return 1 / x / (1 - x)


def logit_d2(x):
    """(2x - 1) / (x (1 - x))²: 2x - 1 exact for x >= 1/4 (no cancellation at the zero 1/2, where
    the product rule of PyTorch's g / (x (1 - x)) subtracts (1 - x) g' - x g'), divided twice (±inf
    at the poles 0 and 1, the limits, where the product rule forms 0 · inf = nan)."""
    x = _f64(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = x * (1 - x)
        return (2 * x - 1) / q / q


def logit_d3(x):
    """2 (3 (x - 1/2)² + 1/4) / (x (1 - x))³: a sum of positive terms."""
    x = _f64(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = x * (1 - x)
        h = x - 0.5
        return 2 * (3 * h * h + 0.25) / q / q / q


# ---- erfinv ------------------------------------------------------------------------------------

_HALF_SQRT_PI = math.sqrt(math.pi) / 2


def _erfinv_parts(x):
    """y = erfinv(x) and erfinv'(x) = (√π/2) e^{y²}. From the rounded y, e^{y²} carries y's
    rounding times 2y² (67 ulps at x = 1 - 6e-16); for |x| >= 1/2 the reference uses
    e^{y²} = erfcx(|y|) / erfc(|y|) = erfcx(|y|) / (1 - |x|) instead (1 - |x| exact, erfcx's
    condition number about 1): a few ulps."""
    sp = special_of(np)
    y = sp.erfinv(x)
    ax = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tail = _HALF_SQRT_PI * sp.erfcx(np.abs(y)) / (1 - ax)
        d1 = np.where(ax >= 0.5, tail, _HALF_SQRT_PI * exp_square(y, 1.0))
    return y, np.where(ax == 1, np.inf, d1)


def erfinv_d1(x):
    return _erfinv_parts(_f64(x))[1]


def erfinv_d2(x):
    """erfinv'' = 2 y erfinv'², a product of accurate factors; below |x| = 1e-9 its first Taylor
    term 2 (√π/2)³ x (the next is x² smaller), rounded once, where y is subnormal or tiny."""
    x = _f64(x)
    y, d1 = _erfinv_parts(x)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.abs(x) < 1e-9, (2 * _HALF_SQRT_PI**3) * x, 2 * y * d1 * d1)


def erfinv_d3(x):
    """erfinv''' = 2 erfinv'³ (1 + 4y²)."""
    y, d1 = _erfinv_parts(_f64(x))
    with np.errstate(invalid="ignore", over="ignore"):
        return 2 * d1 * d1 * d1 * (1 + 4 * y * y)


# ---- erfcx(x) = e^{x²} erfc(x) and log Φ(x) ----------------------------------------------------

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_INV_SQRT_PI = 1 / math.sqrt(math.pi)
#: from here on the asymptotic series of erfcx, its terms (-1)^n (2n-1)!! / (2x²)^n, summed to
#: n = 16, is exact to float64 (the first term left out is below 1e-22 of the sum at x = 12)
_ERFCX_ASYMPTOTIC = 12.0
_ERFCX_TERMS = 17


def _mp_erfcx(x, order=0):
    """erfcx and its derivatives at 40 digits: f' = 2x f - 2/√π, f'' = 2f + 2x f' (the
    recurrences lose 2 log10(x) digits: fewer than 3 below x = 12, where mpmath is used)."""
    import mpmath

    f = mpmath.exp(x * x) * mpmath.erfc(x)
    d1 = 2 * x * f - 2 / mpmath.sqrt(mpmath.pi)
    return (f, d1, 2 * f + 2 * x * d1)[order]


def _erfcx_series(x, order):
    """The asymptotic series of erfcx differentiated ``order`` times, in t = 1/x (no x² overflows):
    (1/√π) Σ_n (-1)^n (2n-1)!!/2^n · x^-(2n+1), term by term."""
    t = 1 / x
    t2 = t * t
    total = np.zeros_like(x)
    for n in range(_ERFCX_TERMS - 1, -1, -1):
        c = (-1) ** n * math.prod(range(1, 2 * n, 2)) / 2.0**n
        p = 2 * n + 1  # the power of 1/x in the term
        total = total * t2 + c * (1, -p, p * (p + 1))[order]
    return _INV_SQRT_PI * total * t ** (order + 1)


def erfcx(x):
    """erfcx. scipy's Faddeeva erfcx is within an ulp for x >= 1/2 (2.5 ulps near 0); below 0 it
    forms 2 e^{x²} - erfcx(-x) with a rounded x² (251 ulps at -23): here e^{x²} with x² split
    exactly (exp_square; no cancellation: erfcx(-x) <= 1 < e^{x²}), and for |x| < 1/2 the product
    e^{x²}·erfc(x) (erfc >= 0.47 there, to half an ulp)."""
    x = _f64(x)
    sp = special_of(np)
    with np.errstate(over="ignore", invalid="ignore"):
        negative = 2 * exp_square(x, 1.0) - sp.erfcx(-x)
        small = exp_square(x, 1.0) * sp.erfc(x)
        return np.where(np.abs(x) < 0.5, small, np.where(x < 0, negative, sp.erfcx(x)))


def _erfcx_derivative(order):
    """erfcx' = 2x·f - 2/√π and erfcx'' = 2f + 2x·f': no cancellation for x <= 0 (terms of one
    sign); for x > 0 both cancel, to 2·log10(x) digits (PyTorch's 2x·result - 2/√π: 4.5e15 ulps at
    2e11): the asymptotic series from x = 12, mpmath where the sum cancels below it."""

    def kernel(x):
        x = _f64(x)
        f = erfcx(x)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            d1 = 2 * x * f - _TWO_OVER_SQRT_PI
            out = d1 if order == 1 else 2 * f + 2 * x * d1
            series = _erfcx_series(np.where(x >= _ERFCX_ASYMPTOTIC, x, _ERFCX_ASYMPTOTIC), order)
            out = np.where(x >= _ERFCX_ASYMPTOTIC, series, out)
            terms = (2 * x * f, _TWO_OVER_SQRT_PI) if order == 1 else (2 * f, 2 * x * d1)
            bad = (x > 0) & (x < _ERFCX_ASYMPTOTIC) & cancels(out, *terms)
        return mp_where(bad, out, x, _mp_erfcx, order=order)

    return kernel


erfcx_d1 = _erfcx_derivative(1)
erfcx_d2 = _erfcx_derivative(2)


def erfcx_d3(x):
    """The third derivative, 4f' + 2x·f'' (no check differentiates three times: the float64 sum)."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return 4 * erfcx_d1(x) + 2 * x * erfcx_d2(x)


def log_ndtr_d1(x):
    """(log Φ)' = φ/Φ. PyTorch's exp(-(log Φ + x²/2))/√(2π) of the saved result cancels for x << 0
    (nan at -1e150). For x < 0: φ/Φ = √(2/π) / erfcx(t), t = -x/√2 a double-double h + l
    (erfcx(h + l) = erfcx(h) + erfcx'(h)·l to first order); for x >= 0 the exact φ over Φ."""
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        h, l = two_product(-x, _INV_SQRT2_HI)
        l = np.where(np.isfinite(l), l - x * _INV_SQRT2_LO, 0.0)
        f = erfcx(h)
        f = f + (2 * h * f - _TWO_OVER_SQRT_PI) * l
        return np.where(x < 0, math.sqrt(2 / math.pi) / f, gauss(x) / ncdf(x))


def log_ndtr_d2(x):
    """(log Φ)'' = -r·(x + r), r = φ/Φ: x + r cancels for x < 0 (r -> -x). There it is
    r·erfcx'(t) / (√2·erfcx(t)), t = -x/√2 (from erfcx' = 2t·erfcx - 2/√π), with the exact erfcx'."""
    x = _f64(x)
    r = log_ndtr_d1(x)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        t = np.where(x < 0, -x * _INV_SQRT2_HI, 0.0)
        left = r * erfcx_d1(t) / (math.sqrt(2) * erfcx(t))
        return np.where(x < 0, left, -r * (x + r))


def log_ndtr_d3(x):
    """The third derivative, -d2·(x + r) - r·(1 + d2) (no check differentiates three times: the
    float64 formula of the exact r and d2)."""
    x = _f64(x)
    r, d2 = log_ndtr_d1(x), log_ndtr_d2(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return -d2 * (x + r) - r * (1 + d2)


# ---- logaddexp(a, b) = log(e^a + e^b) (base e or 2) ---------------------------------------------

_LN2_HI = 0.6931471805599453  # ln 2 as a double-double
_LN2_LO = 2.3190468138462996e-17


def two_sum(a, b):
    """a + b = s + err exactly (Knuth's TwoSum); err is 0 where s is not finite."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(err), err, 0.0)


def _logaddexp_difference(a, b, base):
    """z = k·(a - b), k = ln(base), as a double-double (h, l): a - b rounded alone moves
    σ(k(a - b)) by the relative |a - b|·u (2e8 ulps at (-740, -30), where e^-710 is subnormal)."""
    d, dl = two_sum(a, -b)
    if base == 2:
        h, l = two_product(d, _LN2_HI)
        l = np.where(np.isfinite(l), l + d * _LN2_LO + dl * _LN2_HI, 0.0)
        return h, l
    return d, dl


def logaddexp_weight(a, b, base):
    """∂/∂a logaddexp = σ(z), z = k(a - b) = h + l: σ(h) + σ'(h)·l to first order (l²·σ''
    is below u²), σ of e^-|h| (no exp overflows, no 1 - s)."""
    a, b = _f64(a), _f64(b)
    with np.errstate(over="ignore", invalid="ignore"):
        h, l = _logaddexp_difference(a, b, base)
        return sigmoid(h) + sigmoid_d1(h) * l


def logaddexp_weight_d1(a, b, base):
    """σ'(z) = σ(z)σ(-z) at z = h + l: σ'(h) + σ''(h)·l (∂²/∂a² logaddexp is k times it). At an
    infinite input PyTorch's value, e/(1 + e)² of e = base^(b - a) by autograd of its formula: nan
    where e = inf (the limit is 0)."""
    a, b = _f64(a), _f64(b)
    with np.errstate(over="ignore", invalid="ignore"):
        h, l = _logaddexp_difference(a, b, base)
        e = np.exp2(b - a) if base == 2 else np.exp(b - a)
        pytorch = e / ((e + 1) * (e + 1))
        return np.where(np.isinf(a) | np.isinf(b), pytorch, sigmoid_d1(h) + sigmoid_d2(h) * l)


def _mp_logaddexp(a, b, base):
    import mpmath

    hi, lo = max(a, b), min(a, b)
    k = mpmath.log(2) if base == 2 else mpmath.mpf(1)
    return hi + mpmath.log1p(mpmath.exp(k * (lo - hi))) / k


def logaddexp(a, b, base):
    """max + log1p(base^-|a - b|)/ln(base), with the rounding of |a - b| corrected to first order
    (the term's derivative in |a - b| is -σ(-k|a - b|)); where max < 0 and the term cancels it (the
    result near 0: logaddexp2(-1, -1) = 0 came out 2.2e-16), mpmath, those elements only."""
    a, b = np.broadcast_arrays(_f64(a), _f64(b))
    with np.errstate(over="ignore", invalid="ignore"):
        top = np.maximum(a, b)
        d, dl = two_sum(top, -np.minimum(a, b))  # |a - b| + dl
        if base == 2:
            term = np.log1p(np.exp2(-d)) / math.log(2)
            k = math.log(2)
        else:
            term = np.log1p(np.exp(-d))
            k = 1.0
        term = term - sigmoid(-k * d) * dl
        out = np.where(np.isinf(a) & (a == b), a, top + term)
        bad = cancels(out, top, term) & np.isfinite(a) & np.isfinite(b)
    if not bad.any():
        return out
    import mpmath

    out = np.array(out, copy=True)
    with mpmath.workdps(_DPS):
        out[bad] = [
            rounded(_mp_logaddexp(mpmath.mpf(float(x)), mpmath.mpf(float(y)), base))
            for x, y in zip(a[bad], b[bad])
        ]
    return out


# ---- atan2's and hypot's partials: rational functions of (p, q) scaled by a power of 2 -----------

#: name: (numerator and denominator of the function of the scaled p', q' (r2 = p'² + q'², in
#: [1/4, 2]), the power of 2^-e the result is scaled by, e the exponent of max(|p|, |q|))
_SCALED = {
    "atan2_partial": (lambda p, q, r2: q / r2, 1),  # q / (p² + q²)
    "atan2_partial_pq": (lambda p, q, r2: p * q / (r2 * r2), 2),  # p q / r⁴
    "atan2_partial_diff": (lambda p, q, r2: (p - q) * (p + q) / (r2 * r2), 2),  # (p² - q²) / r⁴
    "hypot_partial": (lambda p, q, r2: p / np.sqrt(r2), 0),  # p / r
    "hypot_partial_qq": (lambda p, q, r2: q * q / (r2 * np.sqrt(r2)), 1),  # q² / r³
    "hypot_partial_pq": (lambda p, q, r2: p * q / (r2 * np.sqrt(r2)), 1),  # p q / r³
}


def scaled_partial(name, p, q):
    """The partial ``name`` of _SCALED at finite (p, q), not both 0: p and q scaled by 2^-e
    (exactly: frexp's e of max(|p|, |q|)), so that p² + q² neither overflows (past 1.3e154) nor
    underflows (below 1.5e-154), is a sum of two positive terms (no cancellation) and p² - q² is
    (p - q)(p + q); the result scaled back by ldexp (once: the exact value's own range)."""
    p, q = np.broadcast_arrays(_f64(p), _f64(q))
    fn, power = _SCALED[name]
    _, e = np.frexp(np.maximum(np.abs(p), np.abs(q)))
    ps, qs = np.ldexp(p, -e), np.ldexp(q, -e)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.ldexp(fn(ps, qs, ps * ps + qs * qs), -power * e)


# ---- lerp, addcmul, addcdiv: a sum of a product, rounded once (compensated) ----------------------
# PyTorch's a + w(b - a), a + v·t1·t2 and a + v·t1/t2 round each step: where the sum cancels the
# result is off by the rounding of the product relative to it (1.7e16 ulps at addcmul(-6.93, 7.7,
# 3, value=0.3)). Here each step is error-free (TwoSum, Dekker's product, the exact remainder of
# a division) and the errors are added back once: the exact value to within an ulp of the result
# plus u²·(|a| + |product|). Where a correction is not finite (an input or a term past the range)
# it is dropped; where the result is not finite, PyTorch's formula.


def _finite_or_zero(x):
    return np.where(np.isfinite(x), x, 0.0)


def two_product_scaled(a, b):
    """a·b = hi + lo exactly at any exponents: Dekker's product of the mantissas in [1/2, 1)
    (frexp), scaled back by ldexp (Veltkamp's split overflows past 1e300; lo is rounded only
    where it is subnormal, below the ulp of any normal hi)."""
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    hi, lo = two_product(ma, mb)
    return a * b, np.ldexp(lo, ea + eb) + (np.ldexp(hi, ea + eb) - a * b)


_DEEP_CANCEL = 2.0**-40  # |a + head| below this fraction of |a| + |head|: the tail's u² matters


def _sum_with_errors(a, head, tail, exact, *inputs):
    """a + head + tail, with a + head = s + sl exactly and tail the product's error terms (their
    own rounding is u² of |a| + |head|). Where the sum cancels deeper than 2^-40 of its terms, the
    finite elements are recomputed with ``exact(*mpf inputs)`` in mpmath at 2200 bits (every sum
    of float64 products exact)."""
    s, sl = two_sum(a, head)
    out = s + _finite_or_zero(sl + tail)
    deep = np.isfinite(out) & (np.abs(out) < _DEEP_CANCEL * (np.abs(a) + np.abs(head))) & (head != 0)
    if not deep.any():
        return out
    import mpmath

    out = np.array(out, copy=True)
    with mpmath.workprec(2200):
        out[deep] = [rounded(exact(*map(mpmath.mpf, map(float, args)))) for args in zip(*(t[deep] for t in inputs))]
    return out


def lerp(a, b, weight):
    """a + w(b - a): b - a = d + dl, w·d = p + pl exactly; exact at w = 0 and w = 1 (PyTorch's
    |w| < 1/2 split keeps that too)."""
    a, b, w = np.broadcast_arrays(_f64(a), _f64(b), _f64(weight))
    with np.errstate(all="ignore"):
        d, dl = two_sum(b, -a)
        p, pl = two_product_scaled(w, d)
        out = _sum_with_errors(a, p, _finite_or_zero(pl) + w * dl, lambda x, y, t: x + t * (y - x), a, b, w)
        pytorch = np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))
        return np.where(np.isfinite(out), out, pytorch)


def addcmul(a, t1, t2, value):
    """a + v·t1·t2: t1·t2 = p + pl, v·p = q + ql exactly."""
    a, t1, t2 = np.broadcast_arrays(_f64(a), _f64(t1), _f64(t2))
    with np.errstate(all="ignore"):
        p, pl = two_product_scaled(t1, t2)
        q, ql = two_product_scaled(np.full_like(p, value), p)
        tail = _finite_or_zero(ql) + value * _finite_or_zero(pl)
        out = _sum_with_errors(a, q, tail, lambda x, u, v: x + value * u * v, a, t1, t2)
        return np.where(np.isfinite(out), out, a + value * (t1 * t2))


def addcdiv(a, t1, t2, value):
    """a + v·t1/t2: t1/t2 = q + r/t2 with r = t1 - q·t2 exactly (the remainder of a correctly
    rounded quotient is representable: (t1 - h) - l of q·t2 = h + l), v·q = m + ml exactly."""
    a, t1, t2 = np.broadcast_arrays(_f64(a), _f64(t1), _f64(t2))
    with np.errstate(all="ignore"):
        q = t1 / t2
        h, l = two_product_scaled(q, t2)
        ql = ((t1 - h) - l) / t2
        m, ml = two_product_scaled(np.full_like(q, value), q)
        tail = _finite_or_zero(ml) + _finite_or_zero(value * ql)
        out = _sum_with_errors(a, m, tail, lambda x, u, v: x + value * u / v, a, t1, t2)
        return np.where(np.isfinite(out), out, a + value * (t1 / t2))


# ---- pow(x, y)'s partials -------------------------------------------------------------------------
# PyTorch's y·x^(y - 1), differentiated by autograd, forms x^(y - 2) of a rounded y - 2 (relative
# error (y - 2)'s rounding times log x: up to 745u), sums terms that overflow separately (inf - inf
# where the partial is finite or ±inf) and multiplies its mask's zero by an infinite pow (0·inf at
# y = 0); d/dy of it is 0 at y = 0 (the mask), where x^(y - 1)(1 + y log x) is 1/x. Here each
# partial is one kernel of (x, y), exact at positive finite x, PyTorch's formula elsewhere.


def _pow_shifted(x, y, k):
    """x^(y - k) with the rounding of y - k corrected: y - k = s + e exactly (TwoSum), x^(s + e) =
    x^s + x^s·e·log x to first order (|e·log x| <= u·|s·log x| <= 745u wherever x^s is finite and
    not 0: the square is below u²), at positive finite x; x^s elsewhere."""
    s, e = two_sum(y, -k)
    out = np.power(x, s)
    fix = (e != 0) & (x > 0) & (x < np.inf)
    return np.where(fix, out + out * (e * np.log(np.where(fix, x, 1.0))), out)


def pow_partial_self(x, y):
    """∂/∂x x^y = y·x^(y - 1); 0 where y = 0 (PyTorch's mask: x^0 is constant, also at x = 0)."""
    x, y = np.broadcast_arrays(_f64(x), _f64(y))
    with np.errstate(all="ignore"):
        return np.where(y == 0, 0.0, y * _pow_shifted(x, y, 1))


def _pow_exact_here(x, y):
    """Where pow's partials are exact: positive finite x, finite y (PyTorch's formulas elsewhere)."""
    return (x > 0) & (x < np.inf) & np.isfinite(y)


def pow_partial_self_self(x, y):
    """∂²/∂x² x^y = y(y - 1)·x^(y - 2) (y(y - 1) as y·s + y·e, y - 1 = s + e exactly): 0 at y = 0
    and 1. Outside the exact region PyTorch's formula differentiated: its mask at y = 0 times the
    derivative of y·x^(y - 1), nan where x^(-2) is infinite (x = 0)."""
    x, y = np.broadcast_arrays(_f64(x), _f64(y))
    with np.errstate(all="ignore"):
        s, e = two_sum(y, -1.0)
        exact = np.where((y == 0) | (y == 1), 0.0, (y * s + y * e) * _pow_shifted(x, y, 2))
        inner = np.where(y == 1, 0.0, (y - 1) * np.power(x, y - 2))
        pytorch = np.where(y == 0, 0 * (y * inner), y * inner)
        return np.where(_pow_exact_here(x, y), exact, pytorch)


def pow_partial_exponent(x, y):
    """∂/∂y x^y = x^y·log x; 0 where x = 0 and y >= 0 (PyTorch's pow_backward_exponent)."""
    x, y = np.broadcast_arrays(_f64(x), _f64(y))
    with np.errstate(all="ignore"):
        zero_base = (x == 0) & (y >= 0)
        return np.where(zero_base, 0.0, np.power(x, y) * np.log(np.where(zero_base, 1.0, x)))


def _pow_mixed_pytorch(x, y, via):
    """PyTorch's ∂²/∂x∂y of x^y by autograd: of its base partial in y (``via`` "self") or of its
    exponent partial in x ("exponent"); each mask's zero times the masked branch's derivative
    (nan where that is infinite or nan, as in PyTorch)."""
    log_x = np.log(x)
    if via == "self":  # d/dy where(y == 0, 0, y·x^(y - 1))
        p = np.power(x, y - 1)
        d = p + y * np.where((x == 0) & (y >= 1), 0.0, p * log_x)
        return np.where(y == 0, 0 * d, d)
    # d/dx where(x == 0 & y >= 0, 0, x^y·log x)
    d = np.where(y == 0, 0.0, y * np.power(x, y - 1)) * log_x + np.power(x, y) / x
    return np.where((x == 0) & (y >= 0), 0 * d, d)


_MIXED_CANCEL = 0.25


def pow_partial_mixed(x, y, via):
    """∂²/∂x∂y x^y = x^(y - 1)·(1 + y·log x) in the exact region (1/x at y = 0, where PyTorch's
    mask gives 0); y·log x = t + tl exactly (Dekker), 1 + t + tl with TwoSum, mpmath where it
    cancels by more than 2 bits (y·log x in (-4/3, -4/5)). Elsewhere PyTorch's value
    along its route ``via`` (:func:`_pow_mixed_pytorch`: the two differ at x = 0)."""
    x, y = np.broadcast_arrays(_f64(x), _f64(y))
    with np.errstate(all="ignore"):
        exact_here = _pow_exact_here(x, y)
        t, tl = two_product(y, np.log(np.where(exact_here, x, 1.0)))  # y·log x, exactly
        total, total_l = two_sum(1.0, t)
        total = total + _finite_or_zero(total_l + tl)
        out = np.where(exact_here, _pow_shifted(x, y, 1) * total, _pow_mixed_pytorch(x, y, via))
        # log x's half ulp, relative, amplified by |t| / |1 + t|: at most 4 outside this band
        bad = exact_here & (np.abs(total) < _MIXED_CANCEL * np.abs(t))
    if not bad.any():
        return out
    import mpmath

    out = np.array(out, copy=True)
    with mpmath.workdps(_DPS):
        out[bad] = [
            rounded(mpmath.power(a, b - 1) * (1 + b * mpmath.log(a)))
            for a, b in ((mpmath.mpf(float(u)), mpmath.mpf(float(v))) for u, v in zip(x[bad], y[bad]))
        ]
    return out


# ---- the derivatives of I0, I1 (modified Bessel functions) and of their scaled forms -------------
# PyTorch's formulas cancel: i0e' = i1e - sgn·i0e and i1e' = i0e - i1e(sgn + 1/x) for large |x|
# (1.4e4 ulps at 1e4: both terms ~ 1/√(2πx), the difference ~ 1/(2x) of them), and I1'' (I1 - I1'/x +
# I1/x², differentiated by autograd) near 0, where I1''(x) ~ 3x/8 (2e31 ulps at 4e-16). Here, for
# x > 0 (the functions are even or odd: f⁽ᵐ⁾(-x) = (-1)^(ν+m) f⁽ᵐ⁾(x)):
#
#   (e^{-x} I_ν)⁽ᵐ⁾(x) = (1/π) ∫_0^π (-t)^m e^{-xt} cos(νθ) dθ,   e^{-x} I_ν⁽ᵐ⁾(x) = (1/π) ∫_0^π (1 - t)^m e^{-xt} cos(νθ) dθ
#
# with t = 1 - cos θ (so cos θ = 1 - t): the integrand is periodic and entire, so the trapezoid rule
# on N + 1 nodes converges geometrically (its error is e^{-x} I_{2N-m-ν}(x), below 1e-25 for N = 48
# and x <= 30); each term is one exp of x·t (a relative error of x·t·u on a term of weight e^{-xt}:
# a few ulps in all). For ν = 0 and the scaled forms the terms have one sign; where those of another
# form cancel (near a zero of i1e', i1e'', near I1''(0) = 0) the element is summed from the power
# series (unscaled, |x| < 2: terms of one sign) or recomputed with mpmath. Past x = 30 the asymptotic
# series e^{-x} I_ν(x) ~ (2πx)^(-1/2) Σ_k c_k x^-k, differentiated term by term.

_BESSEL_NODES = 48
_BESSEL_T = 2 * np.sin(np.pi / 2 * np.arange(_BESSEL_NODES + 1) / _BESSEL_NODES) ** 2  # 1 - cos θ_j
_BESSEL_W = np.full(_BESSEL_NODES + 1, 1.0 / _BESSEL_NODES)
_BESSEL_W[[0, -1]] = 0.5 / _BESSEL_NODES
_BESSEL_ASYMPTOTIC = 30.0
_BESSEL_TERMS = 40  # the series' terms at x = 30 fall below 1e-20 of the first by k = 40
_BESSEL_SERIES = 2.0  # the power series (unscaled forms) below this |x|
_BESSEL_SERIES_TERMS = 16


def _bessel_asymptotic_coefficients(nu):
    """c_k = (-1)^k Π_{j<=k} (4ν² - (2j - 1)²) / (k! 8^k): e^{-x} I_ν(x) ~ (2πx)^(-1/2) Σ c_k x^-k."""
    out, c = [], 1.0
    for k in range(_BESSEL_TERMS):
        out.append(c)
        c = -c * (4 * nu * nu - (2 * k + 1) ** 2) / ((k + 1) * 8)
    return out


_BESSEL_C = {nu: _bessel_asymptotic_coefficients(nu) for nu in (0, 1)}


def _bessel_asymptotic(x, nu, order):
    """(e^{-x} I_ν)⁽ᵒʳᵈᵉʳ⁾ for x >= 30, the series' terms c_k x^(-k-1/2) differentiated."""
    t = 1 / x
    total = np.zeros_like(x)
    for k in range(_BESSEL_TERMS - 1, -1, -1):
        falling = math.prod(-(k + 0.5 + i) for i in range(order))
        total = total * t + _BESSEL_C[nu][k] * falling
    return total * t**order / np.sqrt(2 * np.pi * x)


def _bessel_series(x, nu, order):
    """I_ν⁽ᵒʳᵈᵉʳ⁾(x) = Σ_k (2k+ν)!/(2k+ν-m)! x^(2k+ν-m) / (2^(2k+ν) k! (k+ν)!): terms of one sign."""
    total = np.zeros_like(x)
    for k in range(_BESSEL_SERIES_TERMS - 1, -1, -1):
        p = 2 * k + nu
        if p < order:
            continue
        c = math.prod(range(p - order + 1, p + 1)) / (2.0**p * math.factorial(k) * math.factorial(k + nu))
        total = total + c * x ** (p - order)
    return total


def _mp_bessel(x, nu, order, scaled):
    """The derivative at x > 0 at 40 digits, from I_ν⁽ʲ⁾ = 2^-j Σ_i C(j, i) I_{ν-j+2i} (I_-n = I_n)."""
    import mpmath

    def d(j):
        return sum(mpmath.binomial(j, i) * mpmath.besseli(abs(nu - j + 2 * i), x) for i in range(j + 1)) / 2**j

    if not scaled:
        return d(order)
    return mpmath.exp(-x) * sum(
        mpmath.binomial(order, j) * (-1) ** (order - j) * d(j) for j in range(order + 1)
    )


def bessel_derivative(nu, order, scaled, at_zero=None, at_nan=math.nan):
    """The kernel of the ``order``-th derivative of I_ν (``scaled``: of e^{-|x|} I_ν) in float64;
    ``at_zero``: the value at x = 0 where the scaled form has its kink (PyTorch's: sgn(0) = 0);
    ``at_nan``: PyTorch's value at nan (its i1 backward's where reads |nan| <= eps as the limit 0.5)."""

    def kernel(x):
        x = _f64(x)
        a = np.abs(x)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            inner = np.where(a <= _BESSEL_ASYMPTOTIC, a, 0.0)[..., None]
            poly = (-_BESSEL_T) ** order if scaled else (1 - _BESSEL_T) ** order
            terms = _BESSEL_W * poly * (1 - _BESSEL_T) ** nu * np.exp(-inner * _BESSEL_T)
            near = terms.sum(axis=-1)
            far = _bessel_asymptotic(np.where(a > _BESSEL_ASYMPTOTIC, a, _BESSEL_ASYMPTOTIC), nu, order)
            if not scaled:  # e^x·(e^{-x} I_ν⁽ᵐ⁾), through e^(x/2) twice (I_ν is finite a little past 709.8)
                far = far + sum(
                    math.comb(order, j)
                    * _bessel_asymptotic(np.where(a > _BESSEL_ASYMPTOTIC, a, _BESSEL_ASYMPTOTIC), nu, j)
                    for j in range(order)
                )
            out = np.where(a <= _BESSEL_ASYMPTOTIC, near, far)
            bad = (a <= _BESSEL_ASYMPTOTIC) & cancels(
                near, terms.clip(min=0).sum(axis=-1), terms.clip(max=0).sum(axis=-1)
            )
            if not scaled:
                half = np.exp(a / 2)
                out = out * half * half
                small = a < _BESSEL_SERIES
                out = np.where(small, _bessel_series(np.where(small, a, 0.0), nu, order), out)
                bad = bad & ~small
        out = mp_where(bad, out, a, _mp_bessel, nu=nu, order=order, scaled=scaled)
        if (nu + order) % 2:
            out = np.where(x < 0, -out, out)
        if at_zero is not None:
            out = np.where(x == 0, at_zero, out)
        return np.where(np.isnan(x), at_nan, out)

    return kernel


# ---- third derivatives: no check differentiates three times; mpmath's differentiation of the
# mathematical function keeps the table differentiable one order further, exactly.

MP_FUNCTIONS = {
    "sigmoid": _mp_sig,
    "softplus": lambda x: __import__("mpmath").log1p(__import__("mpmath").exp(x)),
    "silu": lambda x: x * _mp_sig(x),
    "mish": lambda x: x * _mp_mish_t(x),
    "gelu": lambda x: x * __import__("mpmath").ncdf(x),
    "gelu_tanh": _mp_gelu_tanh,
}


def mp_derivative(name, order, x):
    """The ``order``-th derivative of MP_FUNCTIONS[name] at each element of ``x`` (mpmath.diff)."""
    x = _f64(x)
    fn = MP_FUNCTIONS[name]

    def one(v):
        import mpmath

        # a derivative as small as e^-x² next to a value of size |x| needs that many more digits in
        # mpmath.diff's differences: the precision is doubled until two evaluations agree
        dps, last = _DPS, None
        while True:
            with mpmath.workdps(dps):
                d = mpmath.diff(fn, mpmath.mpf(v), order)
            if (last is not None and d != 0 and abs(d - last) <= abs(d) * 1e-20) or dps >= 2000:
                return d
            last, dps = d, 2 * dps

    return mp_where(np.ones(x.shape, bool), np.full(x.shape, np.nan), x, one)
