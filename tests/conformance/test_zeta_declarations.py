"""The Hurwitz zeta records' declarations (conformance/ops/special.py) hold on the installed
frameworks: PyTorch has no derivative in s and no forward mode, TensorFlow's gradient in s is None,
JAX differentiates both arguments (jax.scipy.special.zeta) but not through lax.zeta, and PyTorch and
TensorFlow have no half-precision kernel; each refusal names the checks it covers. A framework
release that adds one of these fails the test, so the declaration is revisited."""

from __future__ import annotations

import pytest

from conformance.ops import RECORDS


class _Case:
    def __init__(self, dtype="float64"):
        self.dtype = dtype


def _reason(record, framework, check, dtype="float64", spelling=None):
    fn = (
        RECORDS[record].spelling(framework)
        if spelling is None
        else RECORDS[record].spellings[framework][spelling]
    )
    why = getattr(fn, "refuses", None)
    return None if why is None else why(_Case(dtype), check)


def test_pytorch_has_no_derivative_in_s_no_forward_mode_and_no_half_kernel():
    torch = pytest.importorskip("torch")
    s = torch.tensor([3.0], dtype=torch.float64, requires_grad=True)
    q = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        torch.autograd.grad(torch.special.zeta(s, q.detach()).sum(), s)
    with pytest.raises(NotImplementedError, match="forward AD with special_zeta"):
        torch.func.jvp(
            lambda t: torch.special.zeta(s.detach(), t), (q.detach(),), (torch.ones(1, dtype=torch.float64),)
        )
    with pytest.raises(NotImplementedError, match="zeta_cpu"):
        torch.special.zeta(s.detach().half(), q.detach().half())
    assert "'zeta' is not implemented" in _reason("zeta", "torch", "vjp")
    assert _reason("zeta", "torch", "forward") is None and _reason("zeta_q", "torch", "vjp_vjp") is None
    assert "forward AD" in _reason("zeta_q", "torch", "jvp_vjp")
    assert "float16" in _reason("zeta_q", "torch", "forward", "float16")


def test_tensorflow_gives_no_gradient_in_s_and_no_half_kernel():
    tf = pytest.importorskip("tensorflow")
    s, q = tf.constant([3.0], tf.float64), tf.constant([1.5], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([s, q])
        y = tf.math.zeta(s, q)
    gs, gq = tape.gradient(y, [s, q])
    assert gs is None and float(gq[0]) < 0
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.zeta(tf.constant([3.0], tf.float16), tf.constant([1.5], tf.float16))
    assert "None" in _reason("zeta", "tensorflow", "vjp")
    assert _reason("zeta_q", "tensorflow", "vjp_vjp") is None
    assert "float16" in _reason("zeta_q", "tensorflow", "forward", "bfloat16")


def test_jax_differentiates_both_arguments_but_not_through_lax():
    jax = pytest.importorskip("jax")
    from jax.scipy.special import zeta

    assert float(jax.grad(zeta, argnums=0)(3.0, 1.5)) < 0
    assert float(jax.grad(jax.grad(zeta, argnums=0), argnums=1)(3.0, 1.5)) > 0
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'zeta' not implemented"):
        jax.grad(jax.lax.zeta, argnums=1)(3.0, 1.5)
    assert _reason("zeta", "jax", "vjp_vjp") is None
    assert "lax.zeta" in _reason("zeta_q", "jax", "vjp", spelling="lax.zeta")
    assert _reason("zeta_q", "jax", "forward", spelling="lax.zeta") is None
