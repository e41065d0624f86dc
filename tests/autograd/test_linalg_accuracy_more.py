"""Complex, general-eigen, LU and batched linear algebra against the mathematics
(tests/autograd/exact_linalg_more.py): value, first and second derivatives within the ceilings of
docs/accuracy.md's table on the smoke grid (the full grid under ``-m slow``); complex svd's
declared bound holding the relative phase of a singular pair."""

from __future__ import annotations

import warnings

import mpmath as m
import numpy as np
import pytest

import reference as T
from reference import errors
from tests.autograd import exact_linalg as E
from tests.autograd import exact_linalg_more as M
from tests.autograd.test_linalg_accuracy import _within_ceiling

#: name: {order: (ulps ceiling of the well-conditioned inputs, ceiling of err/(κ·u))}: the full
#: grid's worst rounded up (docs/accuracy.md, "Linear algebra (measured)"). None: the ulps of
#: entries that are exactly 0 or cancel to a small fraction of the norm (lu's second derivatives:
#: 1e308 ulps at an exact 0), where the normwise ratio is the measure
CEILING = {
    "c_det": {"value": (1, 1), "d1": (5, 1), "d2": (8, 6)},
    "c_inv": {"value": (2, 1), "d1": (8, 1), "d2": (5, 1)},
    "c_solve": {"value": (2, 1), "d1": (5, 1), "d2": (10, 1.5)},
    "c_cholesky": {"value": (1, 1), "d1": (1, 1), "d2": (40, 1)},
    "c_qr": {"value": (16, 1), "d1": (30, 8), "d2": (15, 3)},
    "c_eigh": {"value": (50, 2), "d1": (160, 10), "d2": (120, 12)},
    "c_svd": {"value": (12, 1), "d1": (220, 3), "d2": (170, 20)},
    "eig": {"value": (70, 2), "d1": (60, 3), "d2": (330, 8)},
    "eigvals": {"value": (3, 2), "d1": (11, 4), "d2": (130, 12)},
    "lu": {"value": (1.5, 1), "d1": (13, 1), "d2": (None, 1.5)},
    "lu_factor": {"value": (1, 1), "d1": (4, 1), "d2": (None, 1)},
    "lu_solve": {"value": (1, 1), "d1": (3, 1), "d2": (30, 1)},
    "batched_det": {"value": (1, 1), "d1": (8, 1.5), "d2": (70, 1)},
    "batched_inv": {"value": (3, 1), "d1": (20, 1), "d2": (3000, 1)},
    "batched_solve": {"value": (2, 1), "d1": (35, 1), "d2": (90, 2)},
    "batched_matmul": {"value": (1.5, 1), "d1": (15, 1), "d2": (2000, 1)},
}


@pytest.mark.parametrize("name", sorted(M.ENTRIES))
def test_each_order_within_its_ceiling_on_the_smoke_grid(name):
    _within_ceiling(CEILING[name], E.measure(M.ENTRIES[name], small=True))


@pytest.mark.slow  # the full grid: a few minutes of mpmath
@pytest.mark.parametrize("name", sorted(M.ENTRIES))
def test_each_order_within_its_ceiling_on_the_full_grid(name):
    _within_ceiling(CEILING[name], E.measure(M.ENTRIES[name]))


def test_complex_svd_bound_holds_the_relative_phase_of_a_pair():
    # U @ Vh (linalg_svd's record program) of a complex A with s = (1, 1e-4, 1e-9): the pair
    # (u_3, v_3)'s relative phase is conditioned by 1/s_3, not 1/gap, and zgesdd's is 2e-8 off;
    # before the phase term the declared bound was sqrt(2)·delta/gap, 1.4e-11
    a = M.C_NEAR_SINGULAR
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with errors.Tracker(errors.Precision("float64")) as tr:
            x = T.tensor(a)
            tr.set_error(x, np.zeros(x.shape))
            U, S, Vh = T.linalg.svd(x)
            polar = U @ Vh
            bound = np.asarray(tr.error_of(polar))
    with m.workdps(50):
        Ue, _, Ve = m.svd_c(m.matrix(a.tolist()))
        exact = np.array((Ue * Ve).tolist(), dtype=complex)
    err = np.abs(polar.numpy() - exact)
    assert err.max() > 1e-9  # the phase error is there to be bounded
    assert np.all(err <= bound), (err.max(), bound.min())


@pytest.mark.parametrize("order", ["value", "d1", "d2"])
def test_a_planted_complex_error_is_caught(order):
    # complex inv 1e-12·i off (in its value, or in a derivative through a term that vanishes at the
    # point): the complex convention (∂/∂Re + i ∂/∂Im of Re⟨G, F⟩) must see it at the order it touches
    base = M.ENTRIES["c_inv"]
    plant = {
        "value": lambda L, a: L.linalg.inv(a) * (1 + 1e-12j),
        "d1": lambda L, a: L.linalg.inv(a) + 1e-12j * (a - a.detach()) * L.linalg.inv(a).detach(),
        "d2": lambda L, a: L.linalg.inv(a) + 1e-12j * ((a - a.detach()) ** 2) * L.linalg.inv(a).detach(),
    }[order]
    planted = E.Entry("c_inv", plant, base.exact, base.kappa, base.grid, base.small)
    worst = E.measure(planted, small=True)
    assert worst[order]["ratio"][0] > 100, worst[order]
