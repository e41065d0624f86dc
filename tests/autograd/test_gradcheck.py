"""Every primitive of the derivative table: float64 gradcheck and gradgradcheck against central
finite differences, sample by sample from :data:`tests.autograd.op_records.OP_RECORDS`."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.autograd import GradcheckError, gradcheck, gradgradcheck
from reference.ops import RULES
from tests.autograd.op_records import OP_RECORDS

SAMPLES = [
    (op, *sample[:4], sample[4] if len(sample) > 4 else {})
    for op, samples in OP_RECORDS.items()
    for sample in samples
]


def _draw(shapes, kinds, seed):
    rng = np.random.default_rng(seed)
    out = []
    for shape, kind in zip(shapes, kinds):
        a = rng.standard_normal(shape)
        if kind == "p":  # positive, away from 0 (log, sqrt, pow)
            a = np.abs(a) + 0.5
        elif kind == "f":  # away from kinks at 0 and +-0.5, and no ties
            a = np.sign(a) * (np.abs(a) % 0.4 + 0.05) + np.where(np.abs(a) > 1, np.sign(a) * 0.5, 0)
            a = a + np.arange(a.size).reshape(shape) * 1e-3
        elif kind == "c":  # complex128, both parts standard normal
            a = a + 1j * rng.standard_normal(shape)
        elif (
            kind == "q"
        ):  # complex128 with real part > 0.5: away from 0 and the branch cuts on the negative axis
            a = np.abs(a) + 0.5 + 1j * rng.standard_normal(shape)
        elif kind == "u":  # complex128 inside the unit disk, away from 0 (asin, atanh: cuts beyond |z| = 1)
            a = (np.abs(a) % 0.5 + 0.2) * np.exp(1j * rng.uniform(-np.pi, np.pi, shape))
        dtype = T.complex128 if kind in "cqu" else T.float64
        out.append(T.tensor(a, dtype=dtype, requires_grad=True))
    return out


def test_every_rule_has_a_record():
    assert sorted(OP_RECORDS) == sorted(RULES), (
        "each primitive needs samples in OP_RECORDS (and no extra ones)"
    )


@pytest.mark.parametrize(
    "op, label, fn, shapes, kinds, opts", SAMPLES, ids=[f"{s[0]}-{s[1]}" for s in SAMPLES]
)
def test_gradcheck(op, label, fn, shapes, kinds, opts):
    opts = {k: v for k, v in opts.items() if k != "first_order_only"}
    assert gradcheck(fn, _draw(shapes, kinds, 0), name=f"{op}[{label}]", **opts)


@pytest.mark.parametrize(
    "op, label, fn, shapes, kinds, opts", SAMPLES, ids=[f"{s[0]}-{s[1]}" for s in SAMPLES]
)
def test_gradgradcheck(op, label, fn, shapes, kinds, opts):
    if opts.get("first_order_only"):
        pytest.skip(f"{op}: {opts['first_order_only']}")
    assert gradgradcheck(fn, _draw(shapes, kinds, 1), name=f"{op}[{label}]", **opts)


def test_gradcheck_catches_a_planted_bug(monkeypatch):
    monkeypatch.setattr(RULES["tanh"], "grads", (lambda c, g: g * (1 - c.result * c.result) * 1.01,))
    with pytest.raises(GradcheckError, match="tanh"):
        gradcheck(lambda a: a.tanh(), _draw([(3,)], "a", 0), name="tanh")


def test_gradgradcheck_catches_a_first_order_only_rule(monkeypatch):
    """A VJP that is right to first order but built from constants (not differentiable) fails gradgradcheck."""
    from reference.autograd.tensor import _make

    monkeypatch.setattr(RULES["tanh"], "grads", (lambda c, g: g * _make(1 - c.result._data**2),))
    x = _draw([(3,)], "a", 0)
    assert gradcheck(lambda a: a.tanh(), x)
    with pytest.raises((GradcheckError, RuntimeError)):
        gradgradcheck(lambda a: a.tanh(), x, name="tanh")


def test_convolution_double_backward_paths_agree():
    """The VJP of convolution_backward: reference.conv's array-level double backward (no graph) and
    the differentiable composition (create_graph) give the same second derivatives."""
    F = T.nn.functional
    x, w, b = _draw([(2, 2, 5, 5), (3, 2, 3, 3), (3,)], "aaa", 3)
    v = T.tensor(np.random.default_rng(4).standard_normal((2, 3, 2, 2)), dtype=T.float64, requires_grad=True)

    def second(create_graph):
        gx, gw, gb = T.autograd.grad(F.conv2d(x, w, b, stride=2), (x, w, b), v, create_graph=True)
        obj = (gx * gx).sum() + (gw**3).sum() + gb.sum()
        return T.autograd.grad(obj, (x, w, v), create_graph=create_graph)

    for a, c in zip(second(False), second(True)):
        np.testing.assert_allclose(a.numpy(), c.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_third_order_through_convolution():
    F = T.nn.functional
    x, w = _draw([(1, 1, 4), (1, 1, 2)], "aa", 5)

    def fn(x, w):
        (gx,) = T.autograd.grad((F.conv1d(x, w) ** 2).sum(), x, create_graph=True)
        (gw,) = T.autograd.grad((gx**2).sum(), w, create_graph=True)
        return gw

    assert gradcheck(fn, (x, w))
