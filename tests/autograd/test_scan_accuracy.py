"""The scans' derivatives against the mathematics (mpmath), where a framework's formula departs.

logcumsumexp's gradient ``grad_k = sum_{j >= k} g_j exp(x_k - r_j)`` (``r`` the result) is linear in
the cotangent ``g``. PyTorch's and TensorFlow's backward evaluate it in log space, ``exp(lcse(log|g| -
r) + x)``, whose derivative in ``g`` is ``t / g``: nan at a zero cotangent element and digits lost at a
subnormal one. The reference's second order (reverse over reverse, forward over reverse) is the exact
one at every cotangent."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

import reference as T
from reference.func import jvp, vjp

X = [0.0, 1.0, -0.5, 2.0]


def _exact_tables(x):
    """(r, W) at 60 digits: the result and the table W[k][j] = exp(x_k - r_j) for j >= k, else 0."""
    with mp.workdps(60):
        xs = [mp.mpf(v) for v in x]
        r = [mp.log(mp.fsum(mp.exp(v) for v in xs[: j + 1])) for j in range(len(xs))]
        w = [[mp.exp(xs[k] - r[j]) if j >= k else mp.mpf(0) for j in range(len(xs))] for k in range(len(xs))]
    return r, w


@pytest.mark.parametrize("g", [[0.0, 1.0, 0.5, -2.0], [5e-324, -0.0, 1.0, 8e-308]])
def test_logcumsumexp_gradient_is_linear_in_a_zero_or_subnormal_cotangent(g):
    # reverse over reverse: d grad_k / d g_j is W[k][j] whatever g_j is (PyTorch: nan at g_j = 0)
    _, w = _exact_tables(X)
    x = T.tensor(X, dtype=T.float64, requires_grad=True)
    gt = T.tensor(g, dtype=T.float64, requires_grad=True)
    (gx,) = T.autograd.grad(T.logcumsumexp(x, 0), x, gt, create_graph=True)
    for k in range(len(X)):
        (dg,) = T.autograd.grad(gx[k], gt, retain_graph=True)
        np.testing.assert_allclose(dg.numpy(), [float(v) for v in w[k]], rtol=4e-16, atol=0)


def test_logcumsumexp_forward_over_reverse_at_zero_and_subnormal_cotangents():
    # d/ds grad(x + s t, g + s tg) = sum_j [tg_j W_kj + g_j W_kj (t_k - dr_j)], dr_j = sum_{i<=j} e^{x_i - r_j} t_i
    g, t, tg = [-0.0, 8e-308, 0.0, 0.25], [1.0, -0.5, 0.25, 2.0], [-0.4, 1.5e-308, -1.0, 0.3]
    r, w = _exact_tables(X)
    with mp.workdps(60):
        xs, gs, ts, tgs = ([mp.mpf(v) for v in a] for a in (X, g, t, tg))
        dr = [mp.fsum(mp.exp(xs[i] - r[j]) * ts[i] for i in range(j + 1)) for j in range(len(X))]
        want = [
            float(mp.fsum(tgs[j] * w[k][j] + gs[j] * w[k][j] * (ts[k] - dr[j]) for j in range(k, len(X))))
            for k in range(len(X))
        ]

    def grad_of(x, c):
        return vjp(lambda z: T.logcumsumexp(z, 0), x)[1](c)[0]

    args = [T.tensor(a, dtype=T.float64) for a in (X, g)]
    _, tangent = jvp(grad_of, tuple(args), (T.tensor(t, dtype=T.float64), T.tensor(tg, dtype=T.float64)))
    np.testing.assert_allclose(tangent.numpy(), want, rtol=1e-15, atol=0)
