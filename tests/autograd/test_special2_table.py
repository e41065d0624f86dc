"""The special functions of two or more arguments against mpmath on the smoke grid
(tests/autograd/exact_special2.py): value, each partial and the second partials, each within the
ceiling docs/accuracy.md's generated table reports for the full grid; and the generated section is
current (slow: the full grid takes minutes of mpmath)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from tests.autograd import exact_special2 as S
from tests.autograd.exact_table import measure, reference_answers

#: ulps, mixed sense: correctly rounded. Each order of these primitives is one exact kernel rounded
#: once (a unit seed multiplies exactly), and the full grid's worst is 0.495 (docs/accuracy.md)
CEILING = {name: {"value": 0.5, "d1": 0.5, "d2": 0.5} for name in S.PRIMITIVES}
#: polygamma(n, x) for x > 0 is SciPy's float64 kernel (through the Hurwitz zeta), not rounded once:
#: 3.36 ulps at x = 0.5 on the full grid, the ceiling of polygamma2 in the pointwise table
CEILING["polygamma_3"] = CEILING["polygamma_4"] = {"value": 4.0, "d1": 4.0, "d2": 4.0}
#: mvlgamma(x, p) is a sum of p lgamma terms (scipy's gammaln, lgamma's Taylor series near 1 and 2)
#: and its derivatives sums of digammas and trigammas: a few roundings, as mvlgamma2 of the pointwise
#: table (2 ulps there); the full grid's worst is 1.4 (p = 1 at x = 1.5)
CEILING.update({f"mvlgamma_{p}": {"value": 2.0, "d1": 2.0, "d2": 2.0} for p in (1, 3, 5)})

SMALL = S.entries(small=True)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_each_order_within_its_ceiling_on_the_smoke_grid(name):
    worst = measure(SMALL[name])
    assert set(worst) == {"value", "d1", "d2"}
    over = {o: w for o, w in worst.items() if not w[0] <= CEILING[name][o]}
    assert not over, over


@pytest.mark.parametrize("planted", ["value", "parameter partial", "mixed partial"])
def test_a_planted_error_is_caught(planted):
    # a kernel one part in 1e12 off (4500 ulps) must be seen, in the value and in a partial in a
    # parameter (whose exact value is a central difference) and in a mixed second partial
    e = SMALL["hyp1f1"]
    bump = {"value": lambda a, b, x: a, "parameter partial": lambda a, b, x: a * a, "mixed partial": lambda a, b, x: a * x}[planted]
    order = {"value": "value", "parameter partial": "d1", "mixed partial": "d2"}[planted]

    def ref(a, b, x):
        y = e.ref(a, b, x)
        return y + 1e-12 * bump(a, b, x) * y.detach()

    worst = measure(S.Entry(e.name, ref, e.exact, e.grid, arity=3))
    assert worst[order][0] > 1000, worst[order]


def test_every_second_partial_is_measured_by_reverse_and_by_forward_mode():
    answers = reference_answers(SMALL["hyp1f1"])
    for i, j in [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]:
        reverse, forward = answers[f"d2_{i}{j} reverse"], answers[f"d2_{i}{j} forward"]
        np.testing.assert_allclose(forward, reverse, rtol=1e-15)
    assert "d2_22 reverse" in reference_answers(SMALL["betainc"])  # x alone
    assert not any(k.startswith(("d1_0", "d2_0")) for k in reference_answers(SMALL["betainc"]))


def test_mvlgamma_of_order_one_is_lgamma_near_its_zeros():
    # mvlgamma(x, 1) = log Γ(x), whose zeros are 1 and 2: it summed scipy's gammaln, only absolutely
    # accurate there (7.8e6 ulps off at 1 + 1e-9); now lgamma's own kernel, bit for bit
    x = T.tensor([1 + 1e-9, 2 - 1e-12, 0.999, 2.5], dtype=T.float64)
    assert T.mvlgamma(x, 1).tolist() == T.lgamma(x).tolist()
    exact = [float(m) for m in (S.m.loggamma(S.m.mpf(v)) for v in x.tolist())]
    assert T.mvlgamma(x, 1).tolist() == pytest.approx(exact, rel=4e-16, abs=0)


def test_central_differences_agree_with_closed_forms():
    # the differenced partials are the exact ones where a closed form exists: ∂s ζ(s, q) (mpmath's
    # derivative=1) and ∂z∂z of the Pochhammer symbol, at 1e-30 relative
    import mpmath as m

    with m.workdps(60):
        s, q = m.mpf(2.5), m.mpf(0.75)
        (ds, dq), (dss, dsq, dqq) = S._partials(lambda s, q: m.zeta(s, q), (s, q))
        _, (es, eq), (ess, esq, eqq) = S._zeta(s, q)
        for got, exact in [(ds, es), (dq, eq), (dss, ess), (dsq, esq), (dqq, eqq)]:
            assert abs(got - exact) <= abs(exact) * m.mpf(10) ** -30, (got, exact)
        z, n = m.mpf(-0.5), m.mpf(2.5)
        _, _, (ezz, ezn, enn) = S._poch(z, n)
        _, (gzz, gzn, gnn) = S._partials(lambda z, n: m.rf(z, n), (z, n))
        for got, exact in [(gzz, ezz), (gzn, ezn), (gnn, enn)]:
            assert abs(got - exact) <= abs(exact) * m.mpf(10) ** -30, (got, exact)


def test_the_smoke_grid_is_part_of_the_full_grid_s_primitives():
    assert set(S.SMALL) == set(S.GRIDS) == set(S.PRIMITIVES)
    for name, grid in S.SMALL.items():
        cols = grid if isinstance(grid, tuple) else (grid,)
        assert len(cols) == S.PRIMITIVES[name][2]
        assert all(math.isfinite(x) for col in cols for x in np.ravel(col))


@pytest.mark.slow  # the full grid: minutes of mpmath (60 digits; 120 for the central differences)
def test_generated_section_is_current():
    assert S.main(["--check"]) == 0
