"""The betainc record's declarations (conformance/ops/special_beta.py) hold on the installed
frameworks: JAX raises for the gradient in a and b and differentiates x twice (jax.scipy.special and
lax), TensorFlow's gradient in a and b is None and it has no half-precision kernel, and PyTorch has
no incomplete beta function. A framework release that changes one of these fails the test, so the
declaration is revisited."""

from __future__ import annotations

import pytest

from conformance.ops import RECORDS


class _Case:
    def __init__(self, dtype="float64"):
        self.dtype = dtype


def test_pytorch_has_no_incomplete_beta_function():
    torch = pytest.importorskip("torch")
    assert not hasattr(torch.special, "betainc") and not hasattr(torch, "betainc")
    assert not hasattr(torch.Tensor, "betainc")
    assert "PyTorch has no" in RECORDS["betainc"].spelling("torch")
    assert RECORDS["betainc"].nondiff == ("a", "b")


def test_jax_differentiates_x_twice_and_raises_for_a_and_b():
    jax = pytest.importorskip("jax")
    from jax.scipy.special import betainc

    assert float(jax.grad(jax.grad(betainc, argnums=2), argnums=2)(2.5, 1.5, 0.3)) > 0
    assert float(jax.grad(jax.lax.betainc, argnums=2)(2.5, 1.5, 0.3)) > 0
    for arg in (0, 1):
        with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not supported"):
            jax.grad(betainc, argnums=arg)(2.5, 1.5, 0.3)


def test_tensorflow_gives_no_gradient_in_a_and_b_and_no_half_kernel():
    tf = pytest.importorskip("tensorflow")
    a, b, x = (tf.constant([v], tf.float64) for v in (2.5, 1.5, 0.3))
    with tf.GradientTape() as tape:
        tape.watch([a, b, x])
        y = tf.math.betainc(a, b, x)
    ga, gb, gx = tape.gradient(y, [a, b, x])
    assert ga is None and gb is None and float(gx[0]) > 0
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.betainc(*(tf.constant([v], tf.float16) for v in (2.5, 1.5, 0.3)))
    why = RECORDS["betainc"].spelling("tensorflow").refuses
    assert "float16" in why(_Case("bfloat16"), "forward") and why(_Case("float32"), "vjp_vjp") is None
