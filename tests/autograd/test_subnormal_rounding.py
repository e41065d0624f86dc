"""mpmath values rounded once to float64 below the normal range (issue 38).

``float()`` of an mpmath number rounds it to 53 bits and then, in the subnormal range, again to the
subnormal grid: 2^-1074·(3/2 - 2^-60) first becomes the tie 3/2·2^-1074 and then, ties to even,
2^-1073, where its nearest float is 2^-1074. The exact kernels of the special functions returned
``float(value)``; they now return :func:`reference.ops.rules._times.rounded` (one rounding). The
expected values here are rounded by integer arithmetic (Python's ``round`` of a Fraction: ties to
even), not by the helper under test."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from reference.ops.rules import special_expint, special_fresnel, special_spence
from reference.ops.rules._times import rounded

SUB = Fraction(1, 2**1074)  # the smallest subnormal, the grid below the normal range


def nearest_subnormal(value) -> float:
    """The float64 nearest an mpmath number in the subnormal range, ties to even, by integers."""
    sign, man, exp, _ = value._mpf_
    q = Fraction(man) * Fraction(2) ** exp
    k = round(q / SUB)  # Fraction rounding: half to even
    return math.ldexp(float(k), -1074) * (-1 if sign else 1)


def tie_breaker(k: int, below: bool):
    """(k + 1/2 ∓ 2^-60)·2^-1074 at 200 bits: within 2^-60 of a tie, which a 53-bit rounding makes
    the tie itself."""
    with mpmath.workprec(200):
        offset = -mpmath.ldexp(1, -60) if below else mpmath.ldexp(1, -60)
        return mpmath.ldexp(mpmath.mpf(k) + mpmath.mpf(1) / 2 + offset, -1074)


@pytest.mark.parametrize("k", [1, 2, 5, 2**20 + 1, 2**51 - 3])
@pytest.mark.parametrize("below", [True, False])
def test_rounded_rounds_a_subnormal_once(k, below):
    value = tie_breaker(k, below)
    want = nearest_subnormal(value)
    assert want == math.ldexp(k if below else k + 1, -1074)
    negative = mpmath.fneg(value, exact=True)  # (unary minus rounds to the context's 53 bits)
    assert rounded(value) == want and rounded(negative) == -want


def test_float_of_an_mpmath_subnormal_rounds_twice():
    # the premise: float() lands on the tie and rounds it to even, one subnormal ulp off (k = 1:
    # 2^-1073 for the nearest 2^-1074); rounded() of normal, zero and non-finite values is float()'s
    value = tie_breaker(1, below=True)
    assert float(value) == math.ldexp(2, -1074) != rounded(value)
    for v in (mpmath.mpf(1) / 3, mpmath.mpf(0), mpmath.inf, -mpmath.inf, mpmath.mpf("1e400"), mpmath.mpf(1e-300)):
        assert rounded(v) == float(v)
    assert math.isnan(rounded(mpmath.nan))


# Each exact kernel returns its mpmath value rounded once: the mpmath function it calls is replaced
# by one returning a value within 2^-60 of a subnormal tie (the kernel's own argument is ignored).
KERNELS = [
    ("ei", lambda: special_expint.expi_exact(-700.123, 0)),
    ("expint", lambda: special_expint.expn_exact(700.125, 0, 3)),
    ("polylog", lambda: special_spence.spence_exact(0.3125, 0)),
    ("fresnels", lambda: special_fresnel.fresnel_sin_exact(0.0123, 0)),
]


@pytest.mark.parametrize("name,call", KERNELS, ids=[k[0] for k in KERNELS])
def test_special_kernels_round_their_mpmath_value_once(monkeypatch, name, call):
    value = tie_breaker(3, below=True)  # nearest 3·2^-1074; float() says 4·2^-1074
    monkeypatch.setattr(mpmath.mp, name, lambda *args, **kwargs: value)
    assert call() == math.ldexp(3, -1074)


@pytest.mark.parametrize("x", [712.0, 725.5, 733.0])
def test_exponential_integrals_at_subnormal_outputs_are_mpmaths_nearest(x):
    with mpmath.workdps(60):
        e1 = mpmath.expint(1, x)  # E_1(x) = -Ei(-x) ~ e^-x / x: subnormal past x = 705
        e3 = mpmath.expint(3, x)
    assert 0 < special_expint.expn_exact(x, 0, 1) == nearest_subnormal(e1) < 2.0**-1022
    assert special_expint.expn_exact(x, 0, 3) == nearest_subnormal(e3)
    assert special_expint.expi_exact(-x, 0) == -nearest_subnormal(e1)
