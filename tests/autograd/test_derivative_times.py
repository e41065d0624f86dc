"""A derivative times its multiplier, rounded once (reference/ops/rules/_times.py, issue 38): where an
exact kernel's derivative leaves float64's range but its product with the cotangent does not, the
reference's gradient is that product, not the ±inf (or 0) of the derivative rounded first.

Each case differentiates a rule two or three times by reverse mode (the last cotangent ``w`` scales
the derivative: grad(grad(f)·1)·w = w·f''), and compares with mpmath's product of a closed form.
Before the derivative primitives took their multipliers every case said ±inf (0 for the one that
underflows)."""

from __future__ import annotations

import math

import mpmath
import pytest

import reference as T
from reference.ops.rules.registry import from_rule

mp = mpmath.mp


def _gamma2(x):
    """Γ''(x) = Γ(x)(ψ(x)² + ψ'(x))."""
    return mp.gamma(x) * (mp.psi(0, x) ** 2 + mp.psi(1, x))


def _spence3(x):
    """The third derivative of spence, (ln x/(1 - x))'': -(1 - 2x)/(x(1 - x))² + 1/(x(1 - x)²) + 2 ln x/(1 - x)³."""
    return -(1 - 2 * x) / (x * (1 - x)) ** 2 + 1 / (x * (1 - x) ** 2) + 2 * mp.log(x) / (1 - x) ** 3


def _fresnel_cos3(x):
    """C'''(x) = -π sin(πx²/2) - π²x² cos(πx²/2)."""
    return -mp.pi * mp.sin(mp.pi * x * x / 2) - (mp.pi * x) ** 2 * mp.cos(mp.pi * x * x / 2)


#: (rule, arguments, index of the argument differentiated, order, w, exact w·∂^order f by mpmath)
CASES = [
    # ∂_b² (x + √(x² + b))/2 = -1/(8s³), s = √(x² + b) = 2.9e-154: -5.3e459 (the seed-1 campaign's point)
    ("squareplus", (-5.6e-309, 8.2e-308), 1, 2, 2.5e-308, lambda x, b, w: -w / (8 * mp.sqrt(x * x + b) ** 3)),
    # ∂_x² = b/(2s³) = 5e-531 underflows; times 1e300 it is 5e-231
    ("squareplus", (1e110, 1e-200), 0, 2, 1e300, lambda x, b, w: w * b / (2 * mp.sqrt(x * x + b) ** 3)),
    ("beta", (1e-110, 1.0), 0, 2, 1e-100, lambda a, b, w: w * 2 / a**3),  # B(a, 1) = 1/a
    # (z)_m = Γ(z + m)/Γ(z) = 1e385 at (300, 150), ∂_m² = (z)_m (ψ(z + m)² + ψ'(z + m))
    ("poch", (300.0, 150.0), 1, 2, 1e-100, lambda z, m, w: w * mp.rf(z, m) * (mp.psi(0, z + m) ** 2 + mp.psi(1, z + m))),
    ("xdivy", (1.0, 1e-110), 1, 2, 1e-100, lambda x, y, w: w * 2 * x / y**3),
    ("kl_div", (1.0, 1e-160), 1, 2, 1e-100, lambda x, y, w: w * x / y**2),
    ("rel_entr", (1e-310, 1.0), 0, 2, 1e-100, lambda x, y, w: w / x),
    ("boxcox", (1e-110, -1.0), 0, 2, 1e-100, lambda x, lam, w: w * (lam - 1) * x ** (lam - 2)),
    ("expi", (1e-160,), 0, 2, 1e-100, lambda x, w: w * mp.exp(x) * (x - 1) / x**2),
    ("spence", (1e-160,), 0, 3, 1e-100, lambda x, w: w * _spence3(x)),
    ("log1mexp", (1e-160,), 0, 2, 1e-100, lambda x, w: -w * mp.exp(x) / mp.expm1(x) ** 2),
    ("gamma", (1e-110,), 0, 2, 1e-100, lambda x, w: w * _gamma2(x)),
    ("gamma", (200.0,), 0, 2, 1e-100, lambda x, w: w * _gamma2(x)),  # Γ(200) = 3.9e372
    ("loggamma", (1e-160,), 0, 2, 1e-100, lambda x, w: w * mp.psi(1, x)),
    # x² a multiple of 4 at x = 1e155: C''' = -π²x² = -2.4e311
    ("fresnel_cos", (1e155,), 0, 3, 1e-100, lambda x, w: w * _fresnel_cos3(x)),
    ("sici_ci", (1e-160,), 0, 2, 1e-100, lambda x, w: w * (-mp.sin(x) / x - mp.cos(x) / x**2)),
]


@pytest.mark.parametrize("name, args, k, order, w, exact", CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_derivative_times_cotangent_is_rounded_once(name, args, k, order, w, exact):
    xs = [T.tensor([v], dtype=T.float64, requires_grad=True) for v in args]
    d = from_rule(name, *xs)
    for _ in range(order - 1):
        (d,) = T.autograd.grad(d.sum(), xs[k], create_graph=True)
    (d,) = T.autograd.grad(d, xs[k], grad_outputs=T.tensor([w], dtype=T.float64))
    with mp.workdps(400):  # past x² = 1e310's digits: fresnel_cos's phase πx²/2 reduced exactly
        want = float(exact(*(mp.mpf(v) for v in args), mp.mpf(w)))
    assert math.isfinite(want) and want != 0  # the product is representable
    got = d.tolist()[0]
    assert got == pytest.approx(want, rel=4e-16, abs=0), (name, args, got, want)


def _dawsn2(x):
    """D''(x) = -2D - 2x D' = -2D - 2x(1 - 2xD), D = (√π/2) e^-x² erfi(x)."""
    d = mp.sqrt(mp.pi) / 2 * mp.exp(-x * x) * mp.erfi(x)
    return -2 * d - 2 * x * (1 - 2 * x * d)


def test_the_bound_covers_a_tangent_flushed_inside_the_frameworks_formula():
    # dawsn-43d57b564c0c (bfloat16 jvp_jvp, `--ops dawsn --draws seeded --seed 1`): JAX's second
    # tangent is t1·d(1 - 2x·D)(t2) = -t1·((2t2)·D + 2x·(t2·D')), and at x = 2.125, t1 = 2.234375,
    # t2 = -2.87e-38 the intermediate tangent t2·D' = 5.0e-39 is below bfloat16's smallest normal
    # (1.18e-38) and flushed: times 2x and t1 an error of 4.1 smallest normals (JAX says +3.54e-38,
    # exact -1.31e-38). The reference forms (t1·t2)·D'' with one rounding; its declaration took
    # only that order (bound 3.7 smallest normals, ratio 1.11): it now also takes the forward
    # order, t1·(forward mode of the previous order's formula with t2 at its leaves)
    jax = pytest.importorskip("jax")
    import numpy as np

    from reference.errors import Precision, bound_of

    x, t1, t2 = 2.125, 2.234375, -2.865267480129326e-38

    def second_tangent(y):
        inner = lambda z: T.func.jvp(T.special.dawsn, (z,), (T.full_like(z, t1),))[1]  # noqa: E731
        return T.func.jvp(inner, (y,), (T.full_like(y, t2),))[1]

    (value,), (bound,), _ = bound_of(second_tangent, [np.array([x])], Precision("bfloat16", flush=True))
    with mp.workdps(50):
        exact = float(_dawsn2(mp.mpf(x)) * mp.mpf(t1) * mp.mpf(t2))
    assert float(value[0]) == pytest.approx(exact, rel=1e-15)

    jnp = jax.numpy
    inner = lambda z: jax.jvp(jax.scipy.special.dawsn, (z,), (jnp.full_like(z, t1),))[1]  # noqa: E731
    observed = jax.jit(lambda z: jax.jvp(inner, (z,), (jnp.full_like(z, t2),))[1])(jnp.asarray([x], dtype=jnp.bfloat16))
    error = abs(float(observed[0]) - exact)
    assert error > 3 * 1.1754943508222875e-38  # the flush happened (the case's premise)
    assert error <= bound[0], (float(observed[0]), exact, bound[0])
    assert bound[0] < 1e-36  # still the scale of the smallest normal: an error of the value's size is caught


def test_the_two_multipliers_product_may_leave_float64_range():
    # B(a, 1) = 1/a: ∂_a² = 2/a³ = 2e330 at a = 1e-110; the first cotangent 1e-160 and the second
    # 1e-160 multiply to 1e-320 (subnormal in float64, 4 digits): their product with the derivative,
    # 2e10, is formed in mpmath, one rounding
    a = T.tensor([1e-110], dtype=T.float64, requires_grad=True)
    b = T.tensor([1.0], dtype=T.float64)
    (d,) = T.autograd.grad(T.special.beta(a, b), a, grad_outputs=T.tensor([1e-160], dtype=T.float64), create_graph=True)
    (d2,) = T.autograd.grad(d, a, grad_outputs=T.tensor([1e-160], dtype=T.float64))
    with mp.workdps(50):
        want = float(2 / mp.mpf(1e-110) ** 3 * mp.mpf(1e-160) * mp.mpf(1e-160))
    assert d2.tolist()[0] == pytest.approx(want, rel=4e-16, abs=0)


def test_the_declared_orders_broadcast_a_scalar_argument():
    # beta-4fe45dcbd833 (jvp_jvp, a of shape [], b of shape [1, 9]; kl_div, poch, rel_entr alike in
    # the seed-1 run): the tangent of the scalar argument is the multiplier of shape [] while the
    # formula's arguments broadcast to [3]; the backward pass over the formula then took a
    # cotangent of shape [] for an output of shape [3] and raised (a crash of the reference)
    import numpy as np

    from reference.errors import Precision, bound_of

    a0, bs, ta, tb = 1.5, [0.5, 2.0, 3.0], 0.75, [1.0, -0.5, 0.25]

    def second_tangent(a, b):
        tangents = (T.full_like(a, ta), T.tensor(tb, dtype=T.float64))
        inner = lambda x, y: T.func.jvp(T.special.beta, (x, y), tangents)[1]  # noqa: E731
        return T.func.jvp(inner, (a, b), tangents)[1]

    (value,), (bound,), _ = bound_of(second_tangent, [np.array(a0), np.array(bs)], Precision("float32"))
    with mp.workdps(40):
        for i, (b, t) in enumerate(zip(bs, tb)):
            f = lambda x, y: mp.beta(x, y)  # noqa: E731
            want = sum(
                c * mp.diff(f, (mp.mpf(a0), mp.mpf(b)), (i0, 2 - i0)) * mp.mpf(ta) ** i0 * mp.mpf(t) ** (2 - i0)
                for i0, c in ((2, 1), (1, 2), (0, 1))
            )
            assert float(value[i]) == pytest.approx(float(want), rel=1e-12)
    assert np.all(np.isfinite(bound)) and np.all(bound < 1e-4 * np.abs(value))


@pytest.mark.parametrize(
    "value, multipliers, exact",
    [
        (0.0, (1e200, 1e200), 0.0),  # xdivy's and kl_div's derivatives are exactly 0 at x = 0
        (-0.0, (1e200, -1e200), 0.0),
        (math.inf, (1e-200, 1e-200), math.inf),
        (-math.inf, (1e-200, -1e-200), math.inf),
        (0.0, (1e-200, 1e-200), 0.0),
    ],
)
def test_an_exact_zero_or_infinity_times_multipliers_out_of_range_is_itself(value, multipliers, exact):
    """Where the multipliers' float64 product overflows (or underflows) the product of an exact 0
    (or an infinity) with them is 0 (an infinity), never 0·inf = nan: a review found times(0.0,
    1e200, 1e200) nan, which a framework's 0 would have failed against."""
    from reference.ops.rules._times import times

    got = times(value, *multipliers)
    assert got == exact and math.copysign(1, got) == math.copysign(1, exact), got


def _is_nearest(q, r):
    """Whether the float ``r`` is the float64 nearest the rational ``q`` (ties to even), judged in
    exact rationals: no neighbour of ``r`` is nearer, and at a tie ``r``'s significand is even; inf
    exactly where q is at least the overflow threshold (2 - 2^-53)·2^1023."""
    from fractions import Fraction

    threshold = Fraction(2**1024 - 2**970)
    if math.isinf(r):
        return (q >= threshold) if r > 0 else (q <= -threshold)
    if abs(q) >= threshold:
        return False
    d = abs(q - Fraction(r))
    for neighbour in (math.nextafter(r, math.inf), math.nextafter(r, -math.inf)):
        if math.isinf(neighbour):
            continue
        e = abs(q - Fraction(neighbour))
        if e < d or (e == d and int(r.hex().split("p")[0][-1], 16) % 2 == 1):
            return False
    return True


#: (value, multipliers) whose product the float64 product rounds twice to the wrong float
TWICE = [
    # (2^29 + 1 + 2^-31)·2^-1075, above a midpoint between subnormals; the multipliers' product
    # (1 + 2^-29 + 2^-60)·2^-523 rounds to (1 + 2^-29)·2^-523, and the product is then that midpoint,
    # which ties to even round down: one subnormal ulp
    (2.0**-523, ((1 + 2.0**-30) * 2.0**-523, 1 + 2.0**-30)),
    # (2^27 - 1)·2^500 · 0x1.999999cccccccp+494 · 5 is just below (2 - 2^-53)·2^1023: the largest
    # float; the multipliers' product rounds up to (2^27 + 1)·2^470, and the product is that threshold: inf
    ((2**27 - 1) * 2.0**500, (float.fromhex("0x1.999999cccccccp+494"), 5.0)),
]


@pytest.mark.parametrize("value, multipliers", TWICE)
def test_a_product_out_of_the_normal_range_is_rounded_once(value, multipliers):
    """Review (session 25): times rounded the multipliers' product and then the result, twice, where
    the result is subnormal or overflows; against the exact rational product it is now the nearest
    float (before: 0x0.0000010000000p-1022 for 0x0.0000010000001p-1022, inf for the largest float)."""
    from fractions import Fraction

    from reference.ops.rules._times import times

    exact = Fraction(value)
    for m in multipliers:
        exact *= Fraction(m)
    got = times(value, *multipliers)
    assert _is_nearest(exact, got), (got.hex(), float(exact))


def test_an_unrounded_value_below_the_normal_range_is_rounded_once():
    """mpmath's conversion rounds to 53 bits and then to the subnormal grid: 2^-1075·(1 + 2^-60) became
    2^-1075, a tie, then 0; the nearest float is 2^-1074 (the kernel's value and its product with 1)."""
    from fractions import Fraction

    from reference.ops.rules._times import times, unrounded

    with mp.workprec(200):
        value = mp.ldexp(1 + mp.mpf(2) ** -60, -1075)
        exact = Fraction(2**60 + 1, 2 ** (1075 + 60))
        kernel = unrounded(value)
        assert _is_nearest(exact, float(kernel)), float(kernel)
        assert _is_nearest(exact, times(kernel, 1.0, 1.0))


def test_random_products_near_the_edges_of_the_range_are_rounded_once():
    """Products drawn (seeded) into the subnormal range and across the overflow threshold, against
    exact rationals; a draw that stays in the normal range is left out (there one rounding more is
    the documented speed of the host loop)."""
    import random
    from fractions import Fraction

    from reference.ops.rules._times import times

    rng = random.Random(38)
    checked = 0
    for _ in range(2000):
        scale = rng.choice([-1074, -1060, -1030, 1023])  # the result's binary exponent, about
        a = rng.uniform(1, 2) * 2.0 ** rng.randint(-400, 400)
        b = rng.uniform(1, 2) * 2.0 ** rng.randint(-300, 300)
        e = scale - math.frexp(a)[1] - math.frexp(b)[1]
        if not -1022 <= e <= 1023:
            continue
        value = rng.choice([-1, 1]) * rng.uniform(1, 2) * 2.0**e
        exact = Fraction(value) * Fraction(a) * Fraction(b)
        if Fraction(2**-1022) <= abs(exact) < Fraction(2**1024 - 2**970):
            continue
        assert _is_nearest(exact, times(value, a, b)), (value, a, b)
        checked += 1
    assert checked > 500
