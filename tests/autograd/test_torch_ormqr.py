"""torch.ormqr against PyTorch: values, first- and second-order gradients (left/right,
transpose, wide and tall reflector matrices, batches), errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.autograd._torch_agree import agree, same_error


def _geqrf(shape, seed):
    a = torch.tensor(np.random.default_rng(seed).uniform(-1, 1, shape))
    r, t = torch.geqrf(a)
    return r.numpy(), t.numpy()


CASES = []
for i, (shape, left, transpose) in enumerate(
    [
        ((5, 3), True, False),
        ((5, 3), True, True),
        ((5, 3), False, False),
        ((3, 5), False, True),
        ((2, 4, 4), True, True),
    ]
):
    r, t = _geqrf(shape, i)
    m = shape[-2]
    other = np.random.default_rng(10 + i).standard_normal(shape[:-2] + ((m, 2) if left else (2, m)))
    CASES.append(
        (
            f"ormqr_{i}",
            lambda F, a, tau, b, left=left, transpose=transpose: F.ormqr(
                a, tau, b, left=left, transpose=transpose
            ),
            [r, t, other],
        )
    )


@pytest.mark.parametrize("name,prog,arrays", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays):
    agree(prog, arrays, order=2, rtol=1e-8, atol=1e-10, label=name)


R0, T0 = _geqrf((5, 3), 0)
O0 = np.ones((5, 2))
ERRORS = [
    ("input_1d", lambda F, a, t, o: F.ormqr(a[0], t, o), [R0, T0, O0]),
    ("tau_ndim", lambda F, a, t, o: F.ormqr(a, t[None], o), [R0, T0, O0]),
    ("tau_size", lambda F, a, t, o: F.ormqr(a, F.cat([t, t]), o), [R0, T0, O0]),
    ("other_rows", lambda F, a, t, o: F.ormqr(a, t, o[:3]), [R0, T0, O0]),
    ("other_dtype", lambda F, a, t, o: F.ormqr(a, t, o.float()), [R0, T0, O0]),
    ("right_cols", lambda F, a, t, o: F.ormqr(a, t, o, left=False), [R0, T0, O0]),
]


@pytest.mark.parametrize("name,prog,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, prog, arrays):
    same_error(prog, arrays)
