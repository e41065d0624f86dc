"""Owen's T exact kernel (reference/ops/rules/special_owens_t.py) at its special points and by its
identities, beyond the accuracy table's grid (tests/autograd/exact_special2.py): T(0, a) =
atan(a)/(2π), T(h, 1) = Φ(h)(1 - Φ(h))/2, T(h, ±inf) = ±(1 - Φ(|h|))/2, evenness in h and
oddness in a, T(±inf, a) = 0, the tiny arguments where mpmath's absolute error control needs the
interval's scale taken out, and the derivatives at a = inf."""

from __future__ import annotations

import math

import mpmath
import pytest

import reference as T
from reference.ops.rules.special_owens_t import owens_t_exact


def _phi_upper(h):
    return float(mpmath.erfc(mpmath.mpf(h) / mpmath.sqrt(2)) / 2)  # 1 - Φ(h)


@pytest.mark.parametrize("h", [1e-300, 0.3, 2.0, 12.0, 37.0])
def test_identities(h):
    upper = _phi_upper(h)
    with mpmath.workdps(40):
        at_one = float(mpmath.ncdf(h) * mpmath.erfc(mpmath.mpf(h) / mpmath.sqrt(2)) / 4)
    assert owens_t_exact(h, 1.0, 0, 0) == pytest.approx(at_one, rel=2**-52)
    assert owens_t_exact(h, math.inf, 0, 0) == pytest.approx(upper / 2, rel=2**-52)
    assert owens_t_exact(-h, -math.inf, 0, 0) == -owens_t_exact(h, math.inf, 0, 0)
    assert owens_t_exact(-h, 0.75, 0, 0) == owens_t_exact(h, 0.75, 0, 0) == -owens_t_exact(h, -0.75, 0, 0)
    # ∂_h T at a = inf: -φ(h)/2
    assert owens_t_exact(h, math.inf, 1, 0) == pytest.approx(-math.exp(-h * h / 2) / math.sqrt(2 * math.pi) / 2, rel=2**-50)


def test_zero_h_tiny_a_and_infinite_h():
    assert owens_t_exact(0.0, 3.0, 0, 0) == pytest.approx(math.atan(3.0) / (2 * math.pi), rel=2**-52)
    # T(h, a) ~ a e^(-h²/2)/(2π) as a -> 0
    assert owens_t_exact(0.5, 1e-300, 0, 0) == pytest.approx(1e-300 * math.exp(-0.125) / (2 * math.pi), rel=2**-52)
    assert owens_t_exact(math.inf, 0.5, 0, 0) == 0.0 and owens_t_exact(-math.inf, 0.5, 1, 1) == 0.0
    assert math.isnan(owens_t_exact(math.nan, 0.5, 0, 0)) and math.isnan(owens_t_exact(0.5, math.nan, 0, 1))


def test_public_function_and_its_gradient():
    h = T.tensor([0.5, -2.0], dtype=T.float64, requires_grad=True)
    a = T.tensor([0.3, 4.0], dtype=T.float64, requires_grad=True)
    gh, ga = T.autograd.grad(T.special.owens_t(h, a).sum(), (h, a))
    for i, (hv, av) in enumerate([(0.5, 0.3), (-2.0, 4.0)]):
        phi = math.exp(-hv * hv / 2) / math.sqrt(2 * math.pi)
        assert gh.tolist()[i] == pytest.approx(-phi * math.erf(av * hv / math.sqrt(2)) / 2, rel=2**-50)
        assert ga.tolist()[i] == pytest.approx(
            math.exp(-(1 + av * av) * hv * hv / 2) / (2 * math.pi * (1 + av * av)), rel=2**-50
        )
