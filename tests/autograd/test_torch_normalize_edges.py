"""normalize / cosine_similarity at the edges against PyTorch: 0-d inputs (dim 0 is the one
element) and zero norms (the eps clamp: forward and first-order gradient)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.autograd._torch_agree import agree

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

X = np.random.default_rng(0).standard_normal((2, 3))
Z = np.zeros((2, 3))
Z[1] = [1e-13, 0.0, -2e-13]

CASES = [
    ("cosine_0d", lambda T, a, b: T.nn.functional.cosine_similarity(a[0, 0], b[1, 2], dim=0), [X, X], 2),
    (
        "cosine_0d_neg_dim",
        lambda T, a, b: T.nn.functional.cosine_similarity(a[0, 1], b[0, 0], dim=-1),
        [X, X],
        2,
    ),
    ("normalize_0d", lambda T, a: T.nn.functional.normalize(a[0, 1], p=1.2, dim=0), [X], 2),
    ("normalize_0d_p2", lambda T, a: T.nn.functional.normalize(a[1, 1], dim=-1), [X], 2),
    ("normalize_zero_norm", lambda T, a: T.nn.functional.normalize(a, dim=1), [Z], 1),
    ("normalize_zero_norm_p1", lambda T, a: T.nn.functional.normalize(a, p=1, dim=0), [Z], 2),
    ("cosine_zero_norm", lambda T, a, b: T.nn.functional.cosine_similarity(a, b), [Z, X], 1),
]


@pytest.mark.parametrize("name, prog, arrays, order", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays, order):
    agree(prog, arrays, order=order, label=name)
