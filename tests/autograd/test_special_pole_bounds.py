"""The derived bounds of special functions at the poles of a factor of their formula (Γ(0), ζ's
s = 1, sin x/x and J1(x)/x at 0) where the value itself is finite: each bound must be finite (an
infinite or nan bound passes every framework value) and hold the reference's value against mpmath.

Found by session 25's campaign: bessel_j1, sici_si, gammainc(c), gammainc(c)_x, zeta_q and betainc
passed there with a nan or infinite bound at a finite reference value (JAX's nan among them).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import reference as T
from reference.errors import Precision, bound_of


def _grad(f, wrt=0):
    def run(*xs):
        return T.autograd.grad(f(*xs).sum(), xs[wrt])[0]

    return run


def _within(run, inputs, exact, dtype="float32"):
    (value,), (bound,), _ = bound_of(run, [np.array(v, dtype=np.float64) for v in inputs], Precision(dtype))
    value, bound = float(value), float(bound)
    assert np.isfinite(bound), f"bound {bound} at a finite value {value}"
    assert abs(value - exact) <= bound, f"{value} is {abs(value - exact):.3g} from {exact}, bound {bound:.3g}"
    # a bound that cannot fail is no bound: it is of the value's own rounding, not of its size
    assert bound < 1e-3 * max(abs(exact), 1.0)


X = 0.34730905294418335  # the campaign's point


@pytest.mark.parametrize("name,sign", [("gammainc", -1.0), ("gammaincc", 1.0)])
def test_incomplete_gamma_at_a_zero(name, sign):
    # Q(a, x) = Γ(a, x)/Γ(a) ~ a·E1(x) as a -> 0: P(0, x) = 1, Q(0, x) = 0, ∂P/∂a = -E1(x)
    f = getattr(T.special, name)
    _within(lambda a, x: f(a, x), [0.0, X], 1.0 if name == "gammainc" else 0.0)
    _within(_grad(f, 0), [0.0, X], sign * float(mpmath.e1(X)))
    _within(_grad(f, 1), [0.0, X], 0.0)  # ∂P/∂x = x^(a-1) e^-x / Γ(a) = 0 at a = 0


def test_hurwitz_zeta_q_derivative_at_the_pole_in_s():
    # ∂ζ(s, q)/∂q = -s·ζ(s + 1, q): -ζ(2, q) at s = 1, where ζ itself is infinite
    _within(_grad(T.special.zeta, 1), [1.0, X], -float(mpmath.zeta(2, X)))


@pytest.mark.parametrize("a,b,value", [(0.0, 0.08106234669685364, 1.0), (0.1865234375, 0.0, 0.0)])
def test_betainc_at_a_pole_of_a_or_b(a, b, value):
    # the prefactor x^a (1-x)^b / B(a, b) is 0 where Γ(a) or Γ(b) has a pole: I = 1 at a = 0, 0 at
    # b = 0, and its x-derivative 0
    x = 0.24319151043891907
    _within(lambda a, b, x: T.special.betainc(a, b, x), [a, b, x], value)
    _within(_grad(T.special.betainc, 2), [a, b, x], 0.0)


def test_bessel_j1_derivative_at_zero():
    # J1'(0) = 1/2 (TensorFlow imputes it: J0 - J1/x is 0/0 there)
    _within(_grad(T.special.bessel_j1), [0.0], 0.5)


def test_sine_integral_derivative_at_zero():
    # Si'(0) = sinc(0) = 1 (JAX's jnp.sinc: sin x/x is 0/0 there)
    _within(_grad(lambda x: T.special.sici(x)[0]), [0.0], 1.0)


def test_hyp2f1_at_its_branch_point():
    # 2F1(a, b; c; 1) = Γ(c)Γ(c-a-b)/(Γ(c-a)Γ(c-b)) (Gauss) where c - a - b > 1 (1.59 here), and so
    # are its derivatives; past x = 1 the real function is nan: the slope of its mixed-sense bound
    # is the one from below (it was inf, the nan side's)
    a, b, c = -1.8619380078078518, 0.08106234778504615, -0.1941729795670103
    exact = float(mpmath.hyp2f1(a, b, c, 1))
    _within(lambda *v: T.special.hyp2f1(*v), [a, b, c, 1.0], exact, dtype="float64")
    d_a = float(mpmath.diff(lambda t: mpmath.hyp2f1(t, b, c, 1), a))
    _within(_grad(T.special.hyp2f1, 0), [a, b, c, 1.0], d_a, dtype="float64")


def test_a_one_sided_slope_is_kept_only_where_the_derivative_is_finite():
    # 2F1(a, b; c; x) near its branch point x = 1 with 0 < c - a - b < 1: finite there, its
    # derivative ~ (1 - x)^(c-a-b-1) is not, and the secant over 2^-26 from the left underestimates
    # the move of a few ulps (16x at x = 1 - 2^-40 for a = b = 0.25, c = 1, 2900x at x = 1): no
    # finite bound there (a review found the one-sided slope taken regardless); c - a - b > 1 keeps
    # a finite one
    def hyp2f1(a, b, c, x):
        return [T.special.hyp2f1(a, b, c, x)]

    for (a, b, c), finite in (((0.25, 0.25, 1.0), False), ((0.1, 0.2, 1.89), True)):
        for x in (1.0, 1 - 2.0**-40):
            arrays = [np.array([v]) for v in (a, b, c, x)]
            _, bounds, _ = bound_of(hyp2f1, arrays, Precision("float64"))
            small = bool(bounds[0][0] < 1e-6)
            assert small == finite, ((a, b, c), x, bounds[0])
