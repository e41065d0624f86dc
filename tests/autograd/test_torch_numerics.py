"""The numerics composites (reference/ops/functions/numerics.py) against PyTorch: diff, gradient,
trapezoid/trapz/cumulative_trapezoid, cov/corrcoef, quantile/nanquantile, cartesian_prod,
combinations. Values, first- and second-order gradients on edge cases (ties, nan, zero-size
dims, negative dims, integer inputs), and errors (type and message)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.autograd._complex_agree import complex_agree
from tests.autograd._torch_agree import agree, same_error

R = np.random.default_rng(7)
A34 = R.standard_normal((3, 4))
A5 = R.standard_normal(5)
TIES = np.array([1.0, 2.0, 2.0, 0.5, 2.0, -1.0])
WITH_NAN = np.array([[1.0, np.nan, 3.0, 0.0], [2.0, 1.0, -1.0, 5.0]])

CASES = [
    ("diff", lambda F, x: F.diff(x), [A34]),
    ("diff_n2_dim0", lambda F, x: F.diff(x, n=2, dim=0), [A34]),
    ("diff_n0", lambda F, x: F.diff(x, n=0), [A34]),
    ("diff_n_big", lambda F, x: F.diff(x, n=7), [A34]),
    ("diff_prepend_append", lambda F, x, p, a: F.diff(x, 2, -1, p, a), [A34, A34[:, :2], A34[:, 1:2]]),
    ("diff_method", lambda F, x: x.diff(dim=-2), [A34]),
    ("diff_int", lambda F, x: F.diff(F.tensor([1, 5, 2, 2])) * x.sum(), [A5]),
    ("diff_bool", lambda F, x: F.diff(F.tensor([True, False, False])).long() * x.sum(), [A5]),
    ("gradient", lambda F, x: F.gradient(x), [A34]),
    ("gradient_spacing", lambda F, x: F.gradient(x, spacing=[2.0, 0.5], edge_order=2), [A34]),
    ("gradient_dim", lambda F, x: F.gradient(x, spacing=3.0, dim=-1), [A34]),
    (
        "gradient_coords",
        lambda F, x: F.gradient(x, spacing=[F.tensor([0.0, 1.0, 3.5], dtype=F.float64)], dim=0, edge_order=2),
        [A34],
    ),
    ("trapezoid", lambda F, y: F.trapezoid(y), [A34]),
    ("trapezoid_dx", lambda F, y: F.trapezoid(y, dx=0.3, dim=0), [A34]),
    ("trapezoid_x", lambda F, y, x: F.trapezoid(y, x), [A34, np.sort(A34[0])]),
    ("trapezoid_x_bcast", lambda F, y, x: F.trapezoid(y, x, dim=0), [A34, A34[:, :1]]),
    ("trapezoid_empty", lambda F, y: F.trapezoid(y[:, :0]), [A34]),
    ("trapz", lambda F, y, x: F.trapz(y, x), [A34, A34[1]]),
    ("cumulative_trapezoid", lambda F, y: F.cumulative_trapezoid(y, dx=2.0), [A34]),
    ("cumulative_trapezoid_x", lambda F, y, x: F.cumulative_trapezoid(y, x, dim=0), [A34, A34[:, 0]]),
    ("cov", lambda F, x: F.cov(x), [A34]),
    ("cov_1d", lambda F, x: F.cov(x, correction=0), [A5]),
    (
        "cov_weights",
        lambda F, x, aw: F.cov(x, fweights=F.tensor([1, 2, 0, 3]), aweights=aw.abs()),
        [A34, A34[0]],
    ),
    ("corrcoef", lambda F, x: F.corrcoef(x), [A34]),
    ("corrcoef_1d", lambda F, x: F.corrcoef(x), [A5]),
    ("quantile", lambda F, x: F.quantile(x, 0.3), [A34]),
    ("quantile_ties", lambda F, x: F.quantile(x, 0.5), [TIES]),
    (
        "quantile_q_tensor",
        lambda F, x: F.quantile(x, F.tensor([0.0, 0.25, 1.0], dtype=F.float64), dim=0, keepdim=True),
        [A34],
    ),
    *[
        (f"quantile_{m}", lambda F, x, m=m: F.quantile(x, 0.4, dim=-1, interpolation=m), [A34])
        for m in ("lower", "higher", "midpoint", "nearest")
    ],
    ("quantile_nan", lambda F, x: F.quantile(x, 0.5, dim=1), [WITH_NAN]),
    ("nanquantile_nan", lambda F, x: F.nanquantile(x, 0.5, dim=1), [WITH_NAN]),
    ("nanquantile_all_nan", lambda F, x: F.nanquantile(x * float("nan"), 0.5, dim=1), [A34]),
    ("quantile_0d", lambda F, x: F.quantile(x.sum(), 0.5, dim=0, keepdim=True), [A5]),
    ("cartesian_prod", lambda F, a, b: F.cartesian_prod(a, b), [A5[:3], A5[2:]]),
    ("cartesian_prod_one", lambda F, a: F.cartesian_prod(a), [A5]),
    ("combinations", lambda F, a: F.combinations(a, 3), [A5]),
    ("combinations_repl", lambda F, a: F.combinations(a, with_replacement=True), [A5[:3]]),
    ("combinations_empty", lambda F, a: F.combinations(a[:1]), [A5]),
]


@pytest.mark.parametrize("name,prog,arrays", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays):
    agree(prog, arrays, order=2, label=name)


ERRORS = [
    ("diff_0d", lambda F, x: F.diff(x.sum()), [A5]),
    ("diff_neg_n", lambda F, x: F.diff(x, n=-1), [A5]),
    ("diff_prepend_dims", lambda F, x: F.diff(x, prepend=F.ones(3, dtype=F.float64)), [A34]),
    ("diff_prepend_shape", lambda F, x: F.diff(x, prepend=F.ones(2, 4, dtype=F.float64)), [A34]),
    ("diff_prepend_scalar", lambda F, x: F.diff(x, prepend=1.0), [A34]),
    ("gradient_spacing_len", lambda F, x: F.gradient(x, spacing=[1.0, 2.0, 3.0]), [A34]),
    ("gradient_dim_len", lambda F, x: F.gradient(x, spacing=[1.0], dim=(0, 1)), [A34]),
    ("gradient_edge", lambda F, x: F.gradient(x, edge_order=3), [A34]),
    ("gradient_small", lambda F, x: F.gradient(x[:2, :2], edge_order=2), [A34]),
    ("gradient_dup_dim", lambda F, x: F.gradient(x, dim=(0, 0)), [A34]),
    ("trapezoid_x_len", lambda F, y, x: F.trapezoid(y, x), [A34, A5]),
    ("trapezoid_bool", lambda F, y: F.trapezoid(y > 0), [A34]),
    ("trapezoid_bool_dx", lambda F, y: F.trapezoid(y, dx=True), [A34]),
    ("cumulative_trapezoid_bool", lambda F, y: F.cumulative_trapezoid(y > 0), [A34]),
    ("cov_3d", lambda F, x: F.cov(x.reshape(1, 3, 4)), [A34]),
    ("cov_bool", lambda F, x: F.cov(x > 0), [A34]),
    ("cov_fweights_float", lambda F, x: F.cov(x, fweights=F.ones(4)), [A34]),
    ("cov_fweights_numel", lambda F, x: F.cov(x, fweights=F.ones(3, dtype=F.int64)), [A34]),
    ("cov_aweights_int", lambda F, x: F.cov(x, aweights=F.ones(4, dtype=F.int64)), [A34]),
    ("cov_aweights_neg", lambda F, x: F.cov(x, aweights=-F.ones(4)), [A34]),
    ("cov_weights_zero", lambda F, x: F.cov(x, aweights=F.zeros(4)), [A34]),
    ("corrcoef_3d", lambda F, x: F.corrcoef(x.reshape(1, 3, 4)), [A34]),
    ("quantile_q_range", lambda F, x: F.quantile(x, 1.5), [A34]),
    ("quantile_q_tensor_range", lambda F, x: F.quantile(x, F.tensor([0.5, 1.2], dtype=F.float64)), [A34]),
    ("quantile_q_2d", lambda F, x: F.quantile(x, F.tensor([[0.5]], dtype=F.float64)), [A34]),
    ("quantile_int", lambda F, x: F.quantile(x.long(), 0.5), [A34]),
    ("quantile_q_dtype", lambda F, x: F.quantile(x, F.tensor(0.5, dtype=F.float32)), [A34]),
    ("quantile_empty", lambda F, x: F.quantile(x[:0], 0.5), [A34]),
    ("quantile_interp", lambda F, x: F.quantile(x, 0.5, interpolation="foo"), [A34]),
    ("nanquantile_q_2d", lambda F, x: F.nanquantile(x, F.tensor([[0.5]], dtype=F.float64)), [A34]),
    ("quantile_dim", lambda F, x: F.quantile(x, 0.5, dim=2), [A34]),
    ("cartesian_prod_2d", lambda F, x: F.cartesian_prod(x), [A34]),
    ("combinations_2d", lambda F, x: F.combinations(x), [A34]),
    ("combinations_neg_r", lambda F, x: F.combinations(x, r=-1), [A5]),
]


@pytest.mark.parametrize("name,prog,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, prog, arrays):
    same_error(prog, arrays)


# ---- complex128 input (issue 13): values, dtypes, first- and second-order gradients with complex
# cotangents, JVPs against torch.func.jvp, and the reference's gradcheck/gradgradcheck ----------------

_CRNG = np.random.default_rng(13)


def _cz(*shape):
    return _CRNG.standard_normal(shape) + 1j * _CRNG.standard_normal(shape)


COMPLEX = {
    "cov": (lambda F, z: F.cov(z), [_cz(3, 5)]),
    "cov_1d": (lambda F, z: F.cov(z), [_cz(6)]),
    "cov_correction0": (lambda F, z: F.cov(z, correction=0), [_cz(2, 4)]),
    "cov_aweights": (lambda F, z, w: F.cov(z, aweights=w * w + 0.5), [_cz(3, 4), _CRNG.standard_normal(4)]),
    "cov_real_times_complex": (lambda F, x: F.cov(x * (1 - 2j)), [_CRNG.standard_normal((2, 4))]),
    "corrcoef": (lambda F, z: F.corrcoef(z), [_cz(3, 5)]),
    "corrcoef_2x2": (lambda F, z: F.corrcoef(z), [_cz(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_agrees_with_torch(name):
    prog, arrays = COMPLEX[name]
    complex_agree(prog, arrays, label=name)
