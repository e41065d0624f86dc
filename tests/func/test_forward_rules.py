"""Every primitive's JVP rule, sample by sample from :data:`tests.autograd.op_records.OP_RECORDS`:
the adjoint identity <vjp(ct), t> = <ct, jvp(t)> in random directions (forward mode against the
engine's reverse mode), the JVP against central finite differences (float64), and
jacfwd == jacrev."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.autograd.forward_ad import MissingRuleError
from reference.func import jacfwd, jacrev, jvp, vjp
from reference.ops import RULES
from reference.ops.rule import AUTO_ELEMENT_WISE
from tests.autograd.op_records import OP_RECORDS
from tests.autograd.test_gradcheck import _draw

SAMPLES = [
    (op, *sample[:4], sample[4] if len(sample) > 4 else {})
    for op, samples in OP_RECORDS.items()
    for sample in samples
]
IDS = [f"{s[0]}-{s[1]}" for s in SAMPLES]


def _randn_like(rng, x):
    if x.dtype.kind == "c":
        return T.tensor(rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape), dtype=x.dtype)
    return T.tensor(rng.standard_normal(x.shape), dtype=x.dtype)


def _inner(xs, ys):
    """The real inner product Re<x, y> (complex tensors as pairs of reals: PyTorch's VJP of a
    complex cotangent is the adjoint of the JVP for this product, docs/complex.md)."""
    return float(sum(np.vdot(_np(x), _np(y)).real for x, y in zip(xs, ys)))


def _np(x):
    """The values (a conjugate view such as ihfft's, as in PyTorch, resolved first)."""
    return x.detach().resolve_conj().numpy()


def adjoint_gap(fn, xs, seed):
    """|<vjp(ct), t> - <ct, jvp(t)>| relative to the terms' magnitudes."""
    rng = np.random.default_rng(seed)
    ts = tuple(_randn_like(rng, x) for x in xs)
    out, tan = jvp(fn, tuple(xs), ts)
    out2, vjp_fn = vjp(fn, *xs)
    ct = _randn_like(rng, out)
    lhs = _inner(vjp_fn(ct), ts)
    rhs = _inner([ct], [tan])
    scale = _inner([abs(ct)], [abs(tan)]) + 1e-12
    np.testing.assert_allclose(_np(out), _np(out2), rtol=0, atol=0)
    return abs(lhs - rhs) / scale, lhs, rhs


@pytest.mark.parametrize("op, label, fn, shapes, kinds, opts", SAMPLES, ids=IDS)
def test_adjoint_identity(op, label, fn, shapes, kinds, opts):
    xs = _draw(shapes, kinds, 0)
    tol = 1e-6 if "atol" in opts else 1e-10  # samples with a float32 stage set atol
    for seed in (1, 2):
        gap, lhs, rhs = adjoint_gap(fn, xs, seed)
        assert gap < tol, f"{op}[{label}]: <vjp(ct), t> = {lhs!r} but <ct, jvp(t)> = {rhs!r}"


@pytest.mark.parametrize("op, label, fn, shapes, kinds, opts", SAMPLES, ids=IDS)
def test_jvp_against_finite_differences(op, label, fn, shapes, kinds, opts):
    xs = _draw(shapes, kinds, 3)
    rng = np.random.default_rng(4)
    ts = tuple(_randn_like(rng, x) for x in xs)
    _, tan = jvp(fn, tuple(xs), ts)
    eps = opts.get("eps", 1e-6)
    plus = fn(*[x + eps * t for x, t in zip(xs, ts)])  # (some samples call autograd.grad inside)
    minus = fn(*[x - eps * t for x, t in zip(xs, ts)])
    fd = (_np(plus) - _np(minus)) / (2 * eps)
    np.testing.assert_allclose(_np(tan), fd, rtol=1e-5, atol=opts.get("atol", 1e-6), err_msg=f"{op}[{label}]")


@pytest.mark.parametrize("op, label, fn, shapes, kinds, opts", SAMPLES, ids=IDS)
def test_jacfwd_equals_jacrev(op, label, fn, shapes, kinds, opts):
    xs = _draw(shapes, kinds, 5)
    if any(k in "cqu" for k in kinds) or fn(*xs).dtype.kind == "c":
        pytest.skip("complex: jacrev holds VJPs of unit cotangents (PyTorch's convention), jacfwd JVPs")
    nums = tuple(range(len(xs)))
    fwd = jacfwd(fn, argnums=nums)(*xs)
    rev = jacrev(fn, argnums=nums)(*xs)
    for j, (a, b) in enumerate(zip(fwd, rev)):
        assert a.shape == b.shape
        np.testing.assert_allclose(
            _np(a),
            _np(b),
            rtol=1e-10,
            atol=1e-12,
            err_msg=f"{op}[{label}] d/d input {j}",
        )


def test_every_rule_has_a_jvp():
    missing = sorted(name for name, rule in RULES.items() if rule.jvp is None)
    assert not missing, f"primitives without a jvp rule: {missing}"


def test_adjoint_identity_catches_a_planted_jvp_bug(monkeypatch):
    monkeypatch.setattr(RULES["tanh"], "jvp", (lambda c, t: t * (1 - c.result * c.result) * 1.01,))
    gap, _, _ = adjoint_gap(lambda a: a.tanh(), _draw([(3,)], "a", 0), 1)
    assert gap > 1e-4


def test_adjoint_identity_catches_a_planted_vjp_bug(monkeypatch):
    """Forward mode does not read the VJP formulas of non-elementwise ops: a wrong softmax VJP shows."""
    assert RULES["softmax"].jvp != AUTO_ELEMENT_WISE
    monkeypatch.setattr(RULES["softmax"], "grads", (lambda c, g: c.result * g,))
    gap, _, _ = adjoint_gap(lambda a: T.nn.functional.softmax(a, 1), _draw([(2, 3)], "a", 0), 1)
    assert gap > 1e-4


def test_a_missing_jvp_rule_is_named(monkeypatch):
    monkeypatch.setattr(RULES["sigmoid"], "jvp", None)
    x = _draw([(3,)], "a", 0)[0]
    with pytest.raises(MissingRuleError, match="'sigmoid'.*'jvp'"):
        jvp(lambda a: a.sigmoid(), (x,), (T.ones_like(x),))
