"""Bessel functions of the first, second and modified-second kind: ``torch.special.bessel_j0``,
``bessel_j1``, ``bessel_y0``, ``bessel_y1``, ``modified_bessel_k0``, ``modified_bessel_k1`` and the
scaled ``scaled_modified_bessel_k0`` = e^x K0(x), ``scaled_modified_bessel_k1`` = e^x K1(x).

Part of the one derivative table (:mod:`reference.ops.rules`). PyTorch computes these functions but
gives them no derivative (their results do not require grad); TensorFlow
(``tf.math.special.bessel_*``) differentiates them with the closed forms J0' = -J1,
J1' = J0 - J1/x, Y0' = -Y1, Y1' = Y0 - Y1/x, K0' = -K1, K1' = -K0 - K1/x, and the scaled
(``bessel_k0e``, ``bessel_k1e``) K0e' = K0e - K1e, K1e' = K1e (1 - 1/x) - K0e. The reference answers
with the mathematics (issue 38): each function and each of its derivatives is one exact kernel,

* ``bessel_j0`` ... ``modified_bessel_k1``: the function (x the Tensor input);
* ``bessel_derivative`` (params ``fn``, ``order``): the ``order``-th derivative of ``fn``, whose
  VJP is the next one, so every derivative order is computed from the input, never by
  differentiating a formula that cancels (J1' = J0 - J1/x loses all its digits near J1's extrema).

The kernels are mpmath's (``besselj``/``bessely`` with ``derivative=k``; K's derivatives as the sum
(-1/2)^k sum_i C(k, i) K_|n-k+2i|, all of one sign), at 30 digits, rounded once to float64
(the scaled K's: see :func:`_scaled_k`):
scipy.special's Cephes j0/j1/y0/y1 are 3-4 ulps off in the bulk and up to 1e7 ulps past x = 1e5
(measured against mpmath; argument reduction), so scipy is not used. float32/16 inputs compute in
float64 and round once. Special values: nan at nan and (for Y and K) at x < 0; at x = 0, Y's and
K's limits from the right (Y^(k)(0+) = (-1)^(k+1)·inf, K^(k)(0+) = (-1)^k·inf); at ±inf every
derivative of J and Y and K is 0 (the limit; PyTorch's bessel_j0/j1/y0/y1 say nan there).
"""

from __future__ import annotations

import math

import numpy as np

from reference.autograd.dispatch import apply
from reference.ops import api as A
from reference.ops.rule import AUTO_ELEMENT_WISE, BATCH_ELEMENTWISE
from reference.ops.rules._mp_unary import host_kernel
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules.registry import RULES, rule

#: digits of mpmath's working precision (its Bessel functions raise it where their series cancel)
_DPS = 30
#: public name -> (kind, order n): J_n, Y_n or K_n
BESSEL = {
    "bessel_j0": ("j", 0),
    "bessel_j1": ("j", 1),
    "bessel_y0": ("y", 0),
    "bessel_y1": ("y", 1),
    "modified_bessel_k0": ("k", 0),
    "modified_bessel_k1": ("k", 1),
    "scaled_modified_bessel_k0": ("ke", 0),
    "scaled_modified_bessel_k1": ("ke", 1),
}
#: from here on the scaled K's are summed from their asymptotic series (:func:`_scaled_k`)
_ASYMPTOTIC_FROM = 30.0


def _mp_derivative(kind, n, k, v):
    """The k-th derivative of J_n, Y_n or K_n at the mpf ``v`` (mpmath)."""
    import mpmath

    if kind == "j":
        return mpmath.besselj(n, v, derivative=k)
    if kind == "y":
        return mpmath.bessely(n, v, derivative=k)
    if kind == "ke":
        return _scaled_k(n, k, v)
    return _k_derivative(n, k, lambda m: mpmath.besselk(m, v))


def _k_derivative(n, k, K):
    """K_n^(k) = (-1/2)^k sum_i C(k, i) K_|n-k+2i|, ``K(m)`` = K_m."""
    return sum(math.comb(k, i) * K(abs(n - k + 2 * i)) for i in range(k + 1)) * (-0.5) ** k


def _scaled_k(n, k, v):
    """The k-th derivative of e^x K_n(x) at the mpf ``v`` > 0 (n = 0, 1).

    Below :data:`_ASYMPTOTIC_FROM`: Leibniz's rule e^x sum_j C(k, j) K_n^(j)(x), whose terms
    (alternating in sign: K^(j) has the sign (-1)^j) cancel to a result of relative size (2x)^-k
    (K0e' = e^x (K0 - K1) = -K0e/(2x) (1 + O(1/x))): evaluated at 30 + 2k digits (at most 1.6k lost
    for x < 30), K_2, K_3, ... from mpmath's K0 and K1 by the upward recurrence K_(m+1) = K_(m-1) +
    (2m/x) K_m (all terms positive: no cancellation). Past it: the asymptotic series e^x K_n(x) =
    sqrt(pi/2) sum_m a_m x^(-m-1/2), a_0 = 1, a_m = a_(m-1) (4n² - (2m-1)²)/(8m) (DLMF 10.40.2),
    differentiated termwise (it holds uniformly in a sector around the positive axis, so its
    derivatives' expansions are the termwise derivatives) and truncated where its terms stop
    decreasing: the error is then about the smallest term, e^(-2x) relative, 2^k x^k e^(-2x) < 1e-22
    of the k-th derivative (k <= 3) at x >= 30 (checked against the Leibniz sum at 60 digits,
    tests/autograd/test_bessel_accuracy.py). The kernel is accurate at any x (e^x K0(x) at x = 700
    and 1e300, where K0 itself underflows float64)."""
    import mpmath

    if v < _ASYMPTOTIC_FROM:
        with mpmath.workdps(_DPS + 2 * k):
            ks = [mpmath.besselk(0, v), mpmath.besselk(1, v)]
            for m in range(1, n + k):
                ks.append(ks[m - 1] + 2 * m / v * ks[m])
            leibniz = sum(math.comb(k, j) * _k_derivative(n, j, ks.__getitem__) for j in range(k + 1))
            return mpmath.exp(v) * leibniz
    with mpmath.workdps(_DPS + 10):
        total, a, previous, m = mpmath.mpf(0), mpmath.mpf(1), mpmath.inf, 0
        while True:
            # d^k/dx^k x^(-m-1/2) = (-1)^k (m + 1/2)(m + 3/2)...(m + k - 1/2) x^(-m-1/2-k)
            falling = math.prod(m + 0.5 + i for i in range(k))
            term = a * (-1) ** k * falling * v ** (-m - k - 0.5)
            if abs(term) >= previous or term == 0:
                break
            total += term
            if abs(term) < abs(total) * mpmath.mpf(10) ** -(_DPS + 8):
                break
            previous = abs(term)
            m += 1
            a = a * (4 * n * n - (2 * m - 1) ** 2) / (8 * m)
        return mpmath.sqrt(mpmath.pi / 2) * total


def _at_special(kind, k, v):
    """The value at a point mpmath is not asked about (nan, ±inf, x <= 0 for Y and K), or None."""
    if math.isnan(v):
        return math.nan
    if math.isinf(v):
        return math.nan if (kind != "j" and v < 0) else 0.0
    if kind == "j":
        return None
    if v < 0:
        return math.nan
    if v == 0:  # the limit from the right: Y^(k) ~ (-1)^(k+1)·inf, K^(k) ~ (-1)^k·inf
        sign = (-1) ** (k + 1) if kind == "y" else (-1) ** k
        return sign * math.inf
    return None


@sign_aware_cache
def _exact(kind, n, k, v):
    """The k-th derivative of J_n / Y_n / K_n / e^x K_n at the float ``v``, rounded to float64."""
    import mpmath

    special = _at_special(kind, k, v)
    if special is not None:
        return special
    with mpmath.workdps(_DPS):
        return float(_mp_derivative(kind, n, k, mpmath.mpf(v)))


def bessel_kernel(kind, n, k):
    """The exact kernel of the k-th derivative of J_n / Y_n / K_n / e^x K_n (k = 0: the function),
    element by element on the host (cached per element), returned in the input's namespace and dtype
    (float16/32: rounded once from the float64 result)."""
    return host_kernel(lambda v, order: _exact(kind, n, order, v), k)


def derivative_of(fn, order, x):
    """The ``order``-th derivative of Bessel function ``fn`` (a public name) at Tensor ``x``."""
    return apply(RULES["bessel_derivative"], (x,), {"fn": fn, "order": order})


def _derivative_forward(a, fn, order):
    kind, n = BESSEL[fn]
    return bessel_kernel(kind, n, order)(a)


rule(
    "bessel_derivative",
    "BesselDerivativeBackward0",
    ("self",),  # fn: a name of BESSEL; order: the derivative's order, >= 1
    forward=_derivative_forward,
    grads=(lambda c, g: g * derivative_of(c.fn, c.order + 1, c.self),),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
for _name, (_kind, _n) in BESSEL.items():
    rule(
        _name,
        # no PyTorch node: PyTorch leaves these functions without a derivative
        "".join(p.capitalize() for p in _name.split("_")) + "Backward0",
        ("self",),
        forward=bessel_kernel(_kind, _n, 0),
        grads=(lambda c, g, name=_name: g * derivative_of(name, 1, c.self),),
        saves={"self": (0,)},
        jvp=AUTO_ELEMENT_WISE,
        batch=BATCH_ELEMENTWISE,
    )


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# No framework documents an accuracy figure for these functions (PyTorch's ATen ports of Cephes,
# TensorFlow's Eigen ports of Cephes, XLA for JAX's bessel_jn): the figures are measurements
# against mpmath (30 digits), method and numbers below; the script is described in docs/records.md.
from reference import errors as _E  # noqa: E402
from reference.errors import REFERENCE_U  # noqa: E402

#: c of J0, J1, Y0, Y1: the worst relative error, in ulps of the result, of TensorFlow float32/64
#: and PyTorch float32 over 1240 points of [1e-6, 60] where |y| >= 1/4 of the envelope
#: min(1, sqrt(2/(pi x))): 59.7 ulps (PyTorch float32 bessel_y1 at 5.15); declared 60
_JY_ULPS = 60.0


def _jy_bound(name):
    """The bound of J_n / Y_n (``name``, n = 0, 1): see :func:`_jy_error`."""
    kind, n = BESSEL[name]

    def bound(p, arrays, errs, params, outs):
        return _jy_error(kind, n, p, arrays, errs, outs)

    return bound


def _jy_error(kind, n, p, arrays, errs, outs):
    """J_n, Y_n (n = 0, 1): c = 60 ulps of the result, plus the absolute u·env·(4 + |x|), env =
    min(1, sqrt(2/(pi |x|))) the functions' envelope: the Cephes forms for x > 5 (8 in float32)
    evaluate env·(P cos(x - x_n) - Q sin(x - x_n)), x_n = pi/4 or 3pi/4, whose argument rounds by
    |x|·u; near the zeros the result is that absolute error, not a relative one. Measured: left over
    once c is allowed, at most 3.5u on [1e-6, 60], and at most 0.9·u·env·(8 + x) on 310 points of
    [60, 1e300] (PyTorch and TensorFlow, float32 and float64; past 1/u no digit is left, and the
    term says so). Input errors propagate through the derivative (scipy's J/Y of order n ± 1:
    the magnitude only)."""
    import scipy.special

    x = np.abs(np.asarray(arrays[0], dtype=np.float64))
    y = np.asarray(outs[0], dtype=np.float64)
    u = p.u + REFERENCE_U
    with np.errstate(all="ignore"):
        env = np.minimum(1.0, np.sqrt(2 / (np.pi * x)))
        err = 2 * _JY_ULPS * u * np.abs(y) + u * env * (4 + x) + p.eta
        if errs[0] is not None:
            fn = scipy.special.jv if kind == "j" else scipy.special.yv
            slope = np.abs(fn(n - 1, x) - fn(n + 1, x)) / 2
            err = err + np.where(np.isfinite(slope), slope, np.inf) * np.asarray(errs[0])
    return [err]


def _derivative_formula(fn, order, x):
    """The ``order``-th derivative of ``fn`` as TensorFlow computes it: its registered gradients
    J0' = -J1, J1' = J0 - J1/x (Y alike), K0' = -K1, K1' = -K0 - K1/x, K0e' = K0e - K1e,
    K1e' = K1e (1 - 1/x) - K0e, differentiated again by
    autodiff: f^(k) of the lower derivatives (primitives, each with its own error) by Leibniz's rule
    for (J1/x)^(k-1) = sum_i C(k-1, i) J1^(i) (-1)^(k-1-i) (k-1-i)! / x^(k-i)."""
    kind, n = BESSEL[fn]
    other = {"j": ("bessel_j0", "bessel_j1"), "y": ("bessel_y0", "bessel_y1"),
             "k": ("modified_bessel_k0", "modified_bessel_k1"),
             "ke": ("scaled_modified_bessel_k0", "scaled_modified_bessel_k1")}[kind]  # fmt: skip

    def d(name, k):
        return apply(RULES[name], (x,), {}) if k == 0 else derivative_of(name, k, x)

    m = order - 1
    if n == 0:  # J0' = -J1, K0' = -K1, K0e' = K0e - K1e
        return d(fn, m) - d(other[1], m) if kind == "ke" else -d(other[1], m)
    quotient = sum(
        d(other[1], i) * (math.comb(m, i) * (-1) ** (m - i) * math.factorial(m - i)) / A.pow(x, m - i + 1)
        for i in range(m + 1)
    )
    first = d(other[0], m)
    if kind == "ke":  # K1e' = K1e (1 - 1/x) - K0e
        return d(fn, m) - quotient - first
    result = (-first if kind == "k" else first) - quotient
    if kind == "j":
        # J1/x is 0/0 at x = 0: TensorFlow's _BesselJ1Grad imputes the first derivative 1/2 there
        # (where(x == 0, 0.5, J0 - J1/x)), an exact constant; autodiff through the where makes the
        # higher orders 0 there (exact for the second; the third is -3/8: a departure, judged as one)
        result = A.where(A.eq(x, 0.0), 0.5 if order == 1 else 0.0, result)
    return result


_ERRORS = {name: _E.derived_bound(_jy_bound(name), "measured against mpmath: 60 ulps plus u·env·(4 + |x|)")
           for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1")}  # fmt: skip
# K0, K1: the worst relative error of PyTorch and TensorFlow, float32 and float64, over 1240
# points of [1e-6, 60] (float32) / [1e-6, 700) (float64) against mpmath: 5.48 ulps (TensorFlow
# float32 bessel_k1 at 1.7); declared 6
_K_ULPS = 6.0
# e^x K0, e^x K1: the same measurement, 1240 points of [1e-6, 60] and 300 of [60, 1e300], float32
# and float64: 5.82 ulps worst (TensorFlow float32 bessel_k0e at 1.379; PyTorch's worst 5.00,
# float32 scaled_modified_bessel_k0 at 0.699); declared 6
_ERRORS.update(
    {
        name: _E.elementwise(_K_ULPS, "measured against mpmath: 5.48 ulps worst (TensorFlow float32 K1)")
        for name in ("modified_bessel_k1",)
    }
)
_ERRORS["scaled_modified_bessel_k1"] = _E.elementwise(
    _K_ULPS, "measured against mpmath: 5.82 ulps worst (TensorFlow float32 K0e)"
)


def _k0_bound(name):
    """The bound of K0 and e^x K0 (``name``): see :func:`_k0_error`."""

    def bound(p, arrays, errs, params, outs):
        return _k0_error(name, p, arrays, errs, outs)

    return bound


def _k0_error(name, p, arrays, errs, outs):
    """K0 and e^x K0: c = 6 ulps of the result (measured, above), plus the rounding of x/2 where it
    is subnormal. Every framework's kernel is Cephes' chbevl(x² - 2) - log(x/2)·I0(x) below x = 2
    (e^x times it for the scaled form): under gradual underflow x/2 of a subnormal x rounds by up to
    half the smallest subnormal s/2 (s = 2^-1074 in float64, 2^-149 in float32), a relative error
    (s/2)/(x/2) = s/x that log turns into the absolute error s/x (I0(x) = 1 there, e^x = 1). It is
    below u·|y| unless x < s/(u·|y|), i.e. only for subnormal x: PyTorch's float64 K0 at 3.3e-320
    is off by 1.497e-4 = s/x exactly (mpmath), at x = 2.2e-312 by 19 ulps of 717.73 (the seeded
    special campaign at seed 3). Under flush-to-zero x/2 is 0 and the kernel says inf (a departure,
    not a term). Input errors propagate through |f'(x)| (scipy: K1, or K0e - K1e)."""
    import scipy.special

    x = np.asarray(arrays[0], dtype=np.float64)
    y = np.asarray(outs[0], dtype=np.float64)
    u = p.u + REFERENCE_U
    smallest_subnormal = 2 * p.u * _E.SMALLEST_NORMAL[p.dtype]
    with np.errstate(all="ignore"):
        err = 2 * _K_ULPS * u * np.abs(y) + p.eta
        if not p.flush:
            halving = np.where(x > 0, smallest_subnormal / x, 0.0)
            err = err + np.where(np.isfinite(halving), halving, 0.0)
        if errs[0] is not None:
            if name == "modified_bessel_k0":
                slope = scipy.special.k1(x)
            else:
                slope = np.abs(scipy.special.k0e(x) - scipy.special.k1e(x))
            e = np.asarray(errs[0])
            err = err + np.where(e > 0, np.where(np.isfinite(slope), slope, np.inf) * e, 0.0)
    return [err]


_ERRORS.update(
    {
        name: _E.derived_bound(_k0_bound(name), "measured against mpmath: 6 ulps, plus the rounding of x/2 for subnormal x")
        for name in ("modified_bessel_k0", "scaled_modified_bessel_k0")
    }
)
_ERRORS["bessel_derivative"] = _E.composite(
    lambda x, fn, order: _derivative_formula(fn, order, x),
    "TensorFlow's registered gradients of its Bessel ops (math_grad.py), differentiated again",
)
for _name, _spec in _ERRORS.items():
    RULES[_name].error = _spec
