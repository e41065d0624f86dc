"""In-place forms of non-elementwise ops against PyTorch: addmm_/addmv_/addr_/baddbmm_/addbmm_,
cumsum_/cumprod_, scatter_reduce_ (values, first- and second-order gradients, grad_fn names,
errors). Their operands have shapes of their own (no broadcasting against self): the result
must have self's shape, else PyTorch's structured ``check_inplace`` message."""

from __future__ import annotations

import numpy as np
import pytest

import reference
from tests.autograd._torch_agree import agree, same_error

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

R = np.random.default_rng(5)
M23, M22, M33, V2, V3 = (R.standard_normal(s) for s in ((2, 3), (2, 2), (3, 3), (2,), (3,)))
B233, B233b, B333 = (R.standard_normal(s) for s in ((2, 3, 3), (2, 3, 3), (3, 3, 3)))


def _c(a):
    return a * 1.0  # a non-leaf copy to write into


CASES = [
    ("addmm_", lambda T, a, m, n: _c(a).addmm_(m, n[:2, :3], beta=0.5, alpha=2), [M23, M22, M33]),
    ("addmv_", lambda T, a, m, v: _c(a).addmv_(m, v, alpha=-1.5), [V2, M23, V3]),
    ("addr_", lambda T, a, u, v: _c(a).addr_(u, v, beta=2), [M23, V2, V3]),
    ("baddbmm_", lambda T, a, b, c: _c(a).baddbmm_(b, c, beta=0.25), [B233, B233b, B333[:2]]),
    ("addbmm_", lambda T, a, b, c: _c(a).addbmm_(b, c), [M33, B233, B233b]),
    ("cumprod_", lambda T, a: _c(a).cumprod_(1), [M23]),
    ("cumprod_zeros", lambda T, a: (_c(a) * T.tensor([1.0, 0.0, 1.0], dtype=T.float64)).cumprod_(-1), [M23]),
    ("cumprod_dtype_same", lambda T, a: _c(a).cumprod_(0, dtype=T.float64), [M23]),
    ("cumsum_", lambda T, a: _c(a).cumsum_(0), [M23]),
    (
        "scatter_reduce_prod",
        lambda T, a, s: _c(a).scatter_reduce_(1, T.tensor([[0, 0], [2, 1]]), s[:, :2], "prod"),
        [M23, M23],
    ),
    (
        "scatter_reduce_amax_noself",
        lambda T, a, s: _c(a).scatter_reduce_(0, T.tensor([[1, 0, 1]]), s[:1], "amax", include_self=False),
        [M23, M23],
    ),
    (
        "scatter_reduce_mean",
        lambda T, a, s: _c(a).scatter_reduce_(1, T.tensor([[0, 0, 2], [1, 1, 1]]), s, "mean"),
        [M23, M23],
    ),
]


@pytest.mark.parametrize("name, prog, arrays", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays):
    agree(prog, arrays, label=name)


@pytest.mark.parametrize("name, prog, arrays", CASES, ids=[c[0] for c in CASES])
def test_grad_fn_name_is_torchs(name, prog, arrays):
    names = []
    for F in (reference, torch):
        xs = [F.tensor(a, dtype=F.float64, requires_grad=True) for a in arrays]
        names.append(type(prog(F, *xs).grad_fn).__name__ if F is torch else prog(F, *xs).grad_fn.name())
    assert names[0] == names[1]


ERRORS = [
    ("addmm_self_broadcasts", lambda T: T.zeros(2, 1).addmm_(T.ones(2, 2), T.ones(2, 3))),
    ("addmm_self_rows", lambda T: T.zeros(1, 3).addmm_(T.ones(2, 2), T.ones(2, 3))),
    ("addmv_self_one", lambda T: T.zeros(1).addmv_(T.ones(2, 3), T.ones(3))),
    ("addmv_size", lambda T: T.zeros(3).addmv_(T.ones(2, 3), T.ones(3))),
    ("addr_size", lambda T: T.zeros(1, 3).addr_(T.ones(2), T.ones(3))),
    ("addr_size_cols", lambda T: T.zeros(2, 1).addr_(T.ones(2), T.ones(3))),
    ("addr_1d_self", lambda T: T.zeros(3).addr_(T.ones(2), T.ones(3))),
    ("baddbmm_batch", lambda T: T.zeros(1, 3, 3).baddbmm_(T.ones(2, 3, 3), T.ones(2, 3, 3))),
    ("add_still_broadcast_message", lambda T: T.zeros(1, 3).add_(T.ones(2, 3))),
    ("leaf", lambda T: T.zeros(2, 3, requires_grad=True).addmm_(T.ones(2, 2), T.ones(2, 3))),
]


@pytest.mark.parametrize("name, prog", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_agree(name, prog):
    same_error(prog)
