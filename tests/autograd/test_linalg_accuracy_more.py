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
from reference import errors, func
from tests.autograd import exact_linalg as E
from tests.autograd import exact_linalg_more as M
from tests.autograd.test_linalg_accuracy import (
    MEASURED_KERNELS,
    _within_ceiling,
    ceiling_of,
    tiers,
    within_declared_bound,
)

#: name: {order: (ulps ceiling of the well-conditioned inputs, ceiling of err/(κ·u))}: the full
#: grid's worst with OpenBLAS's Haswell kernels, rounded up (docs/accuracy.md, "Linear algebra
#: (measured)"). None: the ulps of entries that are exactly 0 or cancel to a small fraction of the
#: norm (lu's second derivatives: 1e308 ulps at an exact 0), where the normwise ratio is the measure
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


#: the entries whose declared bound is checked in the quick run (a few seconds each); the rest under
#: ``-m slow``
QUICK = {"batched_inv", "batched_matmul", "c_cholesky", "lu", "lu_factor"}

#: CEILING's orders measured above it with another kernel set (test_linalg_accuracy.MEASURED_ON)
CEILING_BY_KERNEL = {
    "SkylakeX": {
        "c_inv": {"d2": (6, 1.5)},
        "c_solve": {"d1": (8, 1), "d2": (20, 2)},
        "c_cholesky": {"value": (1.5, 1), "d1": (2.5, 1), "d2": (40, 1.5)},
        "c_qr": {"value": (20, 1), "d2": (25, 4)},
        "c_eigh": {"value": (100, 2), "d1": (300, 10)},
        "c_svd": {"value": (20, 1), "d1": (220, 4), "d2": (200, 20)},
        "eig": {"value": (70, 4)},
        "eigvals": {"value": (4, 4)},
        "lu": {"d1": (13, 1.5)},
        "lu_solve": {"value": (2, 1), "d2": (40, 1)},
        "batched_det": {"d1": (10, 2), "d2": (100, 1)},
    }
}


@MEASURED_KERNELS
@pytest.mark.parametrize("name", sorted(M.ENTRIES))
def test_each_order_within_its_ceiling_on_the_smoke_grid(name):
    _within_ceiling(ceiling_of(CEILING, CEILING_BY_KERNEL, name), E.measure(M.ENTRIES[name], small=True))


@MEASURED_KERNELS
@pytest.mark.slow  # the full grid: a few minutes of mpmath
@pytest.mark.parametrize("name", sorted(M.ENTRIES))
def test_each_order_within_its_ceiling_on_the_full_grid(name):
    _within_ceiling(ceiling_of(CEILING, CEILING_BY_KERNEL, name), E.measure(M.ENTRIES[name]))


@pytest.mark.parametrize("name", tiers(M.ENTRIES, slow=set(M.ENTRIES) - QUICK))
def test_each_check_within_its_declared_bound_on_the_smoke_grid(name):
    within_declared_bound(M.ENTRIES[name])


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


def _svd_program_exact(a, t, c, dps=50):
    """The record linalg_svd's program [|U|^2 S, S, U V^H] of one complex matrix a: the gradients, in
    PyTorch's convention (∂/∂Re + i ∂/∂Im), of Re<c, JVP(a)(t)> with respect to a (second order) and
    to t (the first-order VJP), by nested central differences of mpmath's svd_c at ``dps`` digits."""
    mrows, ncols = a.shape
    k = min(mrows, ncols)

    def program(x):
        Ue, s, Ve = m.svd_c(x)  # x = Ue diag(s) Ve
        assert all(s[j] > s[j + 1] for j in range(k - 1)), "LAPACK's order (descending) expected"
        return (
            [abs(Ue[i, j]) ** 2 * s[j] for i in range(mrows) for j in range(k)]
            + [s[j] for j in range(k)]
            + [m.fsum(Ue[i, q] * Ve[q, j] for q in range(k)) for i in range(mrows) for j in range(ncols)]
        )

    with m.workdps(dps):
        A0, T0 = m.matrix(a.tolist()), m.matrix(t.tolist())
        cs = [m.mpc(complex(z)) for z in c]
        h_in, h_out = m.mpf(10) ** (-dps // 2 + 5), m.mpf(10) ** (-dps // 4)

        def loss(x, tx):  # Re<c, JVP(x)(tx)>
            jv = [(p - q) / (2 * h_in) for p, q in zip(program(x + h_in * tx), program(x - h_in * tx))]
            return m.re(m.fsum(m.conj(ci) * ji for ci, ji in zip(cs, jv)))

        def grad(wrt):
            g = np.zeros(a.shape, complex)
            for i in range(mrows):
                for j in range(ncols):
                    parts = []
                    for d in (1, 1j):
                        e = m.matrix(mrows, ncols)
                        e[i, j] = h_out * m.mpc(d)
                        plus = loss(A0 + e, T0) if wrt == "a" else loss(A0, T0 + e)
                        minus = loss(A0 - e, T0) if wrt == "a" else loss(A0, T0 - e)
                        parts.append(complex((plus - minus) / (2 * h_out)))
                    g[i, j] = parts[0] + 1j * parts[1]
            return g

        return grad("a"), grad("t")


@pytest.mark.parametrize(
    "a, t, c",
    [
        # a 1 x 1 matrix: |U|^2 S = S = |a|, U V^H = a/|a|; the VJP part is c_1·i + c_3/|a| exactly
        # (torch's reverse over forward gives c_1 with ~4·u·S^2 of error: known entry
        # torch-complex-svd-reverse-over-forward-residual)
        ([[131.13465526949943j]], [[-0.08561890855293508]], [-0.22995867525257044, 0, -1.4337829136126041]),
        # singular values 70.10 and 0.916 (JAX's reverse over forward is 1.5e-10 off at [1, 0]:
        # known entry jax-complex-svd-reverse-over-forward)
        (
            [[-1.7325676485074362j, 0.88360039018004943j], [-69.136159973510772, 11.473094171693193j]],
            [[-0.16168272702607761j, 0.83913960466516169j], [-0.63132207847015476, 0.0]],
            [-0.064493534064267194, -0.87479147873629337 + 0.21306985765857930j,
             -1.4561663195091856 + 1.0021048327216646j, 0.0, -1.2286137329625852, 1.0,
             -3.0j, 0.42465653864542557 + 0.32236483015146827j, 0.38548961196785730j,
             -0.71942305718684008 + 1.1452516838982409j],
        ),
    ],
)
def test_complex_svd_reverse_over_forward_is_the_mathematics(a, t, c):
    # the reference's vjp of the jvp of linalg_svd's record program, against mpmath; PyTorch's formula
    # (sym(dP S)/E with E_ii = 1) cancels 4·c·S^2 on the diagonal, the reference's multiplies it by 0
    a, t, c = (np.array(v, dtype=complex) for v in (a, t, c))

    def program(x):  # conformance/ops/linalg_decomp.py's _svd_fn
        U, S, Vh = T.linalg.svd(x, full_matrices=False)
        return T.cat([(U * U.conj() * S.unsqueeze(-2)).reshape(-1), S.reshape(-1), (U @ Vh).reshape(-1)])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with errors.Tracker(errors.Precision("float64")) as tr:
            xs = [T.tensor(v) for v in (a, t, c)]
            for x in xs:
                tr.set_error(x, np.zeros(x.shape))  # exact inputs: the bound is the formulas' rounding
            grads = func.vjp(lambda x, tx: func.jvp(program, (x,), (tx,))[1], *xs[:2])[1](xs[2])
            bounds = [np.asarray(tr.error_of(g)) for g in grads]
    exact = _svd_program_exact(a, t, c)
    for got, bound, want in zip(grads, bounds, exact):
        err = np.abs(got.numpy() - want)
        assert np.all(err <= bound), (err, bound)
