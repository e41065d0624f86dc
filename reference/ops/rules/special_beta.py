"""The regularized incomplete beta function I_x(a, b) (``jax.scipy.special.betainc(a, b, x)``,
``tf.math.betainc(a, b, x)``; PyTorch has none) and the beta function (betaln, beta: below).

Part of the one derivative table (:mod:`reference.ops.rules`). JAX and TensorFlow differentiate
I_x(a, b) in x alone: ∂I/∂x = ρ = x^(a-1) (1-x)^(b-1) / B(a, b), JAX's ``betainc_gradx`` and
TensorFlow's ``_BetaincGrad`` alike, and again through that formula; in a and b JAX raises ('Betainc
gradient with respect to a and b not supported') and TensorFlow's gradient is None. The reference
follows them there (a and b are not differentiable: their gradient is None, as TensorFlow's) and
answers with the mathematics in x, every order one exact primitive:

* ``betainc``: the function (inputs ``a``, ``b``, ``x``, in scipy's order);
* ``betainc_derivative`` (param ``dx`` >= 1): ∂_x^dx I_x(a, b) = ∂_x^(dx-1) ρ, whose VJP in x is
  the derivative of order dx + 1.

The kernels are mpmath's arithmetic at 40 digits plus the digits of max(a, b) (the exponent a ln x
+ b ln(1-x) - ln B(a, b) cancels by that many), rounded once to the input dtype (float32/16 inputs
compute in float64). The value is the smaller of the two tails, I_x(a, b) for x below the mean
(a + 1)/(a + b + 2) and 1 - I_(1-x)(b, a) above it (1 - x exact in mpmath), each the continued
fraction DLMF 8.17.22 evaluated by the modified Lentz algorithm to the working precision (mpmath's
own betainc, a hypergeometric sum, raises NoConvergence at a = b = 1e5); where the prefactor
x^a (1-x)^b / (a B(a, b)) is below e^-1600 the tail is 0 in every float (huge a, b away from the
mean). The derivatives are the closed form ∂_x^m ρ = ρ Σ_k C(m, k) (a-1)↓k x^-k (-1)^(m-k)
(b-1)↓(m-k) (1-x)^-(m-k) (↓: the falling factorial), summed at the working precision plus 20
digits (its terms alternate in sign).

Special values (JAX's where it defines them, the limits elsewhere): nan at nan, a < 0, b < 0, x
outside [0, 1], a = b = 0 and a = b = inf; I = 0 at x = 0 and I = 1 at x = 1; at a = 0 (or b =
inf) the mass sits at 0: I = 1 for x > 0; at b = 0 (or a = inf) at 1: I = 0 for x < 1. The
x-derivatives there are 0 inside (0, 1); at x = 0 and x = 1 their limits from inside (0, the
finite value where the density's leading power is 0, ±inf below: ∂_x I(1/2, 1, x) -> inf).
"""

from __future__ import annotations

import math

import numpy as np

from reference.autograd.dispatch import apply
from reference.backend import namespace_of, to_numpy
from reference.ops import api as A
from reference.ops.functions import pointwise as P
from reference.ops.rule import AUTO_ELEMENT_WISE, BATCH_ELEMENTWISE
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules._times import rounded
from reference.ops.rules.registry import RULES, rule

#: digits of mpmath's working precision, before the digits of max(a, b) are added
_DPS = 40
#: below this natural log of the prefactor x^a (1-x)^b / (a B(a, b)) the tail underflows every
#: float (the continued fraction is at most a few times a + b < e^710)
_NEGLIGIBLE = -1600
#: at most this many continued-fraction terms (about sqrt(a + b) are needed at the mean)
_MAX_TERMS = 200_000


def _dps(*params):
    """The working digits: 40 plus the decimal digits of the largest parameter."""
    return _DPS + int(max(0.0, math.log10(max(*params, 1.0))))


def _log_beta(mp, a, b):
    return mp.loggamma(a) + mp.loggamma(b) - mp.loggamma(a + b)


def _lower_tail(mp, a, b, x):
    """I_x(a, b) by the continued fraction DLMF 8.17.22 (x below the mean, a, b > 0, 0 < x < 1):
    x^a (1-x)^b / (a B(a, b)) / (1 + d1/(1 + d2/(1 + ...))), d_(2m+1) = -(a + m)(a + b + m) x /
    ((a + 2m)(a + 2m + 1)), d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)), by modified Lentz."""
    log_prefactor = a * mp.log(x) + b * mp.log1p(-x) - _log_beta(mp, a, b) - mp.log(a)
    if log_prefactor < _NEGLIGIBLE:
        return mp.mpf(0)
    tiny = mp.ldexp(1, -(mp.prec + 200))
    eps = mp.ldexp(1, -(mp.prec + 8))
    f, c, d = mp.mpf(1), mp.mpf(1), mp.mpf(0)  # the fraction 1 + d1/(1 + ...): f_0 = 1
    for n in range(1, _MAX_TERMS):
        m = n // 2
        if n % 2:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        else:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1 + num * d
        d = tiny if d == 0 else d
        c = 1 + num / c
        c = tiny if c == 0 else c
        d = 1 / d
        delta = c * d
        f *= delta
        if abs(delta - 1) < eps:
            return mp.exp(log_prefactor) / f
    raise ArithmeticError(
        f"betainc: the continued fraction at a={float(a)}, b={float(b)}, x={float(x)} did not converge "
        f"in {_MAX_TERMS} terms"
    )


def _falling(v, k):
    return math.prod(v - j for j in range(k)) if k else 1


def _edge_limit(mp, a, b, m):
    """lim_{t -> 0+} ∂_t^m [t^(a-1) (1-t)^(b-1)] / B(a, b): the leading term of the series Σ_j
    (-1)^j C(b-1, j) t^(a-1+j) differentiated m times, (a-1+j)↓m t^(a-1+j-m): 0 where its power
    is positive, ±inf where negative (the first j whose coefficient is not 0)."""
    for j in range(m + 2):
        coeff = (-1) ** j * mp.binomial(b - 1, j) * _falling(a - 1 + j, m)
        if coeff != 0:
            power = a - 1 + j - m
            if power > 0:
                return 0.0
            if power < 0:
                return math.copysign(math.inf, float(coeff))
            return rounded(coeff * mp.exp(-_log_beta(mp, a, b)))
    return 0.0


def _special(a, b, x, dx):
    """I's value or x-derivative where mpmath is not asked (nan, edges, zeros, infinities), or None."""
    if any(math.isnan(v) for v in (a, b, x)) or a < 0 or b < 0 or not 0 <= x <= 1:
        return math.nan
    if (a == 0 and b == 0) or (math.isinf(a) and math.isinf(b)):
        return math.nan
    mass_at_zero = a == 0 or math.isinf(b)
    mass_at_one = b == 0 or math.isinf(a)
    if dx == 0:
        if x == 0:
            return 0.0
        if x == 1:
            return 1.0
        if mass_at_zero:
            return 1.0
        if mass_at_one:
            return 0.0
        return None
    if mass_at_zero or mass_at_one:
        return 0.0 if 0 < x < 1 else math.nan
    return None


def _density_derivative(mp, a, b, x, m):
    """∂_x^m ρ, ρ = x^(a-1) (1-x)^(b-1) / B(a, b), 0 < x < 1 (Leibniz's rule)."""
    total = mp.fsum(
        math.comb(m, k) * _falling(a - 1, k) * x ** (-k) * (-1) ** (m - k) * _falling(b - 1, m - k) * (1 - x) ** (k - m)
        for k in range(m + 1)
    )  # fmt: skip
    return mp.exp((a - 1) * mp.log(x) + (b - 1) * mp.log1p(-x) - _log_beta(mp, a, b)) * total


@sign_aware_cache
def betainc_exact(a, b, x, dx):
    """∂_x^dx I_x(a, b) at the floats (a, b, x), correctly rounded to float64."""
    from mpmath import mp

    special = _special(a, b, x, dx)
    if special is not None:
        return special
    with mp.workdps(_dps(a, b)):
        ma, mb, mx = mp.mpf(a), mp.mpf(b), mp.mpf(x)
        if dx >= 1:
            if x == 0:
                return _edge_limit(mp, ma, mb, dx - 1)
            if x == 1:  # ρ(a, b, x) = ρ(b, a, 1 - x): ∂_x^m = (-1)^m ∂_t^m at t = 0
                return (-1) ** (dx - 1) * _edge_limit(mp, mb, ma, dx - 1)
            with mp.workdps(mp.dps + 20):
                return rounded(_density_derivative(mp, ma, mb, mx, dx - 1))
        if x < (a + 1) / (a + b + 2):
            return rounded(_lower_tail(mp, ma, mb, mx))
        return rounded(_complement(mp, ma, mb, mx))


def _complement(mp, a, b, x):
    """I_x(a, b) = 1 - I_(1-x)(b, a) (x above the mean), at the digits 1 - I_(1-x)(b, a) cancels:
    where I is small (b tiny: I_x(0.85, 4.6e-308) at x = 0.73 is 6.9e-308) the working precision
    grows by the digits lost until 30 are left (at most the 330 of the smallest subnormal)."""
    while True:
        value = 1 - _lower_tail(mp, b, a, 1 - x)
        lost = mp.dps if value == 0 else max(0, int(-mp.log10(abs(value))))
        if lost <= mp.dps - 30 or mp.dps > 800:
            return value
        mp.dps += lost + 10


def _host_kernel(exact, *orders):
    """The kernel of ``exact(*scalars, *orders)`` (a cached float64 scalar function), element by
    element on the host over the broadcast inputs, in their namespace and the last one's dtype
    (rounded once)."""

    def kernel(*inputs, **_):
        arrays = np.broadcast_arrays(*(np.asarray(to_numpy(v), dtype=np.float64) for v in inputs))
        out = np.empty(arrays[0].shape, dtype=np.float64)
        for idx in np.ndindex(out.shape):
            out[idx] = exact(*(float(v[idx]) for v in arrays), *orders)
        with np.errstate(all="ignore"):
            return namespace_of(inputs[-1]).asarray(out.astype(inputs[-1].dtype))

    return kernel


def betainc_kernel(dx):
    """The exact kernel of ∂_x^dx I_x(a, b)."""
    return _host_kernel(betainc_exact, dx)


def derivative(a, b, x, dx):
    """∂_x^dx I_x(a, b) at Tensors ``a``, ``b``, ``x`` (dx >= 1)."""
    return apply(RULES["betainc_derivative"], (a, b, x), {"dx": dx})


rule(
    "betainc_derivative",
    "BetaincDerivativeBackward0",
    ("a", "b", "x"),  # dx >= 1: the order in x
    forward=lambda a, b, x, dx: betainc_kernel(dx)(a, b, x),
    grads=(None, None, lambda c, g: g * derivative(c.a, c.b, c.x, c.dx + 1)),
    saves={"a": (2,), "b": (2,), "x": (2,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "betainc",
    "BetaincBackward0",  # (no PyTorch node: JAX's betainc_gradx; a and b not differentiable)
    ("a", "b", "x"),
    forward=betainc_kernel(0),
    grads=(None, None, lambda c, g: g * derivative(c.a, c.b, c.x, 1)),
    saves={"a": (2,), "b": (2,), "x": (2,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# JAX (XLA: jax._src.lax.special.regularized_incomplete_beta_impl) and TensorFlow (Eigen's betainc,
# Cephes' incbet) both evaluate the continued fraction of the smaller tail (swapping a, b and x ->
# 1 - x above the mean) and scale it by the prefactor exp(a ln x + b ln(1-x) - lnΓ(a) - lnΓ(b) +
# lnΓ(a+b)) / a: the exponent's rounding, u times cond = 1 + |a ln x| + |b ln(1-x)| + |lnΓ(a)| +
# |lnΓ(b)| + |lnΓ(a+b)|, is a relative error of the tail it evaluates (I itself below the mean,
# 1 - I above it, where I = 1 - that tail carries its error whole: at b = 4.6e-308, a = 0.85, x =
# 0.73, I = 6.9e-308 and JAX says 1.8e-14, |lnΓ(b)| = 707 times u); the rounding of 1 - x
# (u·(1-x)) there moves the result by ρ·u·(1-x) (ρ = ∂I/∂x), and the complement costs an absolute u.
# JAX swaps at x >= (a + 1)/(a + b + 2), TensorFlow (Cephes) at x > a/(a + b): between the two
# either tail may be the one evaluated. No framework documents a figure; the constants are
# measurements against the exact kernel above (scripts/measure_betainc_error.py).
from reference import errors as _E  # noqa: E402
from reference.errors import REFERENCE_U  # noqa: E402

#: the relative part of I's error, in units of u·(cond·tail + 1): 61.3 measured (JAX float64 at a =
#: 0.94, b = 0.134, x = 0.914: XLA's continued fraction of the swapped tail with a small parameter,
#: 50 to 61 at each such point; TensorFlow at most 31.7, float32 at a = 0.028, b = 19.5, x = 0.060,
#: 600 points a, b = 10^U(-2, 3), x = U(0, 1) and near the mean, float32 and float64, seed 0);
#: declared 80
_VALUE_ULPS = 80.0
#: the absolute part, in u: the complement's rounding (1 - tail); its figure is inside the above
_VALUE_ABSOLUTE = 1.0


def _cond(a, b, x):
    import scipy.special

    with np.errstate(all="ignore"):
        c = (
            1
            + np.abs(a * np.log(x))
            + np.abs(b * np.log1p(-x))
            # at a pole of Γ(a) or Γ(b) the prefactor x^a (1-x)^b / B(a, b) is an exact 0 (I = 1 at
            # a = 0, 0 at b = 0, the limits): lnΓ = inf rounds nothing there
            + np.abs(_E.finite_or_zero(scipy.special.gammaln(a)))
            + np.abs(_E.finite_or_zero(scipy.special.gammaln(b)))
            + np.abs(_E.finite_or_zero(scipy.special.gammaln(a + b)))
        )
    return np.where(np.isfinite(c), c, np.inf)


def _density(a, b, x):
    """ρ = ∂I/∂x in float64 (scipy), for the input error of x and the rounding of 1 - x."""
    import scipy.special

    with np.errstate(all="ignore"):
        rho = np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - scipy.special.betaln(a, b))
    return np.where(np.isfinite(rho), rho, np.inf)


def _bound(relative, absolute):
    def bound(p, arrays, errs, params, outs):
        a, b, x = (np.asarray(v, dtype=np.float64) for v in arrays)
        y = np.abs(np.asarray(outs[0], dtype=np.float64))
        u = p.u + REFERENCE_U
        rho = _density(a, b, x)
        with np.errstate(all="ignore"):  # the thresholds past which JAX (XLA) and TensorFlow (Cephes) swap
            lower = (x < (a + 1) / (a + b + 2)) & (x <= a / (a + b))
            upper = (x >= (a + 1) / (a + b + 2)) & (x > a / (a + b))
        # the tail the kernel evaluates: I below both thresholds, 1 - I above both, either between
        tail = np.where(lower, y, np.where(upper, np.abs(1 - y), np.maximum(y, np.abs(1 - y))))
        swap = np.where(lower, 0.0, rho * np.abs(1 - x))  # the rounding of 1 - x where it swaps
        err = u * (relative * _cond(a, b, x) * tail + absolute + swap) + p.eta
        if errs[2] is not None:
            err = err + rho * np.asarray(errs[2])
        return [err]

    return bound


def _formula(a, b, x, dx):
    """The frameworks' x-derivative, JAX's betainc_gradx and TensorFlow's _BetaincGrad alike: ρ =
    exp((b - 1) log1p(-x) + (a - 1) log x - (lgamma(a) + lgamma(b) - lgamma(a + b))), and its
    derivatives as autodiff takes them: ∂_x ρ = ρ ((a - 1)/x - (b - 1)/(1 - x))."""
    log_beta = P.lgamma(a) + P.lgamma(b) - P.lgamma(a + b)
    rho = A.exp((b - 1) * P.log1p(-x) + (a - 1) * A.log(x) - log_beta)
    if dx == 1:
        return rho
    slope = (a - 1) / x - (b - 1) / (1 - x)
    if dx == 2:
        return rho * slope
    if dx == 3:
        return rho * (slope * slope - (a - 1) / (x * x) - (b - 1) / ((1 - x) * (1 - x)))
    raise NotImplementedError(f"no check differentiates betainc {dx} times in x")


_SOURCE = (
    "measured against mpmath: {} u·cond·|y| + {} u + ρ·u·|1-x|, cond = 1 + |a ln x| + |b ln(1-x)| "
    "+ |lnΓ(a)| + |lnΓ(b)| + |lnΓ(a+b)|"
)
RULES["betainc"].error = _E.derived_bound(
    _bound(_VALUE_ULPS, _VALUE_ABSOLUTE), _SOURCE.format(_VALUE_ULPS, _VALUE_ABSOLUTE)
)
RULES["betainc_derivative"].error = _E.composite(
    _formula, "the frameworks' x-derivative exp((b-1) log1p(-x) + (a-1) log x - lbeta(a, b)), differentiated"
)


# ---- the logarithm of the beta function: betaln(a, b) = ln|B(a, b)| --------------------------------
# jax.scipy.special.betaln (TensorFlow: tf.math.lbeta of the pair, a reduction over the last axis;
# PyTorch has none). Both arguments are differentiated, every order one exact primitive:
# ``betaln_derivative`` (params ``da``, ``db``, da + db >= 1) = ∂_a^da ∂_b^db ln|B| =
# [db = 0] ψ^(da-1)(a) + [da = 0] ψ^(db-1)(b) - ψ^(da+db-1)(a + b) (ψ^(n) the polygamma function),
# computed in mpmath at 40 digits plus those of max(|a|, |b|) (ψ(a) - ψ(a + b) ~ -b/a cancels by
# the digits of a/b: the precision grows with them too), rounded once. Special values: nan at nan;
# ln|B| = inf at a pole of Γ(a) or Γ(b) (a nonpositive integer) where a + b is not one, nan where
# it is too (the limit depends on the direction), -inf where a + b alone is one (1/Γ(a + b) = 0);
# at a pole of Γ(a) alone (b and a + b not poles) ln|Γ(a)| is constant in b, so the derivatives
# in b and the mixed ones (db >= 1) are those of ln|Γ(b)| - ln|Γ(a + b)|, analytic there:
# ∂_b ln|B(0, 2)| = ψ(2) - ψ(2) = 0 (so for b's pole, a's derivatives with da >= 1); a's own ones
# (db = 0) carry ψ^(da-1)(a), which has no limit on the real line: nan; at a = inf
# (b finite, positive) ln B = -inf and its derivatives 0 (the limits: B ~ Γ(b) a^-b); inf in both
# nan.


def _betaln_special(a, b, da, db):
    """ln|B|'s value or derivative where mpmath is not asked, or None."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    pole = [math.isfinite(v) and v <= 0 and v == math.floor(v) for v in (a, b, a + b)]
    if pole[0] or pole[1]:
        if da == db == 0:
            return math.nan if pole[2] else math.inf
        # a derivative in the other argument only sees ln|Γ(other)| - ln|Γ(a + b)| (mpmath below)
        own_term = (pole[0] and db == 0) or (pole[1] and da == 0)
        if own_term or pole[2] or math.isinf(a + b):
            return math.nan
        # at a zero pole the other argument's terms are one: ψ^(n)(b) - ψ^(n)(0 + b) = 0 exactly
        return 0.0 if (a == 0 and da == 0) or (b == 0 and db == 0) else None
    if pole[2]:  # 1/Γ(a + b) = 0: B = 0 (ψ(a + b) has a pole: the derivatives nan)
        return -math.inf if da == db == 0 else math.nan
    if math.isinf(a) or math.isinf(b):
        if math.isinf(a) and math.isinf(b):
            return math.nan
        finite = b if math.isinf(a) else a
        if (a if math.isinf(a) else b) < 0 or finite < 0:
            return math.nan
        return -math.inf if da == db == 0 else 0.0
    return None


@sign_aware_cache
def betaln_exact(a, b, da, db):
    """∂_a^da ∂_b^db ln|B(a, b)| at the floats (a, b), correctly rounded to float64."""
    from mpmath import mp

    special = _betaln_special(a, b, da, db)
    if special is not None:
        return special
    larger = math.log10(max(abs(a), abs(b), 1.0))
    # the digits ψ^(n)(a) - ψ^(n)(a + b) cancels by (the value, dominated by ln Γ of the smaller
    # argument, needs only those of the larger: loggamma at 980 digits takes seconds)
    smaller = min(abs(a), abs(b))
    ratio = larger - math.log10(smaller) if da + db and smaller else 0.0
    with mp.workdps(_DPS + int(larger) + int(max(ratio, 0.0))):
        ma, mb = mp.mpf(a), mp.mpf(b)
        if da == db == 0:
            # ln|Γ(a)| + ln|Γ(b)| - ln|Γ(a + b)| (mpmath's loggamma is complex below 0: its real part)
            return rounded(mp.re(mp.loggamma(ma)) + mp.re(mp.loggamma(mb)) - mp.re(mp.loggamma(ma + mb)))
        n = da + db - 1
        total = -mp.polygamma(n, ma + mb)
        if db == 0:
            total += mp.polygamma(n, ma)
        if da == 0:
            total += mp.polygamma(n, mb)
        return rounded(total)


def betaln_kernel(da, db):
    """The exact kernel of ∂_a^da ∂_b^db ln|B|."""
    return _host_kernel(betaln_exact, da, db)


def betaln_derivative(a, b, da, db):
    """∂_a^da ∂_b^db ln|B(a, b)| at Tensors ``a``, ``b`` (da + db >= 1)."""
    return apply(RULES["betaln_derivative"], (a, b), {"da": da, "db": db})


rule(
    "betaln_derivative",
    "BetalnDerivativeBackward0",
    ("a", "b"),  # da, db: the orders in a and b, da + db >= 1
    forward=lambda a, b, da, db: betaln_kernel(da, db)(a, b),
    grads=(
        lambda c, g: g * betaln_derivative(c.a, c.b, c.da + 1, c.db),
        lambda c, g: g * betaln_derivative(c.a, c.b, c.da, c.db + 1),
    ),
    saves={"a": (0, 1), "b": (0, 1)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "betaln",
    "BetalnBackward0",  # (no PyTorch node: jax.scipy.special.betaln, tf.math.lbeta)
    ("a", "b"),
    forward=betaln_kernel(0, 0),
    grads=(
        lambda c, g: g * betaln_derivative(c.a, c.b, 1, 0),
        lambda c, g: g * betaln_derivative(c.a, c.b, 0, 1),
    ),
    saves={"a": (0, 1), "b": (0, 1)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)


def _betaln_formula(a, b):
    """TensorFlow's lbeta (reduce_sum(lgamma(x)) - lgamma(reduce_sum(x))); JAX's betaln (cdflib's
    algdiv correction where a parameter is >= 8) would be at least as accurate but for its series
    variable (known: jax-betaln-algdiv-series-variable, up to 1e-7 off in float64)."""
    return P.lgamma(a) + P.lgamma(b) - P.lgamma(a + b)


def _betaln_derivative_formula(a, b, da, db):
    """The frameworks' derivatives, autodiff of lgamma: ψ^(n)(a) - ψ^(n)(a + b) (n = da + db - 1)."""
    n = da + db - 1
    psi = (lambda z: P.digamma(z)) if n == 0 else (lambda z: P.polygamma(n, z))
    total = -psi(a + b)
    if db == 0:
        total = total + psi(a)
    if da == 0:
        total = total + psi(b)
    return total


RULES["betaln"].error = _E.composite(_betaln_formula, "lgamma(a) + lgamma(b) - lgamma(a + b) (TensorFlow's lbeta)")
RULES["betaln_derivative"].error = _E.composite(
    _betaln_derivative_formula, "the frameworks' derivative of lgamma: polygamma(n, a) - polygamma(n, a + b)"
)
