"""The Hurwitz zeta function ``torch.special.zeta(x, q)`` = ζ(s, q) = Σ_k (q + k)^-s (s = x).

Part of the one derivative table (:mod:`reference.ops.rules`). PyTorch differentiates it in q only
(``-x * zeta(x + 1, q)``; in x it raises "the derivative for 'zeta' is not implemented") and has no
forward mode; TensorFlow's gradient is the same formula, None in x ("TODO: Add derivative with
respect to x", math_grad.py); JAX differentiates both arguments through the jvp of a 16-term
Euler-Maclaurin series written in jax.numpy (``_zeta_series_expansion``, Johansson 2015, formula
(5)). The reference answers with the mathematics (issue 38), every derivative order in both
arguments one exact primitive:

* ``zeta``: the function (s the Tensor ``self``, q the Tensor ``other``);
* ``zeta_derivative`` (params ``ds``, ``dq``, ds + dq >= 1): ∂_s^ds ∂_q^dq ζ(s, q), whose VJPs are
  the derivative at (ds + 1, dq) and (ds, dq + 1).

The kernel is an Euler-Maclaurin sum in mpmath at 40 digits (:func:`_hurwitz`: mpmath's own
``zeta`` is wrong in the ninth digit where ζ is small), rounded once to the input dtype (float32
inputs compute in float64): ∂_q^j ζ(s, q) = (-1)^j (s)_j ζ(s + j, q) ((s)_j the rising factorial),
so ∂_s^i ∂_q^j ζ = (-1)^j Σ_l C(i, l) [∂_s^(i-l) (s)_j] ∂_s^l ζ(s + j, q) (Leibniz).

Special values (PyTorch's where it defines them, the limits elsewhere): nan at nan and at s < 1
(the frameworks' domain: the series diverges; ζ's continuation to s < 1 is not what they compute);
ζ(1, q) = inf (the pole; its q-derivatives are finite there: (-1)^j j! ζ(1 + j, q), the limit,
which is what PyTorch's formula says, and its s-derivatives (-1)^i·inf); at q = ±0 the limit from
the right ((-1)^j·inf in every order); at q a negative integer inf (a pole, PyTorch's value), its
derivatives nan (no limit); at q < 0 not an integer the real sum where s is an integer (PyTorch's
value) and nan elsewhere (q + k < 0 to a non-integer power), its s-derivatives nan (a complex
ln(q + k)); at q = inf 0 in every order (the limit; PyTorch and JAX say nan, TensorFlow 0); at
s = inf the limit: 0 for q > 1, ζ = 1 for q = 1 (its q-derivatives -inf·...: (-1)^j·inf), inf for
0 < q < 1 ((-1)^j·inf in every order).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from reference.autograd.dispatch import apply
from reference.backend import namespace_of, to_numpy
from reference.ops.rule import AUTO_ELEMENT_WISE, BATCH_ELEMENTWISE
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules._times import rounded
from reference.ops.rules.registry import RULES, rule

#: digits of mpmath's working precision (near a zero of an s-derivative, at q < 1, the sum cancels)
_DPS = 40
#: at most this many Euler-Maclaurin correction terms (Bernoulli numbers B_2 ... B_48); they fall by
#: ((s + 2j)/(2πa))² <= 1/(4π)² each, a >= 2(s + 48): below 2^-160 by j = 24, or stopped sooner
_EM_TERMS = 24
#: the direct sum stops where (q + k)^-s < e^-110 (q + 1)^-s, the tail below 2^-150 of the sum
_TAIL = 110.0
#: at most this many direct terms before the Euler-Maclaurin tail
_MAX_DIRECT = 5000


@functools.cache
def _rising_coefficients(j):
    """The coefficients of the rising factorial (s)_j = s (s + 1) ... (s + j - 1), ascending powers."""
    coeffs = [1]
    for k in range(j):
        coeffs = [(coeffs[i - 1] if i else 0) + k * (coeffs[i] if i < len(coeffs) else 0)
                  for i in range(len(coeffs) + 1)]  # fmt: skip
    return tuple(coeffs)


def _rising_derivative(mp, s, j, order):
    """∂_s^order of the rising factorial (s)_j (a polynomial in s: its coefficients exactly, then
    differentiated)."""
    coeffs = _rising_coefficients(j)
    total = mp.mpf(0)
    for power, c in enumerate(coeffs):
        if power >= order and c:
            total += c * math.perm(power, order) * s ** (power - order)
    return total


def _power_derivative(mp, b, s, order):
    """∂_s^order b^-s = (-ln b)^order b^-s (b > 0; b < 0 and s an integer at order 0: the real power)."""
    if b < 0:
        return mp.power(b, -int(s))
    return (-mp.log(b)) ** order * mp.exp(-s * mp.log(b))


def _hurwitz(mp, s, q, order):
    """∂_s^order ζ(s, q) (mpmath numbers, s > 1; q < 0 only at order 0 with s an integer).

    mpmath's own ``zeta(s, a, derivative)`` is not used: its Euler-Maclaurin loop stops at an
    absolute tolerance, so where ζ is small it is wrong in the ninth digit (ζ(31.4794, 442.4) at 40
    digits: 1e-9 relative; ζ(100.5, 1e4) at 100 digits: 3e-12). Here every term is computed to the
    working precision relative to itself:

    * where the terms fall off fast ((q + K)^-s < e^-110 (q + 1)^-s by K terms, K below the
      Euler-Maclaurin start N), the sum of the first K terms (each ∂_s^i (q + k)^-s = (-ln(q + k))^i
      (q + k)^-s, no cancellation but that of term 0 against the rest, for q < 1);
    * else the first N terms, N such that a = q + N >= 2(s + 48), and the Euler-Maclaurin tail at
      a: a^(1-s)/(s - 1) + a^-s/2 + Σ_{j<=24} B_2j/(2j)! (s)_(2j-1) a^(1-s-2j), whose terms fall by
      ((s + 2j)/(2πa))² <= 1/(4π)² each (stopped below 2^-160 of the sum); its s-derivatives by
      Leibniz's rule, term by term (∂_s^n 1/(s - 1) = (-1)^n n!/(s - 1)^(n+1), the rising factorials' exactly)."""
    sf, qf = float(s), float(q)
    em_start = max(0, math.ceil(2 * (sf + 2 * _EM_TERMS) - qf))
    if qf < 0:
        em_start = max(em_start, math.ceil(-qf) + 1)
    if qf > 0:
        with np.errstate(all="ignore"):
            # (q + K)^-s < e^-110 (q + 1)^-s  <=>  K > (q + 1) e^(110/s) - q = (q + 1) expm1(110/s) + 1
            direct = math.ceil((qf + 1) * math.expm1(_TAIL / sf) + 1) + 2 if _TAIL / sf < 700 else math.inf
        if direct <= em_start:
            return mp.fsum(_power_derivative(mp, q + k, s, order) for k in range(max(direct, 2)))
    if em_start > _MAX_DIRECT:  # q < 0 with s > 7800: mpmath's own series, at twice the digits
        with mp.workdps(2 * mp.dps):
            return +mp.zeta(s, q, order)
    total = mp.fsum(_power_derivative(mp, q + k, s, order) for k in range(em_start))
    a = q + em_start
    log_a = mp.log(a)
    # ∂_s^order a^(1-s)/(s - 1): Leibniz over (-ln a)^m a^(1-s) and 1/(s - 1)
    total += mp.fsum(
        math.comb(order, m) * (-log_a) ** m * mp.exp((1 - s) * log_a)
        * (-1) ** (order - m) * math.factorial(order - m) / (s - 1) ** (order - m + 1)
        for m in range(order + 1)
    )  # fmt: skip
    total += _power_derivative(mp, a, s, order) / 2
    small = mp.ldexp(abs(total), -160)
    for j in range(1, _EM_TERMS + 1):
        coeff = mp.bernoulli(2 * j) / mp.factorial(2 * j)
        power = mp.exp((1 - s - 2 * j) * log_a)
        term = coeff * mp.fsum(
            math.comb(order, m) * _rising_derivative(mp, s, 2 * j - 1, order - m) * (-log_a) ** m * power
            for m in range(order + 1)
        )
        total += term
        if abs(term) < small:
            break
    return total


def _special(s, q, ds, dq):
    """ζ's value or derivative where mpmath is not asked (nan, s < 1, s = 1, inf, q <= 0 at a pole
    or with a complex power), or None."""
    if math.isnan(s) or math.isnan(q) or s < 1:
        return math.nan
    sign = -1.0 if dq % 2 else 1.0
    if s == 1 and dq == 0:  # ζ ~ 1/(s - 1) - ψ(q): ∂_s^i of it ~ (-1)^i i!/(s - 1)^(i+1)
        if ds == 0:  # PyTorch's inf at x = 1, whatever q
            return math.inf
        return (-1.0 if ds % 2 else 1.0) * math.inf if q >= 0 else math.nan
    if q == 0:  # the limit from the right: q^-s dominates, every order of one sign
        return sign * math.inf
    if q < 0:
        if q == math.floor(q):
            return math.inf if ds == dq == 0 else math.nan
        if ds > 0 or s != math.floor(s):
            return math.nan
        return None
    if math.isinf(q):
        return 0.0
    if math.isinf(s):
        if q > 1:
            return 0.0
        if q == 1:
            return 1.0 if ds == dq == 0 else (0.0 if dq == 0 else sign * math.inf)
        return sign * math.inf
    return None


@sign_aware_cache
def zeta_exact(s, q, ds, dq):
    """∂_s^ds ∂_q^dq ζ(s, q) at the floats (s, q), correctly rounded to float64."""
    from mpmath import mp

    special = _special(s, q, ds, dq)
    if special is not None:
        return special
    with mp.workdps(_DPS):
        ms, mq = mp.mpf(s), mp.mpf(q)
        if dq == 0:
            return rounded(_hurwitz(mp, ms, mq, ds))
        total = mp.mpf(0)
        for order in range(ds + 1):
            rising = _rising_derivative(mp, ms, dq, ds - order)
            if rising:
                total += math.comb(ds, order) * rising * _hurwitz(mp, ms + dq, mq, order)
        return rounded(-total if dq % 2 else total)


def zeta_kernel(ds, dq):
    """The exact kernel of ∂_s^ds ∂_q^dq ζ, element by element on the host (a cached float64
    scalar function), in the inputs' namespace and dtype (rounded once)."""

    def kernel(s, q):
        sv, qv = np.broadcast_arrays(
            np.asarray(to_numpy(s), dtype=np.float64), np.asarray(to_numpy(q), dtype=np.float64)
        )
        out = np.empty(sv.shape, dtype=np.float64)
        for idx in np.ndindex(sv.shape):
            out[idx] = zeta_exact(float(sv[idx]), float(qv[idx]), ds, dq)
        with np.errstate(all="ignore"):
            return namespace_of(s).asarray(out.astype(s.dtype))

    return kernel


def derivative(s, q, ds, dq):
    """∂_s^ds ∂_q^dq ζ(s, q) at Tensors ``s``, ``q`` (ds + dq >= 1)."""
    return apply(RULES["zeta_derivative"], (s, q), {"ds": ds, "dq": dq})


rule(
    "zeta_derivative",
    "ZetaDerivativeBackward0",
    ("self", "other"),  # ds, dq: the orders in s (self) and q (other), ds + dq >= 1
    forward=lambda s, q, ds, dq: zeta_kernel(ds, dq)(s, q),
    grads=(
        lambda c, g: g * derivative(c.self, c.other, c.ds + 1, c.dq),
        lambda c, g: g * derivative(c.self, c.other, c.ds, c.dq + 1),
    ),
    saves={"self": (0, 1), "other": (0, 1)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "zeta",
    "SpecialZetaBackward0",  # PyTorch's node raises for self (s): the reference differentiates both
    ("self", "other"),
    forward=zeta_kernel(0, 0),
    grads=(
        lambda c, g: g * derivative(c.self, c.other, 1, 0),
        lambda c, g: g * derivative(c.self, c.other, 0, 1),
    ),
    saves={"self": (0, 1), "other": (0, 1)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
def _cond(s, q):
    """The condition of ζ's kernels, 1 + s·L, L = 1 + |ln q| + 1/(s - 1): PyTorch's and
    TensorFlow's Cephes zeta (and XLA's for JAX) sum (q + k)^-s for k < 9 and the Euler-Maclaurin
    tail at q + 9, each power a relative error of s·|ln(q + k)|·u from exp(s·ln(q + k)) and s·u from
    the rounding of q + k; the derivatives' formula -s·ζ(s + 1, q) rounds s + 1, a relative error of
    |∂_s ln ζ|·(s + 1)·u, and |∂_s ln ζ(s, q)| <= |ln q| + 1/(s - 1) (the weighted mean of
    ln(q + k) over the terms, whose tail weighs 1/(s - 1))."""
    s = np.asarray(s, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    with np.errstate(all="ignore"):
        c = 1 + s * (1 + np.abs(np.log(q)) + 1 / (s - 1))
    return np.where(np.isfinite(c), c, np.inf)


# The frameworks' kernels: PyTorch and TensorFlow (Cephes' zeta, through ATen and Eigen) and JAX
# (XLA's chlo.zeta) sum the first terms and the Euler-Maclaurin tail, each to a relative error of a
# few u·cond; their q-derivatives are -s·ζ(s + 1, q) (PyTorch, TensorFlow: a second ζ and the
# rounding of s + 1) and JAX's every derivative the jvp of its own 16-term series in jax.numpy. No
# framework documents a figure: the constants are measurements against the exact kernel above (600
# points, s = 1 + 10^U(-3, 2) and U(1.05, 12), q = 10^U(-3, 3), float32 and float64, seed 0:
# scripts/measure_zeta_error.py), in units of u·cond·|y|.
from reference import errors as _E  # noqa: E402
from reference.errors import REFERENCE_U  # noqa: E402

#: ζ: 0.89 u·cond·|y| measured (PyTorch and TensorFlow float64 at s = 1.63, q = 2.49); declared 2
_VALUE_ULPS = 2.0
#: its derivatives: 9.1 u·cond·|y| measured (JAX float32 ∂²/∂q² at s = 16.0, q = 115.5), the first
#: derivatives at most 4.5 (JAX float32 ∂/∂q there); declared 16
_DERIVATIVE_ULPS = 16.0


def _bound(relative):
    """relative·u·cond·|y| + eta, and the input errors through |∂y/∂s| <= (L + ds + 1)·|y| and
    |∂y/∂q| <= (s + dq)/q·|y| (each further derivative of the terms (q + k)^-s multiplies them by
    at most ln(q + k) + its order, or (s + dq)/(q + k))."""

    def bound(p, arrays, errs, params, outs):
        s, q = (np.asarray(v, dtype=np.float64) for v in arrays)
        y = np.abs(np.asarray(outs[0], dtype=np.float64))
        ds, dq = params.get("ds", 0), params.get("dq", 0)
        u = p.u + REFERENCE_U
        # the q-derivatives are (-1)^dq (s)_dq ζ(s + dq, q): the kernel sums ζ at s + dq, whose
        # tail weighs 1/(s + dq - 1) (finite at ζ's pole s = 1, where ∂_q ζ = -ζ(2, q) is too)
        cond = _cond(s + dq, q) if ds == 0 else _cond(s, q)
        err = u * relative * cond * y + p.eta
        with np.errstate(all="ignore"):
            slopes = ((cond / np.maximum(s, 1) + ds + 1) * y, (s + dq) / np.abs(q) * y)
        for slope, e in zip(slopes, errs):
            if e is not None:
                err = err + _E.carried(np.where(np.isfinite(slope), slope, np.inf), e)
        return [err]

    return bound


_SOURCE = "measured against mpmath: {} u·cond·|y|, cond = 1 + s·(1 + |ln q| + 1/(s - 1))"
RULES["zeta"].error = _E.derived_bound(_bound(_VALUE_ULPS), _SOURCE.format(_VALUE_ULPS))
RULES["zeta_derivative"].error = _E.derived_bound(_bound(_DERIVATIVE_ULPS), _SOURCE.format(_DERIVATIVE_ULPS))
