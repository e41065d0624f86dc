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
