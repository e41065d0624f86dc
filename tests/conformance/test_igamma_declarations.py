"""The incomplete gamma records' declarations (conformance/ops/special.py) hold on the installed
frameworks: PyTorch has no derivative in a and no forward mode, JAX and TensorFlow differentiate in
a once and not twice; each refusal names the checks it covers. A framework release that adds one of
these derivatives fails the test, so the declaration is revisited."""

from __future__ import annotations

import pytest

from conformance.ops import RECORDS


class _Case:
    dtype = "float64"


def _reason(record, framework, check):
    fn = RECORDS[record].spelling(framework)
    return fn.refuses(_Case(), check)


def test_pytorch_has_no_derivative_in_a_and_no_forward_mode():
    torch = pytest.importorskip("torch")
    a = torch.tensor([2.5], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="the derivative for 'igamma: input' is not implemented"):
        torch.autograd.grad(torch.special.gammainc(a, x).sum(), a)
    with pytest.raises(NotImplementedError, match="forward AD with igamma"):
        torch.func.jvp(
            lambda t: torch.special.gammainc(a.detach(), t),
            (x.detach(),),
            (torch.ones(1, dtype=torch.float64),),
        )
    assert "igamma: input" in _reason("gammainc", "torch", "vjp")
    assert _reason("gammainc", "torch", "forward") is None and _reason("gammainc_x", "torch", "vjp") is None
    assert "forward AD" in _reason("gammainc_x", "torch", "jvp_vjp")


def test_jax_differentiates_a_once():
    jax = pytest.importorskip("jax")
    from jax.scipy.special import gammainc

    assert float(jax.grad(gammainc)(2.5, 1.5)) < 0
    with pytest.raises(NotImplementedError, match="igamma_grad_a"):
        jax.grad(jax.grad(gammainc))(2.5, 1.5)
    assert "igamma_grad_a" in _reason("gammainc", "jax", "vjp_vjp")
    assert _reason("gammainc", "jax", "vjp") is None


def test_tensorflow_differentiates_a_once():
    tf = pytest.importorskip("tensorflow")
    a, x = tf.constant([2.5], tf.float64), tf.constant([1.5], tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(a)
        with tf.GradientTape() as inner:
            inner.watch(a)
            y = tf.math.igamma(a, x)
        g = inner.gradient(y, a)
    assert float(g[0]) < 0
    with pytest.raises(LookupError, match="IgammaGradA"):
        outer.gradient(g, a)
    assert "IgammaGradA" in _reason("gammainc", "tensorflow", "jvp_vjp")
    assert _reason("gammainc", "tensorflow", "vjp") is None
