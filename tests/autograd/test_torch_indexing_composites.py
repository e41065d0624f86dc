"""index_reduce, as_strided_scatter, _unsafe_masked_index(_put_accumulate) against PyTorch:
values, first- and second-order gradients (ties, zeros, include_self), errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import reference as T
from tests.autograd._torch_agree import agree, same_error

R = np.random.default_rng(11)
X = R.standard_normal((3, 4))
SRC = R.standard_normal((3, 5))
TIES = np.array([[1.0, 2.0, 2.0, 0.0, 2.0], [0.0, 1.0, 1.0, 3.0, 0.0], [5.0, 5.0, 5.0, 5.0, 5.0]])


def _idx(F):
    return F.tensor([0, 3, 0, 1, 3])


CASES = [
    *[
        (
            f"index_reduce_{r}_{inc}",
            lambda F, x, s, r=r, inc=inc: F.index_reduce(x, 1, _idx(F), s, r, include_self=inc),
            [X, SRC],
        )
        for r in ("prod", "mean", "amax", "amin")
        for inc in (True, False)
    ],
    ("index_reduce_ties_amax", lambda F, x, s: F.index_reduce(x * 0 + 2.0, 1, _idx(F), s, "amax"), [X, TIES]),
    ("index_reduce_zeros_prod", lambda F, x, s: F.index_reduce(x, 1, _idx(F), s, "prod"), [X, TIES]),
    (
        "index_reduce_method_inplace",
        lambda F, x, s: (x * 1).index_reduce_(-1, _idx(F), s, "mean") * x,
        [X, SRC],
    ),
    ("index_reduce_dim0", lambda F, x, s: x.index_reduce(0, F.tensor([2, 2, 0]), s[:, :4], "amin"), [X, SRC]),
    ("as_strided_scatter", lambda F, x, s: F.as_strided_scatter(x, s[:2, :2], (2, 2), (1, 2), 1), [X, SRC]),
    (
        "unsafe_masked_index",
        lambda F, x: F._unsafe_masked_index(
            x,
            F.tensor([[True, False], [False, True]]),
            [F.tensor([[0, 7], [2, -9]]), F.tensor([[1], [3]])],
            0.5,
        ),
        [X],
    ),
    (
        "unsafe_masked_index_put_accumulate",
        lambda F, x, v: F._unsafe_masked_index_put_accumulate(
            x, F.tensor([True, False, True]), [F.tensor([0, 9, 0]), F.tensor([1, 1, 1])], v[0, :3]
        ),
        [X, SRC],
    ),
]


@pytest.mark.parametrize("name,prog,arrays", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name.startswith("as_strided_scatter"):
            # PyTorch's as_strided_scatter gradient is wrong (its OpInfo marks test_fn_grad an
            # expected failure): it sends self's gradient to the overwritten elements
            agree(prog, arrays, order=0, label=name)
            return
        agree(prog, arrays, order=2, label=name)


def test_as_strided_scatter_gradient_is_the_derivative():
    x = T.tensor(X, dtype=T.float64, requires_grad=True)
    s = T.tensor(SRC[:2, :2], dtype=T.float64, requires_grad=True)
    assert T.autograd.gradcheck(lambda a, b: T.as_strided_scatter(a, b, (2, 2), (1, 2), 1), (x, s))


ERRORS = [
    ("reduce_sum", lambda F, x, s: F.index_reduce(x, 1, _idx(F), s, "sum"), [X, SRC]),
    ("index_float", lambda F, x, s: F.index_reduce(x, 1, _idx(F).double(), s, "prod"), [X, SRC]),
    ("index_out_of_range", lambda F, x, s: F.index_reduce(x, 1, _idx(F) + 1, s, "prod"), [X, SRC]),
    ("index_negative", lambda F, x, s: F.index_reduce(x, 1, _idx(F) - 1, s, "prod"), [X, SRC]),
    ("index_count", lambda F, x, s: F.index_reduce(x, 1, F.tensor([0, 1]), s, "prod"), [X, SRC]),
    ("index_2d", lambda F, x, s: F.index_reduce(x, 1, _idx(F)[None], s, "prod"), [X, SRC]),
    ("source_dtype", lambda F, x, s: F.index_reduce(x, 1, _idx(F), s.float(), "prod"), [X, SRC]),
    ("index_reduce_dim", lambda F, x, s: F.index_reduce(x, 2, _idx(F), s, "prod"), [X, SRC]),
    ("scatter_overlap", lambda F, x, s: F.as_strided_scatter(x, s[0, :3], (3,), (0,), 2), [X, SRC]),
    ("scatter_size", lambda F, x, s: F.as_strided_scatter(x, s, (2, 2), (1, 2), 1), [X, SRC]),
    (
        "masked_index_bool",
        lambda F, x: F._unsafe_masked_index(x, F.tensor([True]), [F.tensor([True, False, True])], 0.0),
        [X],
    ),
]


@pytest.mark.parametrize("name,prog,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, prog, arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(prog, arrays)
