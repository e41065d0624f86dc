"""The regularized incomplete gamma functions: ``torch.special.gammainc`` (``igamma``, P(a, x) =
γ(a, x)/Γ(a)) and ``torch.special.gammaincc`` (``igammac``, Q(a, x) = Γ(a, x)/Γ(a) = 1 - P).

Part of the one derivative table (:mod:`reference.ops.rules`). PyTorch differentiates them in x
only (∂P/∂x = x^(a-1) e^-x / Γ(a); in a it raises "the derivative for 'igamma: input' is not
implemented"); JAX (``lax.igamma_grad_a``) and TensorFlow (``IgammaGradA``) differentiate them in a
once, not twice. The reference answers with the mathematics (issue 38), every derivative order in
both arguments one exact primitive:

* ``igamma``, ``igammac``: the functions (a the Tensor ``self``, x the Tensor ``other``);
* ``igamma_grad_a``: ∂P/∂a (JAX's ``igamma_grad_a``, TensorFlow's ``IgammaGradA``: the one
  a-derivative they compute, with its own kernel);
* ``igamma_derivative`` (params ``da``, ``dx``, da + dx >= 1): ∂_a^da ∂_x^dx P(a, x) (Q's is its
  negative) at every other order; the VJPs of both are the derivative at (da + 1, dx) and
  (da, dx + 1).

The kernels are mpmath's, rounded once to the input dtype (float32/16 inputs compute in float64):
``gammainc`` of the smaller of P and Q (the other is 1 minus it), at 30 digits plus the digits of
max(a, x) (the exponent (a - 1) ln x - x - lnΓ(a) cancels by that many); the x-derivatives from
the closed form ∂_x^m ρ, ρ = x^(a-1) e^-x / Γ(a), ∂_x^m ρ = ρ Σ_k C(m, k) (a-1)(a-2)...(a-k) x^-k
(-1)^(m-k); the a-derivatives by ``mpmath.diff`` (mpmath raises its working precision there). Three
places where mpmath's own ``gammainc`` is slow or does not converge: a < 1e-20, where Q = a E1(x)
to a relative a·(γ + |ln x|) (below 2^-60; its a-derivatives are those at a = 0); x < 1e-20, where
P's power series to its third term is used (a relative x^3); and a > 1e7 with x near a, where
Temme's uniform expansion (DLMF 8.12.3, 8.12.8) with its first two coefficients is used: a
relative error below 0.05 a^-2.5 (< 2^-60 there; measured against mpmath: 1e-15 at a = 1e5,
3e-18 at 1e6, where tests/autograd/test_igamma_accuracy.py checks it).

Special values (PyTorch's where it defines them, the limits elsewhere): nan at nan, a < 0, x < 0,
(a, x) = (0, 0) and (inf, inf); P = 1 at a = 0 or x = inf, P = 0 at x = 0 or a = inf (Q = 1 - P);
every derivative 0 at a = inf or x = inf (the limit; PyTorch's x-derivative says nan there) and the
a-derivatives 0 at x = 0 (P(a, 0) = 0 for every a); ∂_x^m P at x = 0 its limit from the right (0
where a > m, ±inf where a < the order of its leading term, the finite value between: ∂_x P(1, 0) =
1, where PyTorch's exp((a - 1) log x - ...) says nan); the mixed derivatives at x = 0 with a <= dx
nan (no limit is computed).
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

#: digits of mpmath's working precision, before the digits of max(a, x) are added
_DPS = 30
#: below this a, Q(a, x) = a·E1(x) (mpmath's gammainc takes seconds at a = 1e-300)
_TINY_A = 1e-20
#: below this x, P's series to its third term (mpmath's gammainc takes seconds at a, x ~ 1e-300)
_TINY_X = 1e-20
#: above this a, x near a: Temme's expansion (mpmath's series raise NoConvergence)
_LARGE_A = 1e7


def _dps(a, x):
    """The working digits: 30 plus the decimal digits of max(a, x) (the cancellation of the exponent
    (a - 1) ln x - x - lnΓ(a), each term of that size)."""
    return _DPS + 5 + int(max(0.0, math.log10(max(a, x, 1.0))))


def _density_derivative(mp, s, x, m):
    """∂_x^m ρ(s, x), ρ = x^(s-1) e^-x / Γ(s) (mpmath numbers; rgamma is entire, so s may be 0 or
    negative where mpmath.diff's stencil reaches there)."""
    total = mp.mpf(0)
    falling = mp.mpf(1)
    for k in range(m + 1):
        total += math.comb(m, k) * falling * x ** (-k) * (-1) ** (m - k)
        falling *= s - 1 - k
    return mp.exp((s - 1) * mp.log(x) - x) * mp.rgamma(s) * total


def _temme(mp, s, x, upper):
    """Q (upper) or P at large s by Temme's expansion (DLMF 8.12.3, 8.12.8): Q = erfc(η√(s/2))/2 +
    R, P = erfc(-η√(s/2))/2 - R, R = e^(-sη²/2)/√(2πs) (c0(η) + c1(η)/s), λ = x/s, μ = λ - 1,
    η²/2 = μ - ln(1 + μ) (η of μ's sign), c0 = 1/μ - 1/η, c1 = 1/η³ - 1/μ³ - 1/μ² - 1/(12μ). The
    c's cancel as μ -> 0 (by μ^-3): computed at enough digits for |μ| (mpmath.diff moves s)."""
    mu = x / s - 1
    if mu == 0:
        c0, c1, eta = mp.mpf(-1) / 3, mp.mpf(-1) / 540, mp.mpf(0)
    else:
        with mp.workdps(mp.dps + 4 * max(0, int(-mp.log10(abs(mu)))) + 10):
            eta = mp.sign(mu) * mp.sqrt(2 * (mu - mp.log1p(mu)))
            c0 = 1 / mu - 1 / eta
            c1 = 1 / eta**3 - 1 / mu**3 - 1 / mu**2 - 1 / (12 * mu)
    r = mp.exp(-s * eta**2 / 2) / mp.sqrt(2 * mp.pi * s) * (c0 + c1 / s)
    w = eta * mp.sqrt(s / 2)
    return mp.erfc(w) / 2 + r if upper else mp.erfc(-w) / 2 - r


def _tail(mp, s, x, upper):
    """Q (upper) or P at (s, x), s any real (mpmath.diff's stencil), x > 0."""
    if s == 0:
        return mp.mpf(0 if upper else 1)
    if x < _TINY_X:  # P = x^s/Γ(s + 1) Σ_k (-x)^k s/(k! (s + k)), to a relative x^3
        p = mp.exp(s * mp.log(x)) * mp.rgamma(s + 1) * (1 - s * x / (s + 1) + s * x * x / (2 * (s + 2)))
        return 1 - p if upper else p
    if s > _LARGE_A and x / 2 < s < 2 * x:
        return _temme(mp, s, x, upper)
    return mp.gammainc(s, x, mp.inf, regularized=True) if upper else mp.gammainc(s, 0, x, regularized=True)


def _x_derivative_at_zero(a, m):
    """lim_{x -> 0+} ∂_x^m ρ(a, x): the leading term C(m, k) (a-1)...(a-k) x^(a-1-k) (-1)^(m-k) / Γ(a),
    k the largest with a nonzero falling factorial."""
    k = max(i for i in range(m + 1) if all(a - 1 - j != 0 for j in range(i)))
    power = a - 1 - k
    if power > 0:
        return 0.0
    coeff = math.comb(m, k) * math.prod(a - 1 - j for j in range(k)) * (-1) ** (m - k) / math.gamma(a)
    return coeff if power == 0 else math.copysign(math.inf, coeff)


def _special(a, x, da, dx):
    """P's value or derivative where mpmath is not asked (nan, inf, zeros, negative), or None."""
    if math.isnan(a) or math.isnan(x) or a < 0 or x < 0 or (a == 0 and x == 0):
        return math.nan
    if math.isinf(a) and math.isinf(x):
        return math.nan
    if da == dx == 0:
        if x == 0 or math.isinf(a):
            return 0.0
        if a == 0 or math.isinf(x):
            return 1.0
        return None
    if math.isinf(a) or math.isinf(x):
        return 0.0
    if x == 0:
        if dx == 0 or a > dx:
            return 0.0
        return _x_derivative_at_zero(a, dx - 1) if da == 0 else math.nan
    if a == 0 and da == 0:  # 1/Γ(0) = 0
        return 0.0
    return None


def _lower_is_smaller(mp, a, x, sa, sx):
    """Whether P <= Q at (a, x): for a >= 1 where x <= a (Gamma(a)'s median lies in (a - 1/3, a));
    below 1 the median falls towards 2^(-1/a), so P itself is asked (below 1e-20: Q always)."""
    if a < _TINY_A:
        return False
    if a >= 1:
        return x <= a
    return _tail(mp, sa, sx, False) <= 0.5


@sign_aware_cache
def igamma_exact(a, x, da, dx, upper):
    """∂_a^da ∂_x^dx of Q (``upper``) or P at the floats (a, x), correctly rounded to float64."""
    from mpmath import mp

    special = _special(a, x, da, dx)
    if special is not None:
        if upper and da == dx == 0:
            return 1.0 - special if not math.isnan(special) else special
        return -special if upper else special
    with mp.workdps(_dps(a, x)):
        sa, sx = mp.mpf(a), mp.mpf(x)
        if dx >= 1:
            if da == 0:
                value = _density_derivative(mp, sa, sx, dx - 1)
            else:
                value = mp.diff(lambda s: _density_derivative(mp, s, sx, dx - 1), sa, da)
            return rounded(-value if upper else value)
        lower = _lower_is_smaller(mp, a, x, sa, sx)
        if da == 0:
            if a < _TINY_A:  # Q = a E1(x) (1 + O(a (γ + |ln x|))); Q < 1/2 for every float x > 0
                value = sa * mp.e1(sx)
            else:
                value = _tail(mp, sa, sx, not lower)
            return rounded(value if lower != upper else 1 - value)
        # Q is entire in a: below 1e-20 its derivatives are those at 0 (to a relative O(a |ln x|))
        centre = mp.mpf(0) if a < _TINY_A else sa
        value = mp.diff(lambda s: _tail(mp, s, sx, not lower), centre, da)
        return rounded(value if lower != upper else -value)


def igamma_kernel(da, dx, upper):
    """The exact kernel of ∂_a^da ∂_x^dx of Q (``upper``) or P, element by element on the host (a
    cached float64 scalar function), in the inputs' namespace and dtype (rounded once)."""

    def kernel(a, x):
        av, xv = np.broadcast_arrays(
            np.asarray(to_numpy(a), dtype=np.float64), np.asarray(to_numpy(x), dtype=np.float64)
        )
        out = np.empty(av.shape, dtype=np.float64)
        for idx in np.ndindex(av.shape):
            out[idx] = igamma_exact(float(av[idx]), float(xv[idx]), da, dx, upper)
        with np.errstate(all="ignore"):
            return namespace_of(a).asarray(out.astype(a.dtype))

    return kernel


def derivative(a, x, da, dx):
    """∂_a^da ∂_x^dx P(a, x) at Tensors ``a``, ``x`` (da + dx >= 1; Q's is its negative): ∂P/∂a is
    the primitive ``igamma_grad_a`` (JAX's and TensorFlow's name: their own kernel, with its own
    error declaration), every other order ``igamma_derivative``."""
    if (da, dx) == (1, 0):
        return apply(RULES["igamma_grad_a"], (a, x), {})
    return apply(RULES["igamma_derivative"], (a, x), {"da": da, "dx": dx})


def _derivative_grads(da, dx):
    return (
        lambda c, g: g * derivative(c.self, c.other, da(c) + 1, dx(c)),
        lambda c, g: g * derivative(c.self, c.other, da(c), dx(c) + 1),
    )


rule(
    "igamma_derivative",
    "IgammaDerivativeBackward0",
    ("self", "other"),  # da, dx: the orders in a (self) and x (other), da + dx >= 1, not (1, 0)
    forward=lambda a, x, da, dx: igamma_kernel(da, dx, False)(a, x),
    grads=_derivative_grads(lambda c: c.da, lambda c: c.dx),
    saves={"self": (0, 1), "other": (0, 1)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "igamma_grad_a",
    "IgammaGradABackward0",
    ("self", "other"),
    forward=igamma_kernel(1, 0, False),
    grads=_derivative_grads(lambda c: 1, lambda c: 0),
    saves={"self": (0, 1), "other": (0, 1)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
for _name, _node, _sign in (("igamma", "IgammaBackward0", 1.0), ("igammac", "IgammacBackward0", -1.0)):
    rule(
        _name,
        _node,  # PyTorch's node raises for self (a): the reference differentiates both arguments
        ("self", "other"),
        forward=igamma_kernel(0, 0, _sign < 0),
        grads=(
            lambda c, g, s=_sign: g * (s * derivative(c.self, c.other, 1, 0)),
            lambda c, g, s=_sign: g * (s * derivative(c.self, c.other, 0, 1)),
        ),
        saves={"self": (0, 1), "other": (0, 1)},
        jvp=AUTO_ELEMENT_WISE,
        batch=BATCH_ELEMENTWISE,
    )


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# PyTorch (ATen's port of Cephes igam/igamc with Temme's expansion for large a), JAX (XLA's
# igamma: series and continued fraction) and TensorFlow (Eigen's igamma) all scale their series by
# the prefactor exp((a - 1) ln x - x - lnΓ(a)) (x^a e^-x / Γ(a)): the exponent's rounding, u times
# cond = 1 + |(a - 1) ln x| + x + |lnΓ(a)|, is a relative error of the result, and Q = 1 - P (or P =
# 1 - Q) where the other is computed costs an absolute u. No framework documents a figure (Cephes
# says 3.6e-14 peak relative error on a, x in (0, 30), 162 ulps); the constants are measurements
# against the exact kernel above: 600 points, a = 10^U(-3, 3.5) and U(0.1, 10), x = a·U(0.02, 3)
# and a·(1 + N(0, 0.1)), float32 and float64 (scripts/measure_igamma_error.py).
from reference import errors as _E  # noqa: E402
from reference.errors import REFERENCE_U  # noqa: E402

#: the relative part of P's and Q's error, in units of u·cond: 4.2 measured (JAX float64 P at
#: a = 1.78, x = 0.39; PyTorch float64 past a = 20 excepted: its known departure); declared 6
_VALUE_ULPS = 6.0
#: the absolute part, in u: the complement's rounding (1 - P), where Q is small at small a (JAX
#: float32 Q at a = 1.3e-3, x = 2.5e-3: 85 u·cond·Q = 7.7 u); declared 10
_VALUE_ABSOLUTE = 10.0
#: ∂P/∂a, JAX's igamma_grad_a and TensorFlow's IgammaGradA: 28.8 u·cond·|y| measured (TensorFlow
#: float64 at a = 0.84, x = 1.0); declared 32
_GRAD_A_ULPS = 32.0


def _cond(a, x):
    import scipy.special

    with np.errstate(all="ignore"):
        # at a pole of Γ(a) (a = 0, -1, ...) the prefactor x^a e^-x / Γ(a) is an exact 0 (P = 1,
        # Q = 0, ∂P/∂a = -E1(x) the limits): lnΓ(a) = inf rounds nothing there
        c = 1 + np.abs((a - 1) * np.log(x)) + x + np.abs(_E.finite_or_zero(scipy.special.gammaln(a)))
    return np.where(np.isfinite(c), c, np.inf)


def _slopes(a, x):
    """|∂P/∂a| and |∂P/∂x| in float64 (scipy; a central difference in a), for input errors."""
    import scipy.special

    with np.errstate(all="ignore"):
        h = 1e-6 * np.maximum(a, 1e-3)
        da = np.abs(scipy.special.gammainc(a + h, x) - scipy.special.gammainc(np.maximum(a - h, 0), x)) / (
            2 * h
        )
        dx = np.exp((a - 1) * np.log(x) - x - scipy.special.gammaln(a))
    return [np.where(np.isfinite(s), s, np.inf) for s in (da, dx)]


def _bound(relative, absolute):
    def bound(p, arrays, errs, params, outs):
        a, x = (np.asarray(v, dtype=np.float64) for v in arrays)
        y = np.abs(np.asarray(outs[0], dtype=np.float64))
        u = p.u + REFERENCE_U
        err = u * (relative * _cond(a, x) * y + absolute) + p.eta
        for slope, e in zip(_slopes(a, x), errs):
            if e is not None:
                err = err + _E.carried(slope, e)
        return [err]

    return bound


def _formula(a, x, da, dx):
    """The frameworks' x-derivative, PyTorch's igamma_grad (derivatives.yaml), TensorFlow's
    IgammaGrad and JAX's igamma jvp alike: ρ = exp((a - 1) log x - x - lgamma(a)), and its
    derivatives as autodiff takes them: ∂_x ρ = ρ((a - 1)/x - 1), ∂_a ρ = ρ(log x - digamma(a))."""
    rho = A.exp((a - 1) * A.log(x) - x - P.lgamma(a))
    if (da, dx) == (0, 1):
        return rho
    if (da, dx) == (0, 2):
        return rho * ((a - 1) / x - 1)
    if (da, dx) == (1, 1):
        return rho * (A.log(x) - P.digamma(a))
    if (da, dx) == (0, 3):
        return rho * (((a - 1) / x - 1) ** 2 - (a - 1) / (x * x))
    raise NotImplementedError(
        f"no framework computes the derivative of order (a: {da}, x: {dx}) of the incomplete gamma "
        "functions (JAX and TensorFlow differentiate their a-derivative no further)"
    )


_SOURCE = "measured against mpmath: {} u·cond·|y| + {} u, cond = 1 + |(a-1) ln x| + x + |lnΓ(a)|"
for _name in ("igamma", "igammac"):
    RULES[_name].error = _E.derived_bound(
        _bound(_VALUE_ULPS, _VALUE_ABSOLUTE), _SOURCE.format(_VALUE_ULPS, _VALUE_ABSOLUTE)
    )
RULES["igamma_grad_a"].error = _E.derived_bound(_bound(_GRAD_A_ULPS, 0.0), _SOURCE.format(_GRAD_A_ULPS, 0))
RULES["igamma_derivative"].error = _E.composite(
    _formula, "the frameworks' x-derivative exp((a - 1) log x - x - lgamma(a)), differentiated again"
)
