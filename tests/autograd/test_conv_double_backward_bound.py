"""The error tracker bounds convolution's double backward (issue 35).

``reference.ops.api.convolution_double_backward`` computes, when nothing records, with the
array-level ``reference.conv`` kernels: arrays the tracker (``reference.errors``) never saw, so
it called them exact (bound 0). The first GPU run found CuPy 4.4e-16 away from NumPy there
(``convolution_backward[conv2d_grad_of_grad]``, the gradient with respect to the input): each
element is a sum of rounded products, which cuBLAS forms in another order and with fused
multiply-adds. Here the same program's input gradient is computed exactly (fractions) and every
element must be within the tracked bound, which must therefore be positive where the float64
value is not exact.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import reference as T
import reference.nn.functional as F
from reference import errors


def _program(ct):
    def run(x, w, g):
        gw = T.autograd.grad(F.conv2d(x, w, stride=2), (x, w), g, create_graph=True)[1] * 2
        return list(T.autograd.grad(gw, (x, w, g), T.tensor(ct), allow_unused=True))

    return run


def test_input_gradient_of_the_grad_of_grad_is_within_its_bound():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 4, 4))
    w = rng.standard_normal((2, 2, 2, 2))
    g = rng.standard_normal((1, 2, 2, 2))
    ct = rng.standard_normal((2, 2, 2, 2))
    values, bounds, _ = errors.bound_of(_program(ct), [x, w, g], errors.Precision("float64"))
    got, bound = values[0], bounds[0]
    # d/dx <ct, 2 grad_w> with grad_w[o, c, i, j] = sum g[0, o, p, q] x[0, c, 2p + i, 2q + j]
    # (stride 2, kernel 2: each input element meets one kernel tap): 2 sum_o ct[o, c, h%2, w%2] g[0, o, h//2, w//2]
    exact = np.empty(x.shape, dtype=object)
    for c in range(2):
        for h in range(4):
            for v in range(4):
                exact[0, c, h, v] = 2 * sum(
                    Fraction(ct[o, c, h % 2, v % 2]) * Fraction(g[0, o, h // 2, v // 2]) for o in range(2)
                )
    err = np.array([float(abs(Fraction(a) - e)) for a, e in zip(got.ravel(), exact.ravel())]).reshape(x.shape)
    assert (err > 0).any(), "the sample rounds nowhere: it would not test the bound"
    assert (err <= bound).all(), f"error {err.max():.3g} beyond the tracked bound (min {bound.min():.3g})"
